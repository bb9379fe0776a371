#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord framing in TensorBoard event files.

#include <cstddef>
#include <cstdint>

namespace trainer::formats {

uint32_t crc32c(const void* data, size_t size);

// Continues a CRC over more bytes: crc32c_extend(crc32c(a), b) == crc32c(a followed by b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

// TFRecord stores checksums "masked" so that a CRC of data holding CRCs stays well distributed.
inline uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace trainer::formats
