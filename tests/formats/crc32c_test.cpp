#include "trainer/formats/crc32c.h"

#include <string>

#include <catch2/catch.hpp>

using trainer::formats::crc32c;

TEST_CASE("crc32c matches the standard check values", "[formats]") {
  // RFC 3720 (iSCSI) B.4 and the common "123456789" check value of CRC-32C.
  const std::string digits = "123456789";
  CHECK(crc32c(digits.data(), digits.size()) == 0xE3069283u);
  const std::string zeros(32, '\0');
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  const std::string ones(32, '\xff');
  CHECK(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(crc32c(nullptr, 0) == 0u);
}

TEST_CASE("crc32c over pieces equals the crc of the whole, at every length and alignment", "[formats]") {
  // Long enough for the 8-byte hardware path, with tails of every length and unaligned starts.
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back(static_cast<char>((i * 131 + 7) % 251));
  for (size_t start : {0u, 1u, 3u, 7u}) {
    for (size_t split : {0u, 1u, 8u, 13u, 500u}) {
      const std::string whole = text.substr(start);
      const uint32_t expected = crc32c(whole.data(), whole.size());
      const uint32_t first = crc32c(whole.data(), split);
      CHECK(trainer::formats::crc32c_extend(first, whole.data() + split, whole.size() - split) == expected);
    }
  }
  // The 9-byte check value through the hardware path's 8-byte step plus one tail byte.
  const std::string digits = "123456789";
  CHECK(trainer::formats::crc32c_extend(crc32c(digits.data(), 4), digits.data() + 4, 5) == 0xE3069283u);
}
