// Python's unbounded ints: BigInt arithmetic and big int nodes. Expected values are Python's
// (hydra-venv python 3.11: str(int(...)), float(...), int(float), comparisons).
#include "trainer/config/big_int.h"

#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/node.h"
#include "trainer/config/python_str.h"

using trainer::config::BigInt;
using trainer::config::compare_int_float;
using trainer::config::int_to_double;
using trainer::config::Node;
using trainer::config::NodeType;

namespace {

BigInt dec(const std::string& text) {
  BigInt out;
  REQUIRE(BigInt::parse_decimal(text, out));
  return out;
}

}  // namespace

TEST_CASE("BigInt parses every base and prints Python's str()") {
  CHECK(dec("123456789012345678901234567890").to_string() == "123456789012345678901234567890");
  CHECK(dec("-000123456789012345678901234567890").to_string() == "-123456789012345678901234567890");
  CHECK(dec("+9223372036854775808").to_string() == "9223372036854775808");
  CHECK(dec("-0").to_string() == "0");
  CHECK(dec("1000000000000000000").to_string() == "1000000000000000000");  // a whole limb of zeros
  BigInt value;
  REQUIRE(BigInt::parse_digits("FFFFFFFFFFFFFFFFFFFF", 16, value));
  CHECK(value.to_string() == "1208925819614629174706175");  // int('F' * 20, 16)
  REQUIRE(BigInt::parse_digits("ffffffffffffffffffff", 16, value));
  CHECK(value.to_string() == "1208925819614629174706175");
  REQUIRE(BigInt::parse_digits("0777777777777777777777777", 8, value));
  CHECK(value.to_string() == "4722366482869645213695");
  REQUIRE(BigInt::parse_digits(std::string(65, '1'), 2, value));
  CHECK(value.to_string() == "36893488147419103231");  // 2**65 - 1
  CHECK_FALSE(BigInt::parse_digits("", 10, value));
  CHECK_FALSE(BigInt::parse_digits("12a", 10, value));
  CHECK_FALSE(BigInt::parse_digits("8", 8, value));
  CHECK_FALSE(BigInt::parse_digits("2", 2, value));
  CHECK_FALSE(BigInt::parse_digits("g", 16, value));
  CHECK_FALSE(BigInt::parse_decimal("-", value));
  CHECK_FALSE(BigInt::parse_decimal("1_000", value));
}

TEST_CASE("BigInt knows which values fit in int64") {
  int64_t small = 0;
  CHECK(dec("9223372036854775807").fits_int64(small));
  CHECK(small == std::numeric_limits<int64_t>::max());
  CHECK(dec("-9223372036854775808").fits_int64(small));
  CHECK(small == std::numeric_limits<int64_t>::min());
  CHECK(dec("-42").fits_int64(small));
  CHECK(small == -42);
  CHECK_FALSE(dec("9223372036854775808").fits_int64(small));
  CHECK_FALSE(dec("-9223372036854775809").fits_int64(small));
  CHECK_FALSE(dec("10000000000000000000").fits_int64(small));
  CHECK_FALSE(dec("99999999999999999999").fits_int64(small));
  CHECK(BigInt(std::numeric_limits<int64_t>::min()).to_string() == "-9223372036854775808");
}

TEST_CASE("BigInt adds, subtracts and compares with Python's results") {
  const BigInt a = dec("123456789012345678901234567890");
  const BigInt b = dec("-987654321098765432109876543210");
  CHECK((a + b).to_string() == "-864197532086419753208641975320");
  CHECK((a - b).to_string() == "1111111110111111111011111111100");
  CHECK((b - a).to_string() == "-1111111110111111111011111111100");
  CHECK((a - a).to_string() == "0");
  CHECK((a - a).negative() == false);
  CHECK((dec("999999999999999999999999999") + BigInt(1)).to_string() == "1000000000000000000000000000");
  CHECK((dec("1000000000000000000000000000") - BigInt(1)).to_string() == "999999999999999999999999999");
  CHECK(BigInt::compare(a, b) == 1);
  CHECK(BigInt::compare(b, a) == -1);
  CHECK(BigInt::compare(a, dec("123456789012345678901234567890")) == 0);
  CHECK(BigInt::compare(dec("-5"), dec("-40")) == 1);
  CHECK(BigInt::compare(dec("99999999999999999999"), dec("100000000000000000000")) == -1);
}

TEST_CASE("BigInt converts to and from floats like Python") {
  double value = 0;
  REQUIRE(dec("123456789012345678901234567890").to_double(value));
  CHECK(value == 1.2345678901234568e+29);
  CHECK(trainer::config::python_float_repr(value) == "1.2345678901234568e+29");
  REQUIRE(dec("-9007199254740993").to_double(value));  // ties to even
  CHECK(value == -9007199254740992.0);
  CHECK_FALSE(dec("1" + std::string(400, '0')).to_double(value));  // OverflowError in Python
  CHECK(BigInt::from_double(1e30).to_string() == "1000000000000000019884624838656");
  CHECK(BigInt::from_double(-1.5e20).to_string() == "-150000000000000000000");
  CHECK(BigInt::from_double(9223372036854775807.0).to_string() == "9223372036854775808");
  CHECK(BigInt::from_double(-2.75).to_string() == "-2");
  CHECK(BigInt::from_double(1.7976931348623157e308).to_string().size() == 309);
}

TEST_CASE("int/float comparisons are exact, as in Python") {
  // 1e30 == 1000000000000000019884624838656 exactly.
  CHECK(BigInt::compare(dec("1000000000000000019884624838656"), 1e30) == 0);
  CHECK(BigInt::compare(dec("1000000000000000019884624838657"), 1e30) == 1);
  CHECK(BigInt::compare(dec("1000000000000000000000000000000"), 1e30) == -1);
  CHECK(BigInt::compare(dec("-5"), -5.5) == 1);
  CHECK(BigInt::compare(dec("5"), 5.5) == -1);
  CHECK(BigInt::compare(dec("99999999999999999999"), HUGE_VAL) == -1);
  CHECK(BigInt::compare(dec("-99999999999999999999"), -HUGE_VAL) == 1);
  CHECK(BigInt::compare(dec("1"), std::nan("")) == 2);
  // 9223372036854775807 < 9223372036854775807.0 (== 2**63) although double(2**63-1) == 2**63.
  CHECK(compare_int_float(std::numeric_limits<int64_t>::max(), 9223372036854775807.0) == -1);
  CHECK(compare_int_float(3, 3.0) == 0);
  CHECK(compare_int_float(3, 2.5) == 1);
  CHECK(compare_int_float(3, std::nan("")) == 2);
}

TEST_CASE("int nodes beyond 64 bits keep their exact decimal text") {
  const Node big = Node::integer_text("+000123456789012345678901234567890");
  CHECK(big.type() == NodeType::kInt);
  CHECK(big.is_big_int());
  CHECK(big.int_text() == "123456789012345678901234567890");
  CHECK(big.as_int() == std::numeric_limits<int64_t>::max());  // saturates
  CHECK(Node::integer_text("-99999999999999999999").as_int() == std::numeric_limits<int64_t>::min());
  // Values within int64 become ordinary ints, so equality stays canonical.
  const Node small = Node::integer_text("-9223372036854775808");
  CHECK_FALSE(small.is_big_int());
  CHECK(small == Node::integer(std::numeric_limits<int64_t>::min()));
  CHECK(Node::integer(5).int_text() == "5");
  CHECK(big == Node::integer_text("123456789012345678901234567890"));
  CHECK(big != Node::integer_text("123456789012345678901234567891"));
  CHECK(big != Node::integer(std::numeric_limits<int64_t>::max()));
  CHECK(big != Node::string("123456789012345678901234567890"));
  CHECK(trainer::config::python_str(big) == "123456789012345678901234567890");
  Node list = Node::list();
  list.push_back(Node::integer(1));
  list.push_back(Node::integer_text("-18446744073709551616"));
  CHECK(trainer::config::python_str(list) == "[1, -18446744073709551616]");
  CHECK(BigInt::of(big).to_string() == "123456789012345678901234567890");
  CHECK(BigInt::of(Node::integer(-7)).to_string() == "-7");
  double value = 0;
  REQUIRE(int_to_double(big, value));
  CHECK(value == 1.2345678901234568e+29);
  CHECK(compare_int_float(big, 1.2345678901234568e+29) == 1);
}

TEST_CASE("merge replaces big ints like any scalar") {
  Node destination = Node::map();
  destination.set("a", Node::integer(1));
  destination.set("b", Node::integer_text("1180591620717411303424"));
  Node source = Node::map();
  source.set("a", Node::integer_text("-1180591620717411303424"));
  trainer::config::merge_into(destination, source);
  CHECK(destination.find("a")->int_text() == "-1180591620717411303424");
  CHECK(destination.find("b")->int_text() == "1180591620717411303424");
  source.set("b", Node::integer(2));
  trainer::config::merge_into(destination, source);
  CHECK_FALSE(destination.find("b")->is_big_int());
  CHECK(destination.find("b")->as_int() == 2);
}
