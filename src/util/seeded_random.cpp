#include "trainer/util/seeded_random.h"

namespace trainer {
namespace {

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t state = a;
  const uint64_t first = splitmix64(&state);
  state = first ^ b;
  return splitmix64(&state);
}

uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) { return mix_seed(mix_seed(a, b), c); }

SeededRandom::SeededRandom(uint64_t seed) {
  for (auto& word : state_) word = splitmix64(&seed);
}

uint64_t SeededRandom::next() {
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

uint64_t SeededRandom::below(uint64_t bound) {
  // Rejecting the first (2^64 mod bound) values removes the modulo bias.
  const uint64_t threshold = (0 - bound) % bound;
  uint64_t r = next();
  while (r < threshold) r = next();
  return r % bound;
}

double SeededRandom::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

}  // namespace trainer
