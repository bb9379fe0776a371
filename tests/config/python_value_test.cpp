// Python's int() and float() of text, number comparison and == over config values. Expected values
// are Python 3.11's (int(s), float(s), a < b, a == b), and Hydra 1.3.2's where an override shows
// them.
#include "trainer/config/python_value.h"

#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/node.h"

using trainer::config::is_python_number;
using trainer::config::Node;
using trainer::config::python_compare_numbers;
using trainer::config::python_equal;
using trainer::config::python_float_from_text;
using trainer::config::python_float_syntax;
using trainer::config::python_int_from_text;
using trainer::config::python_int_syntax;

namespace {

bool int_of(const std::string& text, Node& out) { return python_int_from_text(text, out); }

double float_of(const std::string& text) {
  double value = -12345.0;
  REQUIRE(python_float_from_text(text, value));
  return value;
}

bool float_fails(const std::string& text) {
  double value = 0;
  return !python_float_from_text(text, value);
}

}  // namespace

TEST_CASE("int() of a text: whitespace, sign, underscores between digits, any size") {
  Node n;
  REQUIRE(int_of(" -1_000 ", n));
  CHECK(n == Node::integer(-1000));
  REQUIRE(int_of("+007", n));
  CHECK(n == Node::integer(7));
  REQUIRE(int_of("123456789012345678901234567890", n));
  CHECK(n.is_big_int());
  CHECK(n.int_text() == "123456789012345678901234567890");
  REQUIRE(int_of("-9223372036854775808", n));
  CHECK(n == Node::integer(std::numeric_limits<int64_t>::min()));
  REQUIRE(int_of("9223372036854775808", n));
  CHECK(n.int_text() == "9223372036854775808");
  for (const char* bad : {"", " ", "+", "1.0", "1e3", "_1", "1_", "1__0", "0x10", "one", "1 2"}) {
    INFO(bad);
    CHECK_FALSE(int_of(bad, n));
  }
}

TEST_CASE("float() of a text: forms, words, underscores, whitespace") {
  CHECK(float_of("1.5") == 1.5);
  CHECK(float_of(" -2.5e-3\n") == -0.0025);
  CHECK(float_of("+.5") == 0.5);
  CHECK(float_of("5.") == 5.0);
  CHECK(float_of("1_0.2_5") == 10.25);
  CHECK(float_of("1e1_0") == 1e10);
  CHECK(float_of("7") == 7.0);
  CHECK(float_of("InFiNiTy") == std::numeric_limits<double>::infinity());
  CHECK(float_of("-inf") == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(float_of("NaN")));
  CHECK(float_of("1e-310") == 1e-310);  // subnormal, not zero
  for (const char* bad :
       {"", ".", "e5", "1e", "1.2.3", "_1.5", "1_.5", "1__0.5", "nan(1)", "0x1p3", "--5", "1,5", "infinityy", "1 .5"}) {
    INFO(bad);
    CHECK(float_fails(bad));
  }
}

TEST_CASE("float() beyond the double range gives inf, below it zero, with the sign") {
  // Hydra 1.3.2: x=999...9.0 (400 digits) -> inf, x=111...1e-20 (330 digits) -> inf.
  CHECK(float_of(std::string(400, '9') + ".0") == std::numeric_limits<double>::infinity());
  CHECK(float_of("-" + std::string(400, '9')) == -std::numeric_limits<double>::infinity());
  CHECK(float_of(std::string(330, '1') + "e-20") == std::numeric_limits<double>::infinity());
  CHECK(float_of("1e400") == std::numeric_limits<double>::infinity());
  CHECK(float_of("0.00001e99999999999999999999999") == std::numeric_limits<double>::infinity());
  const double tiny = float_of("1e-400");
  CHECK(tiny == 0.0);
  CHECK_FALSE(std::signbit(tiny));
  const double negative_tiny = float_of("-0." + std::string(400, '0') + "1");
  CHECK(negative_tiny == 0.0);
  CHECK(std::signbit(negative_tiny));
  CHECK(float_of("1000e-99999999999999999999") == 0.0);
}

TEST_CASE("the grammar alone: what int() and float() accept once the text is stripped") {
  for (const char* ok : {"0", "-12", "+1_000", "007"}) {
    INFO(ok);
    CHECK(python_int_syntax(ok));
    CHECK(python_float_syntax(ok));
  }
  for (const char* ok : {"1.", ".5", "-1_0.2_5e-1_0", "1E5", "INF", "-infinity", "nan"}) {
    INFO(ok);
    CHECK(python_float_syntax(ok));
    CHECK_FALSE(python_int_syntax(ok));
  }
  for (const char* bad : {"", "+", "1_", "_1", "1__0", "1 2", " 1", "1e", ".", "e5", "1._5", "0x1"}) {
    INFO(bad);
    CHECK_FALSE(python_int_syntax(bad));
    CHECK_FALSE(python_float_syntax(bad));
  }
}

TEST_CASE("numbers compare exactly across bool, int and float") {
  const Node big = Node::integer_text("1000000000000000019884624838657");
  CHECK(python_compare_numbers(Node::integer(1), Node::floating(1.0)) == 0);
  CHECK(python_compare_numbers(Node::boolean(true), Node::integer(1)) == 0);
  CHECK(python_compare_numbers(Node::boolean(false), Node::floating(-0.5)) == 1);
  CHECK(python_compare_numbers(Node::integer(9007199254740993), Node::floating(9007199254740992.0)) == 1);
  CHECK(python_compare_numbers(big, Node::floating(1e30)) == 1);
  CHECK(python_compare_numbers(Node::floating(1e30), big) == -1);
  CHECK(python_compare_numbers(big, Node::integer(5)) == 1);
  CHECK(python_compare_numbers(Node::integer(-3), Node::integer(2)) == -1);
  const Node nan = Node::floating(std::nan(""));
  CHECK(python_compare_numbers(nan, Node::integer(1)) == 2);
  CHECK(python_compare_numbers(Node::integer(1), nan) == 2);
  CHECK(python_compare_numbers(nan, nan) == 2);
  CHECK(is_python_number(Node::boolean(true)));
  CHECK_FALSE(is_python_number(Node::string("1")));
  CHECK_FALSE(is_python_number(Node()));
}

TEST_CASE("== between config values") {
  CHECK(python_equal(Node::integer(1), Node::floating(1.0)));
  CHECK(python_equal(Node::boolean(true), Node::floating(1.0)));
  CHECK_FALSE(python_equal(Node::floating(std::nan("")), Node::floating(std::nan(""))));
  CHECK_FALSE(python_equal(Node::string("1"), Node::integer(1)));
  CHECK(python_equal(Node(), Node()));
  Node a = Node::map();
  a.set("x", Node::integer(1));
  a.set("y", Node::string("s"));
  Node b = Node::map();
  b.set("y", Node::string("s"));
  b.set("x", Node::floating(1.0));
  CHECK(python_equal(a, b));  // dicts: any order
  b.set("z", Node());
  CHECK_FALSE(python_equal(a, b));
  Node l1 = Node::list();
  l1.push_back(Node::integer(1));
  l1.push_back(Node::boolean(false));
  Node l2 = Node::list();
  l2.push_back(Node::floating(1.0));
  l2.push_back(Node::integer(0));
  CHECK(python_equal(l1, l2));
  l2.push_back(Node());
  CHECK_FALSE(python_equal(l1, l2));
}
