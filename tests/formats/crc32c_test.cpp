#include "trainer/formats/crc32c.h"

#include <catch2/catch.hpp>
#include <string>

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
