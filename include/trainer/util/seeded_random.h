// Random numbers that are the same on every machine, compiler and library version: xoshiro256**
// seeded through SplitMix64 (std::uniform_int_distribution and friends differ between standard
// libraries), and a mixer that derives per-epoch and per-sample seeds from the run's seed. The
// sampler's shuffles and the image transforms draw from it, so a run resumed anywhere sees the
// same data.
#pragma once

#include <cstdint>

namespace trainer {

// Mixes values into a well-spread 64-bit seed (SplitMix64 steps).
uint64_t mix_seed(uint64_t a, uint64_t b);
uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c);

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed);

  uint64_t next();
  // Uniform in [0, bound), without modulo bias; bound must be positive.
  uint64_t below(uint64_t bound);
  // Uniform in [0, 1), 53 random bits.
  double uniform();
  // Uniform in [low, high).
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

 private:
  uint64_t state_[4];
};

}  // namespace trainer
