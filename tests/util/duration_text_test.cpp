#include "trainer/util/duration_text.h"

#include <catch2/catch.hpp>

using trainer::duration_text;

TEST_CASE("duration_text: seconds with a tenth under a minute, then minutes and seconds, then hours") {
  CHECK(duration_text(0) == "0.0 s");
  CHECK(duration_text(12.34) == "12.3 s");
  CHECK(duration_text(59.9) == "59.9 s");
  CHECK(duration_text(60) == "1m00s");
  CHECK(duration_text(245.7) == "4m05s");
  CHECK(duration_text(3599) == "59m59s");
  CHECK(duration_text(3600) == "1h00m");
  CHECK(duration_text(7625) == "2h07m");
  CHECK(duration_text(100 * 3600 + 59) == "100h00m");
}
