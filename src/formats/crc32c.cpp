#include "trainer/formats/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace trainer::formats {
namespace {

// Reflected Castagnoli polynomial 0x1EDC6F41. Debian 12 packages no CRC-32C library; a table is
// a few lines and is checked against the standard test vectors.
std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    table[i] = crc;
  }
  return table;
}

uint32_t crc32c_table(uint32_t crc, const unsigned char* bytes, size_t size) {
  static const std::array<uint32_t, 256> table = make_table();
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xFFu] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// SSE 4.2's crc32 instruction computes the same polynomial 8 bytes at a time: checkpoints of a
// few hundred MB are checksummed on every save and load, where the table ran at ~0.4 GB/s.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const unsigned char* bytes, size_t size) {
  uint64_t wide = crc;
  for (; size >= 8; size -= 8, bytes += 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    wide = _mm_crc32_u64(wide, word);
  }
  crc = static_cast<uint32_t>(wide);
  for (; size > 0; --size, ++bytes) crc = _mm_crc32_u8(crc, *bytes);
  return crc;
}

bool has_sse42() {
  static const bool supported = __builtin_cpu_supports("sse4.2");
  return supported;
}
#endif

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  crc ^= 0xFFFFFFFFu;
#if defined(__x86_64__)
  if (has_sse42()) return crc32c_sse42(crc, bytes, size) ^ 0xFFFFFFFFu;
#endif
  return crc32c_table(crc, bytes, size) ^ 0xFFFFFFFFu;
}

uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

}  // namespace trainer::formats
