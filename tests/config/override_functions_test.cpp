// Hydra's grammar functions called directly on parsed values (call_function), plus the casts of big
// ints through the parser. Expected values are Hydra 1.3.2's (OverridesParser.create()
// .parse_overrides([text])[0].value()); so are the messages Python itself words (int(), float(),
// sort's '<', bind's argument errors). The others are trainer's own, naming the fix.
#include "../../src/config/override_functions.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/node.h"
#include "trainer/config/override.h"

#include "override_value_builders.h"

namespace {

using trainer::config::Node;
using trainer::config::Override;
using trainer::config::parse_override;
using namespace trainer::config::override_detail;
using namespace trainer::config::override_detail::testing;

Value call(const std::string& name, std::vector<Value> args, KeywordArguments kwargs = {}) {
  std::optional<Value> out = call_function(name, args, kwargs);
  REQUIRE(out.has_value());
  return *out;
}

FunctionFailure failure_of(const std::string& name, std::vector<Value> args, KeywordArguments kwargs = {}) {
  try {
    call_function(name, args, kwargs);
  } catch (const FunctionFailure& failure) {
    return failure;
  }
  FAIL("no failure from " << name << "()");
  return {};
}

std::vector<std::string> rendered(const Value& sweep) {
  std::vector<std::string> out;
  for (const Value& item : sweep.items) out.push_back(render(item));
  return out;
}

}  // namespace

TEST_CASE("unknown names are no function; direct quoted arguments are unquoted") {
  std::vector<Value> args{Value::integer(1)};
  KeywordArguments kwargs;
  CHECK_FALSE(call_function("nosuchfn", args, kwargs).has_value());
  const Value choice = call("choice", {quoted("a,b"), list_of({quoted("x")})});
  CHECK(choice.items[0].kind == Value::kStr);
  CHECK(choice.items[1].items[0].kind == Value::kQuoted);  // inside a list it stays quoted
}

TEST_CASE("casts convert values, list and dict items, and sweeps") {
  CHECK(render(call("int", {Value::floating(-2.7)})) == "-2");
  CHECK(render(call("float", {Value::str(" 1_0.5 ")})) == "10.5");
  CHECK(render(call("str", {Value::boolean(true)})) == "true");
  CHECK(render(call("str", {Value::floating(1e-5)})) == "1e-05");
  CHECK(render(call("bool", {Value::str("FALSE")})) == "False");
  CHECK(render(call("int", {}, {{"value", Value::str("7")}})) == "7");
  CHECK(render(call("int", {list_of({Value::floating(1.5), Value::str("2")})})) == "[1,2]");
  const Value several = call("float", {Value::integer(1), Value::integer(2)});
  CHECK(several.kind == Value::kChoice);
  CHECK(several.simple_form);
  CHECK(rendered(several) == std::vector<std::string>{"1.0", "2.0"});
  Value range = call("range", {Value::integer(1), Value::integer(3)});
  range = call("float", {range});
  CHECK(rendered(range) == std::vector<std::string>{"1.0", "3.0", "1.0"});
  const Value interval = call("int", {call("interval", {Value::floating(0.5), Value::integer(10)})});
  CHECK(interval.int_interval);
  CHECK(interval.items[0].f == 0.0);
  CHECK(interval.items[1].f == 10.0);

  CHECK(failure_of("int", {Value::floating(HUGE_VAL)}).problem == "cannot convert float infinity to integer");
  CHECK(failure_of("int", {Value::str("1.5")}).problem == "invalid literal for int() with base 10: '1.5'");
  CHECK(failure_of("float", {Value::str("x")}).problem == "could not convert string to float: 'x'");
  const FunctionFailure bad_bool = failure_of("bool", {Value::str("yes")});
  CHECK(bad_bool.problem == "Cannot cast 'yes' to bool");
  CHECK(bad_bool.fix == "only true and false (any case) convert to bool");
  CHECK(failure_of("str", {range}).problem == "Range can only be cast to int or float");
  CHECK(failure_of("str", {interval}).problem == "Intervals cannot be cast to str");
  CHECK(failure_of("int", {Value()}).problem == "cannot cast null with int()");
  CHECK(failure_of("int", {}).problem == "int() needs a value");
}

TEST_CASE("choice, range and interval build their sweeps") {
  const Value choice = call("choice", {Value::integer(1), Value::str("a")});
  CHECK(choice.kind == Value::kChoice);
  CHECK_FALSE(choice.simple_form);
  CHECK(failure_of("choice", {}).problem == "empty choice is not legal");
  CHECK(failure_of("choice", {Value()}).problem ==
        "mismatch type argument args[0]: NoneType is not a value choice() can hold");
  CHECK(failure_of("choice", {choice}).problem == "nesting choices is not supported");

  CHECK(rendered(call("range", {Value::integer(5)})) == std::vector<std::string>{"0", "5", "1"});
  CHECK(rendered(call("range", {Value::boolean(true), Value::integer(4)}, {{"step", Value::integer(2)}})) ==
        std::vector<std::string>{"1", "4", "2"});
  CHECK(rendered(call("range", {Value::integer(1), Value()})) == std::vector<std::string>{"0", "1", "1"});
  CHECK(failure_of("range", {}).problem == "missing a required argument: 'start'");
  CHECK(failure_of("range", {Value::integer(1)}, {{"start", Value::integer(2)}}).problem ==
        "multiple values for argument 'start'");
  CHECK(failure_of("range", {Value::str("a")}).problem ==
        "mismatch type argument start: str is incompatible with Union[int, float]");

  const Value interval = call("interval", {Value::integer(1), Value::floating(2.5)});
  CHECK(interval.kind == Value::kInterval);
  CHECK(interval.items[0].kind == Value::kFloat);
  CHECK(failure_of("interval", {Value::integer(1)}).problem == "missing a required argument: 'end'");
}

TEST_CASE("tag, sort, shuffle and glob") {
  const Value tagged = call("tag", {Value::str("lr"), Value::str("log"), Value::str("lr"),
                                    call("interval", {Value::integer(0), Value::integer(1)})});
  CHECK(tagged.tags == std::vector<std::string>{"log", "lr"});
  CHECK(failure_of("tag", {Value::str("log"), Value::integer(1)}).problem ==
        "Last argument to tag() must be a choice(), range() or interval()");

  CHECK(rendered(call("sort", {Value::integer(3), Value::floating(1.5), Value::boolean(true)})) ==
        std::vector<std::string>{"True", "1.5", "3"});
  CHECK(rendered(call("sort", {Value::str("b"), Value::str("a")}, {{"reverse", Value::boolean(true)}})) ==
        std::vector<std::string>{"b", "a"});
  // A range runs the other way instead of being listed: range(9,0,-3) sorts to range(3,12,3).
  CHECK(rendered(call("sort", {call("range", {Value::integer(9), Value::integer(0), Value::integer(-3)})})) ==
        std::vector<std::string>{"3", "12", "3"});
  CHECK(render(call("sort", {list_of({Value::integer(2), Value::integer(1)})})) == "[1,2]");
  CHECK(failure_of("sort", {Value::str("a"), Value::integer(1)}).problem ==
        "'<' not supported between instances of 'int' and 'str'");
  CHECK(failure_of("sort", {Value::integer(1)}, {{"reverse", Value::integer(1)}}).problem ==
        "mismatch type argument reverse: int is incompatible with bool");

  const Value shuffled = call("shuffle", {Value::str("a"), Value::str("b")});
  CHECK(shuffled.kind == Value::kChoice);
  CHECK(shuffled.shuffle);
  CHECK(render(call("shuffle", {Value::str("a")})) == "[a]");
  CHECK(failure_of("shuffle", {}, {{"list", Value::integer(1)}}).problem == "shuffle(list=...) needs a list");

  const Value glob = call("glob", {list_of({Value::str("m*"), quoted("p*")})}, {{"exclude", Value::str("postgres")}});
  CHECK(glob.kind == Value::kGlob);
  CHECK(glob.include == std::vector<std::string>{"m*", "p*"});
  CHECK(glob.exclude == std::vector<std::string>{"postgres"});
  CHECK(failure_of("glob", {list_of({Value::integer(1)})}).problem == "glob include patterns must be strings, got int");
}

TEST_CASE("casts of big ints follow Python's float(), str() and bool()") {
  CHECK(parse_override("x=float(123456789012345678901234567890)").value == Node::floating(1.2345678901234568e+29));
  CHECK(parse_override("x=float(123456789012345678901234567890)").value_text == "1.2345678901234568e+29");
  CHECK(parse_override("x=float(12345678901234567890123456789012345678901234567890)").value_text ==
        "1.2345678901234567e+49");
  CHECK(parse_override("x=float('123456789012345678901234567890')").value_text == "1.2345678901234568e+29");
  CHECK(parse_override("x=str(123456789012345678901234567890)").value ==
        Node::string("123456789012345678901234567890"));
  CHECK(parse_override("x=bool(123456789012345678901234567890)").value == Node::boolean(true));
  CHECK(parse_override("x=bool(-99999999999999999999)").value == Node::boolean(true));
  const Override interval = parse_override("x=interval(0,123456789012345678901234567890)");
  CHECK(interval.sweep.interval_end == 1.2345678901234568e+29);
}
