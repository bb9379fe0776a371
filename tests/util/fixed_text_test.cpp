// fixed_text: a fixed count of decimals, rounded, as the log lines print numbers.
#include "trainer/util/fixed_text.h"

#include <limits>

#include <catch2/catch.hpp>

TEST_CASE("numbers get exactly the decimals asked for") {
  CHECK(trainer::fixed_text(12.3456, 2) == "12.35");
  CHECK(trainer::fixed_text(2.0, 3) == "2.000");
  CHECK(trainer::fixed_text(0.5, 0) == "0");  // round half to even, as printf does
  CHECK(trainer::fixed_text(-1.25, 1) == "-1.2");
  CHECK(trainer::fixed_text(std::numeric_limits<double>::infinity(), 2) == "inf");
}
