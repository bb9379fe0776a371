// Unit tests of the override API: kinds, keys and packages, typed values, value_text, sweep
// fields (and, for big ints, what they expand to), error messages, parse_overrides and parse
// speed. The full grammar is covered case by case against Hydra in override_conformance_test.cpp.
#include "trainer/config/override.h"

#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/sweep_expansion.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::Node;
using trainer::config::NodeType;
using trainer::config::Override;
using trainer::config::OverrideKind;
using trainer::config::parse_override;
using trainer::config::parse_overrides;
using trainer::config::sweep_value_texts;
using trainer::config::SweepKind;

std::vector<std::string> texts(const std::string& text, const std::vector<std::string>* options = nullptr) {
  std::mt19937_64 rng(0);
  return sweep_value_texts(parse_override(text), options, rng);
}

trainer::Error error_of(const std::string& text) {
  try {
    parse_override(text);
  } catch (const trainer::Error& e) {
    return e;
  }
  FAIL("accepted: " << text);
  return trainer::Error("", "");
}

}  // namespace

TEST_CASE("prefix, key and package") {
  Override o = parse_override("+db@backup=mysql");
  CHECK(o.kind == OverrideKind::kAdd);
  CHECK(std::string(o.prefix()) == "+");
  CHECK(o.key == "db");
  CHECK(o.package == std::optional<std::string>("backup"));
  CHECK(o.key_with_package() == "db@backup");
  CHECK(o.text == "+db@backup=mysql");

  CHECK(std::string(parse_override("++a.b=1").prefix()) == "++");
  CHECK(std::string(parse_override("~a").prefix()) == "~");
  CHECK(std::string(parse_override("a=1").prefix()) == "");
  CHECK(parse_override("a=1").key_with_package() == "a");
  Override empty_pkg = parse_override("db@=x");
  CHECK(empty_pkg.package == std::optional<std::string>(""));
  CHECK(empty_pkg.key_with_package() == "db@");
  CHECK(parse_override("hydra/launcher=basic").key == "hydra/launcher");
  CHECK(parse_override("a_b.c-d.0.$x=1").key == "a_b.c-d.0.$x");
}

TEST_CASE("delete with and without a value") {
  Override bare = parse_override("~x");
  CHECK(bare.kind == OverrideKind::kDelete);
  CHECK_FALSE(bare.has_value);
  CHECK(bare.value.is_null());
  CHECK(bare.value_text == "null");
  Override valued = parse_override("~x=10");
  CHECK(valued.has_value);
  CHECK(valued.value == Node::integer(10));
}

TEST_CASE("values are typed by the grammar, not by YAML") {
  CHECK(parse_override("k=1_000").value == Node::integer(1000));
  CHECK(parse_override("k=010").value == Node::string("010"));
  CHECK(parse_override("k=yes").value == Node::string("yes"));
  CHECK(parse_override("k=1e3").value == Node::floating(1000.0));
  CHECK(parse_override("k=NuLL").value.is_null());
  CHECK(parse_override("k=").value == Node::string(""));
  CHECK(parse_override("k= a b ").value == Node::string("a b"));
  CHECK(parse_override("k=${a.b}").value.is_interpolation());
  Node dict = parse_override("k={1: a, null: b, 2.5: c, true: d, x: e}").value;
  REQUIRE(dict.entries().size() == 5);
  CHECK(dict.entries()[0].key == "1");
  CHECK(dict.entries()[0].key_type == NodeType::kInt);
  CHECK(dict.entries()[1].key_type == NodeType::kNull);
  CHECK(dict.entries()[2].key == "2.5");
  CHECK(dict.entries()[2].key_type == NodeType::kFloat);
  CHECK(dict.entries()[3].key == "true");
  CHECK(dict.entries()[3].key_type == NodeType::kBool);
  CHECK(dict.entries()[4].key_type == NodeType::kString);
}

// Expected values from Hydra 1.3.2: OverridesParser.create().parse_overrides([text])[0].value()
// and get_value_element_as_str() / sweep_string_iterator().
TEST_CASE("int literals beyond 64 bits stay ints, as Python's do") {
  struct Case {
    const char* text;
    const char* decimal;
  };
  const Case kCases[] = {
      {"x=123456789012345678901234567890", "123456789012345678901234567890"},
      {"x=-123456789012345678901234567890", "-123456789012345678901234567890"},
      {"x=+123_456_789_012_345_678_901_234_567_890", "123456789012345678901234567890"},
      {"x=9223372036854775808", "9223372036854775808"},
      {"x=-9223372036854775809", "-9223372036854775809"},
      {"x=int(123456789012345678901234567890)", "123456789012345678901234567890"},
      {"x=int(1e30)", "1000000000000000019884624838656"},
      {"x=int(-1.5e20)", "-150000000000000000000"},
      {"x=int(9223372036854775807.0)", "9223372036854775808"},
      {"x=int('123456789012345678901234567890')", "123456789012345678901234567890"},
      {"x=int(\" -1_000_000_000_000_000_000_000 \")", "-1000000000000000000000"},
  };
  for (const Case& c : kCases) {
    INFO(c.text);
    const Override o = parse_override(c.text);
    REQUIRE(o.value.type() == NodeType::kInt);
    CHECK(o.value.is_big_int());
    CHECK(o.value.int_text() == c.decimal);
    CHECK(o.value_text == c.decimal);
  }
  CHECK(parse_override("x=-9223372036854775808").value == Node::integer(std::numeric_limits<int64_t>::min()));
  CHECK(parse_override("x=int(-9.3e18)").value == Node::integer_text("-9300000000000000000"));
  CHECK(parse_override("x=int(-1.5e300)").value_text.size() == 302);  // '-' and 301 digits
  CHECK(parse_override("x=00123456789012345678901234567890").value == Node::string("00123456789012345678901234567890"));

  const Override list = parse_override("x=[1,123456789012345678901234567890]");
  CHECK(list.value_text == "[1,123456789012345678901234567890]");
  CHECK(list.value.items()[1].int_text() == "123456789012345678901234567890");
  const Override dict = parse_override("x={123456789012345678901234567890:1}");
  CHECK(dict.value_text == "{123456789012345678901234567890:1}");
  CHECK(dict.value.entries()[0].key == "123456789012345678901234567890");
  CHECK(dict.value.entries()[0].key_type == NodeType::kInt);
  CHECK(parse_override("x=[int(1e20)]").value_text == "[100000000000000000000]");
  CHECK(parse_override("x=shuffle(123456789012345678901234567890)").value_text == "[123456789012345678901234567890]");
}

// Hydra 1.3.2 (Python's float()): beyond the double range a float is inf, also without an exponent.
TEST_CASE("float literals and casts beyond the double range give inf, as Python's float() does") {
  const std::string nines(400, '9');
  CHECK(parse_override("x=" + nines + ".0").value_text == "inf");
  CHECK(parse_override("x=-" + nines + ".0").value_text == "-inf");
  CHECK(parse_override("x=" + std::string(330, '1') + "e-20").value_text == "inf");
  CHECK(parse_override("x=float('" + nines + "')").value_text == "inf");
  CHECK(parse_override("x=float(\" 1e999 \")").value_text == "inf");
  CHECK(parse_override("x=1e-400").value_text == "0.0");
  CHECK(parse_override("x=bool(" + nines + ".0)").value == Node::boolean(true));
}

TEST_CASE("sweeps over big ints: choice, range and exact sort") {
  using V = std::vector<std::string>;
  CHECK(texts("x=1,123456789012345678901234567890") == V{"1", "123456789012345678901234567890"});
  CHECK(texts("x=choice(1,123456789012345678901234567890)") == V{"1", "123456789012345678901234567890"});
  CHECK(texts("x=int(choice(1e20,2.5))") == V{"100000000000000000000", "2"});
  CHECK(texts("x=range(123456789012345678901234567890,123456789012345678901234567893)") ==
        V{"123456789012345678901234567890", "123456789012345678901234567891", "123456789012345678901234567892"});
  CHECK(texts("x=range(9223372036854775805,9223372036854775809)") ==
        V{"9223372036854775805", "9223372036854775806", "9223372036854775807", "9223372036854775808"});
  CHECK(texts("x=range(-9223372036854775806,-9223372036854775810,-1)") ==
        V{"-9223372036854775806", "-9223372036854775807", "-9223372036854775808", "-9223372036854775809"});
  CHECK(texts("x=range(0,10,123456789012345678901234567890)") == V{"0"});
  CHECK(texts("x=range(9223372036854775800,9223372036854775807,5)") == V{"9223372036854775800", "9223372036854775805"});
  CHECK(texts("x=range(1.5,123456789012345678901234567890.0,123456789012345678901234567890)") == V{"1.5"});
  CHECK(texts("x=range(0,123456789012345678901234567890.0,1e29)") == V{"0.0", "1e+29"});
  // Decimal(int) is exact: 0.5 + 123456789012345678901234567889 rounds (28 digits) above the stop.
  CHECK(texts("x=range(0.5,123456789012345678901234567890,123456789012345678901234567889)") == V{"0.5"});
  CHECK_THROWS_AS(texts("x=range(123456789012345678901234567890)"), trainer::Error);
  CHECK(texts("x=sort(range(123456789012345678901234567890,123456789012345678901234567880,-3))") ==
        V{"123456789012345678901234567883", "123456789012345678901234567886", "123456789012345678901234567889",
          "123456789012345678901234567892"});
  CHECK(texts("x=sort(range(123456789012345678901234567880,123456789012345678901234567890,3),"
              "reverse=true)") == V{"123456789012345678901234567887", "123456789012345678901234567884",
                                    "123456789012345678901234567881", "123456789012345678901234567878"});
  CHECK(texts("x=sort(range(9223372036854775800,9223372036854775807,3),reverse=true)") ==
        V{"9223372036854775804", "9223372036854775801", "9223372036854775798"});
  // Python compares ints and floats exactly; sorted() is stable for equal values.
  CHECK(texts("x=sort(5,123456789012345678901234567890,-123456789012345678901234567890,1e30,1.0e29)") ==
        V{"-123456789012345678901234567890", "5", "1e+29", "123456789012345678901234567890", "1e+30"});
  CHECK(texts("x=sort(1000000000000000019884624838656,1e30,1000000000000000019884624838657,"
              "1000000000000000019884624838655)") == V{"1000000000000000019884624838655",
                                                       "1000000000000000019884624838656", "1e+30",
                                                       "1000000000000000019884624838657"});
  CHECK(texts("x=sort(9223372036854775808,9223372036854775807.0,9223372036854775807)") ==
        V{"9223372036854775807", "9223372036854775808", "9.223372036854776e+18"});
}

TEST_CASE("value_text re-renders the value the way Hydra's sweeper writes it") {
  CHECK(parse_override("k=1e3").value_text == "1000.0");
  CHECK(parse_override("k=[1, 2]").value_text == "[1,2]");
  CHECK(parse_override("k={a: 1, b: [x, 'y z']}").value_text == "{a:1,b:[x,'y z']}");
  CHECK(parse_override("k=${a}").value_text == "$\\{a\\}");
  CHECK(parse_override("k=true").value_text == "True");
  CHECK(parse_override("k=a\\,b").value_text == "a\\,b");
  CHECK(parse_override("k='it\\'s'").value_text == "'it\\'s'");
  CHECK(parse_override("k=\"a\\\\\"").value_text == "\"a\\\\\"");
  CHECK(parse_override("k=").value_text == "");
}

TEST_CASE("sweep fields") {
  Override tagged = parse_override("lr=tag(log,lr,interval(0.001,0.1))");
  CHECK(tagged.sweep.kind == SweepKind::kInterval);
  CHECK(tagged.sweep.tags == std::vector<std::string>{"log", "lr"});
  CHECK(tagged.sweep.interval_start == 0.001);
  CHECK(tagged.sweep.interval_end == 0.1);

  Override range = parse_override("x=range(5)");
  CHECK(range.sweep.kind == SweepKind::kRange);
  CHECK(range.sweep.range_start == Node::integer(0));
  CHECK(range.sweep.range_stop == Node::integer(5));
  CHECK(range.sweep.range_step == Node::integer(1));

  Override choice = parse_override("x=choice([1,2],'a,b')");
  CHECK(choice.sweep.kind == SweepKind::kChoice);
  REQUIRE(choice.sweep.choices.size() == 2);
  CHECK(choice.sweep.choices[0].value.is_list());
  CHECK(choice.sweep.choices[0].text == "[1,2]");
  // choice() unquotes its direct arguments, so the comma gets escaped instead.
  CHECK(choice.sweep.choices[1].text == "a\\,b");
  CHECK(parse_override("x=\"a,b\",c").sweep.choices[0].text == "\"a,b\"");

  Override glob = parse_override("db=glob([m*,p*],exclude=postgres)");
  CHECK(glob.sweep.kind == SweepKind::kGlob);
  CHECK(glob.sweep.glob_include == std::vector<std::string>{"m*", "p*"});
  CHECK(glob.sweep.glob_exclude == std::vector<std::string>{"postgres"});
  CHECK(parse_override("x=shuffle(a,b)").sweep.shuffle);
}

TEST_CASE("errors name the override, the place and the way out") {
  trainer::Error equal = error_of("key=http://x.y/z?q=1");
  CHECK(equal.where() == "override 'key=http://x.y/z?q=1'");
  CHECK(equal.problem() == "unexpected '=' in the value at column 19");
  CHECK_THAT(equal.fix(), Catch::Contains("key='http://x.y/z?q=1'"));
  // In a list, the elements are quoted, so that the value stays a list.
  trainer::Error listed = error_of("a.args=[--cpu-bind=none, -v]");
  CHECK_THAT(listed.fix(), Catch::Contains("Quote the list's elements, a.args=['--cpu-bind=none','-v']"));

  trainer::Error hash = error_of("key=a#b");
  CHECK(hash.problem() == "'#' is not allowed in an unquoted value (column 6)");
  // A shell would strip quotes around the value alone: the fix shows the form to type there too.
  CHECK(hash.fix() ==
        "Quote it: key='a#b' (on a shell command line, with the whole override in double quotes: "
        "\"key='a#b'\")");

  CHECK_THAT(error_of("key='a\\'").problem(), Catch::Contains("never closed"));
  CHECK_THAT(error_of("key=[1,2").problem(), Catch::Contains("'[' at column 5 is never closed"));
  CHECK_THAT(error_of("key = 1").problem(), Catch::Contains("not allowed in the key"));
  CHECK_THAT(error_of("key").problem(), Catch::Contains("missing '='"));
  CHECK_THAT(error_of("+key").fix(), Catch::Contains("+key=VALUE"));
  CHECK_THAT(error_of("key=nosuchfn(1)").problem(), Catch::Contains("unknown function 'nosuchfn'"));
  CHECK_THAT(error_of("key=choice()").problem(), Catch::Contains("empty choice"));
  CHECK_THAT(error_of("key=int(inf)").problem(), Catch::Contains("infinity"));
  CHECK_THAT(error_of("key=str(range(1,3))").problem(), Catch::Contains("int or float"));
  CHECK_THAT(error_of("key=float(" + std::string(400, '9') + ")").problem(),
             Catch::Contains("int too large to convert to float"));
  CHECK_THAT(error_of("key='a'b").fix(), Catch::Contains("key=\"'a'b\""));
  CHECK_THAT(error_of("key=[choice(1,2)]").problem(), Catch::Contains("nested inside a list"));
}

TEST_CASE("parse_overrides keeps the order and reports every bad override at once") {
  const std::vector<Override> parsed = parse_overrides({"a=1", "+b=x", "~c"});
  REQUIRE(parsed.size() == 3);
  CHECK(parsed[0].key == "a");
  CHECK(parsed[1].kind == OverrideKind::kAdd);
  CHECK(parsed[2].kind == OverrideKind::kDelete);
  CHECK(parse_overrides({}).empty());
  try {
    parse_overrides({"a=[1", "ok=1", "b c=2"});
    FAIL("accepted");
  } catch (const trainer::Error& e) {
    CHECK(e.where().empty());
    CHECK(e.problem() == error_of("a=[1").what() + std::string("\n") + error_of("b c=2").what());
  }
}
