// The override grammar's parsed values on their own: Python's type names, == and <, the text the
// basic sweeper writes back, and the config node a value becomes. Expected texts are Hydra
// 1.3.2's (Override.get_value_element_as_str), the comparisons Python's.
#include "../../src/config/override_value.h"

#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/big_int.h"
#include "trainer/config/node.h"

#include "override_value_builders.h"

namespace {

using trainer::config::BigInt;
using trainer::config::Node;
using trainer::config::NodeType;
using namespace trainer::config::override_detail;
using namespace trainer::config::override_detail::testing;

Value big(const char* decimal) {
  BigInt out;
  REQUIRE(BigInt::parse_decimal(decimal, out));
  return Value::integer(out);
}

}  // namespace

TEST_CASE("ints: small ones stay int64, big ones keep their decimal text") {
  const Value small = Value::integer(Node::integer(-5));
  CHECK(small.kind == Value::kInt);
  CHECK(small.int_text() == "-5");
  CHECK_FALSE(small.is_big());
  const Value huge = big("-123456789012345678901234567890");
  CHECK(huge.is_big());
  CHECK(huge.i == std::numeric_limits<int64_t>::min());
  CHECK(huge.int_text() == "-123456789012345678901234567890");
  CHECK(Value::integer(Node::integer_text("-123456789012345678901234567890")).int_text() == huge.int_text());
  CHECK(big("9223372036854775807").is_big() == false);
  CHECK(huge.number() == -1.2345678901234568e+29);
  CHECK(big(("1" + std::string(400, '0')).c_str()).number() == HUGE_VAL);
}

TEST_CASE("render writes values back as Hydra's sweeper does") {
  CHECK(render(Value()) == "null");
  CHECK(render(Value::boolean(true)) == "True");
  CHECK(render(Value::floating(1e3)) == "1000.0");
  CHECK(render(Value::floating(1e-5)) == "1e-05");
  CHECK(render(big("123456789012345678901234567890")) == "123456789012345678901234567890");
  CHECK(render(Value::str("a,b (c)=d")) == "a\\,b\\ \\(c\\)\\=d");
  CHECK(render(quoted("it's", '\'')) == "'it\\'s'");
  CHECK(render(quoted("a\\", '"')) == "\"a\\\\\"");
  CHECK(render(quoted("a\\b", '\'')) == "'a\\b'");
  CHECK(render(list_of({Value::integer(1), Value::str("x y")})) == "[1,x\\ y]");
  CHECK(render(dict_of({Value::str("a"), Value::integer(1), Value::integer(2), Value()})) == "{a:1,2:null}");
  Value choice;
  choice.kind = Value::kChoice;
  CHECK(render(choice).empty());
}

TEST_CASE("to_node: strings alike, dict keys keep their type") {
  CHECK(to_node(quoted("x", '"')) == Node::string("x"));
  CHECK(to_node(big("123456789012345678901234567890")) == Node::integer_text("123456789012345678901234567890"));
  const Node dict = to_node(dict_of({Value::integer(1), Value::str("a"), Value(), Value::str("b"), Value::floating(2.5),
                                     Value::str("c"), Value::boolean(false), Value::str("d")}));
  REQUIRE(dict.entries().size() == 4);
  CHECK(dict.entries()[0].key == "1");
  CHECK(dict.entries()[0].key_type == NodeType::kInt);
  CHECK(dict.entries()[1].key == "null");
  CHECK(dict.entries()[1].key_type == NodeType::kNull);
  CHECK(dict.entries()[2].key == "2.5");
  CHECK(dict.entries()[2].key_type == NodeType::kFloat);
  CHECK(dict.entries()[3].key == "false");
  CHECK(dict.entries()[3].key_type == NodeType::kBool);
  Value range;
  range.kind = Value::kRange;
  CHECK(to_node(range).is_null());
}

TEST_CASE("== and < follow Python, QuotedString included") {
  CHECK(values_equal(Value::integer(1), Value::floating(1.0)));
  CHECK(values_equal(Value::boolean(true), Value::integer(1)));
  CHECK_FALSE(values_equal(Value::str("a"), quoted("a", '\'')));
  CHECK_FALSE(values_equal(quoted("a", '"'), quoted("a", '\'')));
  CHECK(values_equal(quoted("a", '"'), quoted("a", '"')));
  CHECK(values_equal(list_of({Value::integer(1)}), list_of({Value::floating(1.0)})));
  CHECK(compare_numbers(big("1000000000000000019884624838657"), Value::floating(1e30)) == 1);
  CHECK(compare_numbers(Value::floating(std::nan("")), Value::integer(0)) == 2);
  CHECK(value_less(Value::integer(1), Value::floating(1.5)));
  CHECK(value_less(Value::str("B"), Value::str("a")));
  CHECK(value_less(list_of({Value::integer(1), Value::integer(2)}), list_of({Value::integer(1), Value::integer(3)})));
  CHECK(value_less(list_of({Value::integer(1)}), list_of({Value::integer(1), Value::integer(0)})));
  try {
    value_less(Value::str("a"), Value::integer(1));
    FAIL("ordered a str and an int");
  } catch (const NotOrderable& e) {
    CHECK(e.message == "'<' not supported between instances of 'str' and 'int'");
  }
  CHECK_THROWS_AS(value_less(quoted("a", '\''), quoted("b", '\'')), NotOrderable);
}

TEST_CASE("Python type names") {
  CHECK(std::string(python_type_name(Value())) == "NoneType");
  CHECK(std::string(python_type_name(quoted("a", '\''))) == "QuotedString");
  CHECK(std::string(python_type_name(dict_of({}))) == "dict");
  Value glob;
  glob.kind = Value::kGlob;
  CHECK(std::string(python_type_name(glob)) == "Glob");
}
