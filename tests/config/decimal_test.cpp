// Python's decimal arithmetic behind Hydra's float range(): exact conversion of doubles and ints,
// comparison, and addition rounded to 28 significant digits, half even. Expected values from
// Python 3: decimal.Decimal(x), Decimal(a) + Decimal(b), float(Decimal(...)).
#include "../../src/config/decimal.h"

#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

namespace {

using trainer::config::detail::Decimal;

// The digits as Python prints Decimal: sign, digits, exponent ("-123E-2" for -1.23).
std::string text_of(const Decimal& d) {
  if (d.digits.empty()) return "0";
  std::string out = d.negative ? "-" : "";
  for (size_t k = d.digits.size(); k-- > 0;) out += static_cast<char>('0' + d.digits[k]);
  if (d.exponent != 0) out += "E" + std::to_string(d.exponent);
  return out;
}

}  // namespace

TEST_CASE("Decimal(float) is the double's exact value") {
  // Decimal(0.1) == Decimal('0.1000000000000000055511151231257827021181583404541015625')
  CHECK(text_of(Decimal::exact(0.1)) == "1000000000000000055511151231257827021181583404541015625E-55");
  CHECK(text_of(Decimal::exact(3.3)) == "329999999999999982236431605997495353221893310546875E-50");
  CHECK(text_of(Decimal::exact(-2.5)) == "-25E-1");
  CHECK(text_of(Decimal::exact(1e20)) == "1E20");
  CHECK(text_of(Decimal::exact(0.0)) == "0");
  CHECK(Decimal::exact(-0.0).negative);
}

TEST_CASE("Decimal(int) is exact at any size") {
  CHECK(text_of(Decimal::of_int("-123")) == "-123");
  CHECK(text_of(Decimal::of_int("1200")) == "12E2");
  CHECK(text_of(Decimal::of_int("123456789012345678901234567890")) == "12345678901234567890123456789E1");
  CHECK(text_of(Decimal::of_int("0")) == "0");
}

TEST_CASE("compare orders by value, compare_abs by magnitude") {
  CHECK(Decimal::compare(Decimal::exact(0.1), Decimal::exact(0.2)) == -1);
  CHECK(Decimal::compare(Decimal::exact(2.0), Decimal::of_int("2")) == 0);
  CHECK(Decimal::compare(Decimal::exact(-3.0), Decimal::exact(1.0)) == -1);
  CHECK(Decimal::compare(Decimal::exact(-3.0), Decimal::exact(-4.0)) == 1);
  CHECK(Decimal::compare_abs(Decimal::exact(-3.0), Decimal::exact(1.0)) == 1);
  CHECK(Decimal::compare(Decimal::of_int("0"), Decimal::exact(-0.0)) == 0);
  CHECK(Decimal::compare(Decimal::exact(0.1), Decimal::exact(0.1)) == 0);
}

TEST_CASE("add rounds to 28 significant digits, half even") {
  // Decimal(0.1) + Decimal(0.2) == Decimal('0.3000000000000000166533453694')
  const Decimal sum = Decimal::add(Decimal::exact(0.1), Decimal::exact(0.2));
  CHECK(text_of(sum) == "3000000000000000166533453694E-28");
  CHECK(sum.to_double() == 0.30000000000000004);
  // 3 * Decimal(3.3): the 28-digit rounding lands on 9.9, not on the double above it.
  Decimal x = Decimal::exact(0.0);
  for (int k = 0; k < 3; ++k) x = Decimal::add(x, Decimal::exact(3.3));
  CHECK(x.to_double() == 9.9);
  CHECK(text_of(Decimal::add(Decimal::of_int("5"), Decimal::of_int("-5"))) == "0");
  CHECK(text_of(Decimal::add(Decimal::exact(-1.5), Decimal::exact(0.25))) == "-125E-2");
  // Half even: ...5 exactly at the 29th digit rounds to the even neighbour.
  CHECK(text_of(Decimal::add(Decimal::of_int("10000000000000000000000000005"), Decimal::of_int("0"))) == "1E28");
  CHECK(text_of(Decimal::add(Decimal::of_int("10000000000000000000000000015"), Decimal::of_int("0"))) ==
        "1000000000000000000000000002E1");
}

TEST_CASE("to_double is the nearest double; beyond the range inf or zero") {
  CHECK(Decimal::exact(0.1).to_double() == 0.1);
  CHECK(Decimal::of_int("-123456789012345678901234567890").to_double() == -1.2345678901234568e+29);
  Decimal huge = Decimal::of_int("1");
  huge.exponent = 400;
  CHECK(huge.to_double() == std::numeric_limits<double>::infinity());
  huge.negative = true;
  CHECK(huge.to_double() == -std::numeric_limits<double>::infinity());
  Decimal tiny = Decimal::of_int("1");
  tiny.exponent = -400;
  CHECK(tiny.to_double() == 0.0);
  CHECK(Decimal::of_int("0").to_double() == 0.0);
}
