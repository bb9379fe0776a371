// Tests of the YAML loader. Every expected typing below was observed with OmegaConf 2.3.1 /
// PyYAML 6.0.3 (`OmegaConf.create(text)` and `OmegaConf.load(path)`), not guessed.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

#include "../../src/config/yaml_block_parser.h"

using trainer::Error;
using trainer::config::load_yaml_file;
using trainer::config::load_yaml_string;
using trainer::config::Node;
using trainer::config::NodeType;
using trainer::config::type_yaml_scalar;
using trainer::config::YamlDocument;

namespace {

Node value_of(const std::string& yaml_value) {
  auto doc = load_yaml_string("a: " + yaml_value + "\n", "t.yaml");
  const Node* a = doc.root.find("a");
  REQUIRE(a != nullptr);
  return *a;
}

std::string error_of(const std::string& text) {
  try {
    load_yaml_string(text, "cfg.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("plain scalars are typed like OmegaConf's loader", "[yaml]") {
  struct Case {
    const char* text;
    Node expected;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      // null
      {"~", Node()},
      {"null", Node()},
      {"Null", Node()},
      {"NULL", Node()},
      {"", Node()},
      {"nULL", Node::string("nULL")},
      // bools: YAML 1.1 words, but not y/n
      {"yes", Node::boolean(true)},
      {"Yes", Node::boolean(true)},
      {"YES", Node::boolean(true)},
      {"no", Node::boolean(false)},
      {"on", Node::boolean(true)},
      {"ON", Node::boolean(true)},
      {"off", Node::boolean(false)},
      {"true", Node::boolean(true)},
      {"False", Node::boolean(false)},
      {"oN", Node::string("oN")},
      {"y", Node::string("y")},
      {"n", Node::string("n")},
      {"Y", Node::string("Y")},
      // ints
      {"1", Node::integer(1)},
      {"+1", Node::integer(1)},
      {"-0", Node::integer(0)},
      {"1_000", Node::integer(1000)},
      {"1__0", Node::integer(10)},
      {"0_", Node::integer(0)},
      {"010", Node::integer(8)},
      {"0o10", Node::string("0o10")},
      {"08", Node::string("08")},
      {"0b101", Node::integer(5)},
      {"+0b11", Node::integer(3)},
      {"0x10", Node::integer(16)},
      {"-0x10", Node::integer(-16)},
      {"0x_1F", Node::integer(31)},
      {"12:30", Node::integer(750)},
      {"-1:30", Node::integer(-90)},
      {"1:70", Node::string("1:70")},
      {"9223372036854775807", Node::integer(9223372036854775807)},
      // floats
      {"1.5", Node::floating(1.5)},
      {"5.", Node::floating(5.0)},
      {".5", Node::floating(0.5)},
      {"1e3", Node::floating(1000.0)},
      {"1E3", Node::floating(1000.0)},
      {"1e-4", Node::floating(0.0001)},
      {"6.8523015e+5", Node::floating(685230.15)},
      {"1.e5", Node::floating(100000.0)},
      {".5e+3", Node::floating(500.0)},
      {".5e3", Node::string(".5e3")},
      {"+.5", Node::string("+.5")},
      {"-.5e3", Node::string("-.5e3")},
      {"0.1_2", Node::floating(0.12)},
      {"190:20:30.15", Node::floating(685230.15)},
      {".inf", Node::floating(inf)},
      {"-.Inf", Node::floating(-inf)},
      {"+.INF", Node::floating(inf)},
      {"1.0e400", Node::floating(inf)},
      {"inf", Node::string("inf")},
      {"nan", Node::string("nan")},
      // strings
      {"2020-01-01", Node::string("2020-01-01")},
      {"${x}", Node::string("${x}")},
      {"hello world", Node::string("hello world")},
      {"'yes'", Node::string("yes")},
      {"\"1\"", Node::string("1")},
      {"!!str 1", Node::string("1")},
      {"!!int '5'", Node::integer(5)},
      {"!!float '5'", Node::floating(5.0)},
      {"!!bool 'yes'", Node::boolean(true)},
      {"!!null ''", Node()},
      {"! 12", Node::string("12")},
      // OmegaConf treats the string ??? as missing whether it is quoted or not
      {"\?\?\?", Node::missing()},
      {"'\?\?\?'", Node::missing()},
  };
  for (const Case& c : cases) {
    INFO("yaml text: " << c.text);
    Node got = value_of(c.text);
    CHECK(got.type() == c.expected.type());
    CHECK(got == c.expected);
  }
  Node nan = value_of(".NaN");
  REQUIRE(nan.type() == NodeType::kFloat);
  CHECK(std::isnan(nan.as_float()));
}

TEST_CASE("ints beyond 64 bits load like Python's unbounded ints", "[yaml]") {
  // OmegaConf.create(text): the value and str() of it.
  struct Case {
    const char* yaml;
    const char* decimal;
  };
  const Case kCases[] = {
      {"123456789012345678901234567890", "123456789012345678901234567890"},
      {"-123_456_789_012_345_678_901_234_567_890", "-123456789012345678901234567890"},
      {"+9223372036854775808", "9223372036854775808"},
      {"-9223372036854775809", "-9223372036854775809"},
      {"0xFFFFFFFFFFFFFFFFFFFF", "1208925819614629174706175"},
      {"-0x1_0000_0000_0000_0000", "-18446744073709551616"},
      {"0777777777777777777777777", "4722366482869645213695"},
      {"0b11111111111111111111111111111111111111111111111111111111111111111", "36893488147419103231"},
      {"1234567890123456789:59:30", "4444444404444444443970"},
      {"000000000000000000000000000000001000000000000000000000000000", "2417851639229258349412352"},
      {"!!int '123456789012345678901234567890'", "123456789012345678901234567890"},
      {"!!int \"0x10000000000000000\"", "18446744073709551616"},
  };
  for (const Case& c : kCases) {
    INFO(c.yaml);
    const Node value = value_of(c.yaml);
    REQUIRE(value.type() == NodeType::kInt);
    CHECK(value.is_big_int());
    CHECK(value.int_text() == c.decimal);
  }
  // Within int64 nothing changes.
  CHECK(value_of("-9223372036854775808") == Node::integer(std::numeric_limits<int64_t>::min()));
  CHECK(value_of("000000000000000000000000000000001") == Node::integer(1));
  CHECK(value_of("'123456789012345678901234567890'") == Node::string("123456789012345678901234567890"));
  CHECK(value_of("123456789012345678901234567890.0") == Node::floating(1.2345678901234568e+29));
  // Flow lists (yaml-cpp path) and keys.
  auto doc = load_yaml_string(
      "l: [1, 99999999999999999999]\n123456789012345678901234567890: big\n-0x10000000000000000: n\n", "t.yaml");
  REQUIRE(doc.root.entries().size() == 3);
  CHECK(doc.root.find("l")->items()[1].int_text() == "99999999999999999999");
  CHECK(doc.root.entries()[1].key == "123456789012345678901234567890");
  CHECK(doc.root.entries()[1].key_type == NodeType::kInt);
  CHECK(doc.root.entries()[2].key == "-18446744073709551616");
  CHECK(type_yaml_scalar("0x10000000000000000") == Node::integer_text("18446744073709551616"));
}

TEST_CASE("type_yaml_scalar types one plain scalar", "[yaml]") {
  CHECK(type_yaml_scalar("0x10") == Node::integer(16));
  CHECK(type_yaml_scalar("on") == Node::boolean(true));
  CHECK(type_yaml_scalar("1e-4") == Node::floating(0.0001));
  CHECK(type_yaml_scalar("~").is_null());
  CHECK(type_yaml_scalar("").is_null());
  CHECK(type_yaml_scalar("\?\?\?").is_missing());
  CHECK(type_yaml_scalar("abc") == Node::string("abc"));
  CHECK(type_yaml_scalar("<<") == Node::string("<<"));
}

// PyYAML's float constructor ends in Python's float() (python_value.h), spaces and a second sign
// included; observed with OmegaConf 2.3.1: OmegaConf.create("a: !!float ' 1.5'").a == 1.5.
TEST_CASE("!!float reads its text (and each sexagesimal part) with Python's float()", "[yaml]") {
  CHECK(value_of("!!float ' 1.5'") == Node::floating(1.5));
  CHECK(value_of("!!float '1.5 '") == Node::floating(1.5));
  CHECK(value_of("!!float '-+5'") == Node::floating(-5.0));
  CHECK(value_of("!!float '--5'") == Node::floating(5.0));
  CHECK(value_of("!!float '1:+5'") == Node::floating(65.0));
  CHECK(value_of("!!float '1: 5'") == Node::floating(65.0));
  CHECK(value_of("!!float ' 1:30 '") == Node::floating(90.0));
  CHECK(value_of("!!float " + std::string(400, '9') + ".0") == Node::floating(std::numeric_limits<double>::infinity()));
  CHECK_THAT(error_of("f: !!float 'nan(1)'\n"), Catch::Contains("!!float"));
}

TEST_CASE("block scalars and quoted scalars are strings", "[yaml]") {
  auto doc = load_yaml_string("a: |\n  x\n  y\nb: >\n  folded\n  text\nc: 'it''s'\nd: \"tab\\there\"\n", "t.yaml");
  CHECK(doc.root.find("a")->as_string() == "x\ny\n");
  CHECK(doc.root.find("b")->as_string() == "folded text\n");
  CHECK(doc.root.find("c")->as_string() == "it's");
  CHECK(doc.root.find("d")->as_string() == "tab\there");
}

TEST_CASE("maps keep order, nest, and record file:line on every node", "[yaml]") {
  auto doc = load_yaml_string(
      "# a comment\n"
      "model:\n"
      "  name: mlp\n"
      "  layers: [64, 32]\n"
      "optim:\n"
      "  lr: 1e-3\n"
      "  betas:\n"
      "  - 0.9\n"
      "  - 0.999\n"
      "empty:\n",
      "conf/config.yaml");
  const Node& root = doc.root;
  REQUIRE(root.is_map());
  REQUIRE(root.entries().size() == 3);
  CHECK(root.entries()[0].key == "model");
  CHECK(root.entries()[1].key == "optim");
  CHECK(root.entries()[2].key == "empty");
  CHECK(root.find("empty")->is_null());
  const Node& model = *root.find("model");
  CHECK(model.origin().describe() == "conf/config.yaml:2");
  CHECK(model.find("name")->origin().describe() == "conf/config.yaml:3");
  CHECK(model.find("layers")->items()[1] == Node::integer(32));
  CHECK(model.find("layers")->items()[1].origin().line == 4);
  const Node& betas = *root.find("optim")->find("betas");
  CHECK(betas.origin().line == 7);
  CHECK(betas.items()[0].origin().line == 8);
  CHECK(betas.items()[1].origin().line == 9);
  CHECK(betas.items()[1] == Node::floating(0.999));
  CHECK(root.find("empty")->origin().line == 10);
  // One shared path string per file.
  CHECK(model.origin().source.get() == betas.items()[1].origin().source.get());
  CHECK_FALSE(doc.package.has_value());
}

TEST_CASE("empty files and null documents load as an empty map", "[yaml]") {
  for (const char* text : {"", "# only a comment\n", "\n\n", "---\n", "~\n", "---\n...\n"}) {
    INFO(text);
    auto doc = load_yaml_string(text, "e.yaml");
    CHECK(doc.root.is_map());
    CHECK(doc.root.size() == 0);
  }
}

TEST_CASE("non-string keys keep their type (OmegaConf int/bool/float keys)", "[yaml]") {
  // OmegaConf: {1: 'a', 16: 'b', True: 'c', 1.5: 'd', '2': 'e'}
  auto doc = load_yaml_string("1: a\n0x10: b\ntrue: c\n1.5: d\n'2': e\n", "k.yaml");
  const auto& e = doc.root.entries();
  REQUIRE(e.size() == 5);
  CHECK(e[0].key == "1");
  CHECK(e[0].key_type == NodeType::kInt);
  CHECK(e[1].key == "16");
  CHECK(e[1].key_type == NodeType::kInt);
  CHECK(e[2].key == "True");
  CHECK(e[2].key_type == NodeType::kBool);
  CHECK(e[3].key == "1.5");
  CHECK(e[3].key_type == NodeType::kFloat);
  CHECK(e[4].key == "2");
  CHECK(e[4].key_type == NodeType::kString);
  // OmegaConf: KeyValidationError "Incompatible key type 'NoneType'".
  CHECK_THAT(error_of("~: a\n"), Catch::Contains("cfg.yaml:1") && Catch::Contains("null"));
  CHECK_THAT(error_of("? [1, 2]\n: a\n"), Catch::Contains("key is a list"));
}

TEST_CASE("anchors, aliases and merge keys behave as in PyYAML", "[yaml]") {
  // OmegaConf: a={'b': 1}, c={'b': 1}
  auto doc = load_yaml_string("a: &x {b: 1}\nc: *x\n", "m.yaml");
  CHECK(*doc.root.find("c") == *doc.root.find("a"));
  // OmegaConf: d={'b': 1, 'c': 3}
  doc = load_yaml_string("a: &x {b: 1, c: 2}\nd:\n  <<: *x\n  c: 3\n", "m.yaml");
  const Node& d = *doc.root.find("d");
  REQUIRE(d.entries().size() == 2);
  CHECK(d.entries()[0].key == "b");
  CHECK(d.entries()[1].key == "c");
  CHECK(*d.find("c") == Node::integer(3));
  // Own keys come after merged ones even when written first; earlier maps in a merge list win.
  // OmegaConf: {'x': 1, 'y': 2, 'z': 20, 'w': 0, 'q': 9}... see yaml_merge.yaml
  doc = load_yaml_string(
      "p: &p {x: 1, y: 2}\n"
      "q: &q {y: 20, z: 20}\n"
      "r:\n"
      "  w: 0\n"
      "  <<: [*p, *q]\n",
      "m.yaml");
  const Node& r = *doc.root.find("r");
  REQUIRE(r.entries().size() == 4);
  CHECK(r.entries()[0].key == "y");
  CHECK(r.entries()[1].key == "z");
  CHECK(r.entries()[2].key == "x");
  CHECK(r.entries()[3].key == "w");
  CHECK(*r.find("y") == Node::integer(2));
  CHECK_THAT(error_of("a: 1\nb:\n  <<: 5\n"), Catch::Contains("cfg.yaml:3") && Catch::Contains("merge"));
  // Quoted '<<' is an ordinary key.
  doc = load_yaml_string("'<<': 1\n", "m.yaml");
  CHECK(doc.root.entries()[0].key == "<<");
}

TEST_CASE("load errors name file:line and say how to fix", "[yaml]") {
  // OmegaConf: "found duplicate key a", line 2.
  std::string dup = error_of("a: 1\nb: 2\na: 3\n");
  CHECK_THAT(dup, Catch::Contains("cfg.yaml:3") && Catch::Contains("duplicate key 'a'") && Catch::Contains("line 1"));
  CHECK_THAT(error_of("x:\n  a: 1\n  a: 2\n"), Catch::Contains("cfg.yaml:3"));
  // PyYAML lets repeated int keys overwrite: {1: 'b'}
  auto doc = load_yaml_string("1: a\n1: b\n", "d.yaml");
  CHECK(doc.root.size() == 1);
  CHECK(doc.root.entries()[0].value == Node::string("b"));
  std::string syntax = error_of("a: 1\nb: [1, 2\nc: 3\n");
  CHECK_THAT(syntax, Catch::Contains("cfg.yaml:") && Catch::Contains("YAML syntax error"));
  std::string bad_indent = error_of("a:\n  b: 1\n c: 2\n");
  CHECK_THAT(bad_indent, Catch::Contains("cfg.yaml:3:") && Catch::Contains("indentation"));
  CHECK_THAT(error_of("- a\n- b\n"),
             Catch::Contains("cfg.yaml:1") && Catch::Contains("mapping") && Catch::Contains("list"));
  CHECK_THAT(error_of("just a string\n"), Catch::Contains("str"));
  CHECK_THAT(error_of("a: 1\n---\nb: 2\n"), Catch::Contains("more than one YAML document"));
  CHECK_THAT(error_of("a: !foo bar\n"), Catch::Contains("!foo"));
  CHECK_THAT(error_of("a: !!int abc\n"), Catch::Contains("!!int"));
  // Sexagesimal with an empty part: OmegaConf fails in float('') / int(''); the constructor used
  // to loop forever on a leading ':' (fuzz finding float-leading-colon).
  CHECK_THAT(error_of("f: !!float :30\n"), Catch::Contains("cfg.yaml:1") && Catch::Contains("!!float"));
  CHECK_THAT(error_of("f: !!int :30\n"), Catch::Contains("cfg.yaml:1") && Catch::Contains("!!int"));
  CHECK_THAT(error_of("f: !!float 1::30\n"), Catch::Contains("!!float"));
  CHECK_THAT(error_of("f: !!int -:30\n"), Catch::Contains("!!int"));
  CHECK(value_of("!!float 1:30") == Node::floating(90.0));
  CHECK(value_of("!!int 1:30") == Node::integer(90));
  CHECK_THAT(error_of("a: =\n"), Catch::Contains("cfg.yaml:1"));
  CHECK_THAT(error_of("a: <<\n"), Catch::Contains("merge"));
  CHECK_THAT(error_of("a: 0b_\n"), Catch::Contains("cfg.yaml:1") && Catch::Contains("not a valid integer"));
  CHECK_THAT(error_of("a: !!int 12x\n"), Catch::Contains("is tagged !!int but is not an integer"));
  CHECK_THAT(error_of("a: *nope\n"), Catch::Contains("cfg.yaml:1"));
  // PyYAML: "found unexpected end of stream"; yaml-cpp alone would accept these.
  CHECK_THAT(error_of("a: 1\nb: 'x\n"), Catch::Contains("cfg.yaml:2") && Catch::Contains("closing"));
  CHECK_THAT(error_of("b: \"x \\\"\n"), Catch::Contains("closing"));
  CHECK_THAT(error_of("\ta: 1\n"), Catch::Contains("tab"));
  // PyYAML: "unacceptable character #x001e: special characters are not allowed".
  CHECK_THAT(error_of("a: 1\nkey\x1e_b: 2\n"),
             Catch::Contains("cfg.yaml:2") && Catch::Contains("#x001E") && Catch::Contains("double-quoted"));
  CHECK_THAT(error_of(std::string("a: x\0y\n", 7)), Catch::Contains("#x0000"));
  CHECK_THAT(error_of("a: \x7f\n"), Catch::Contains("#x007F"));
  // ...but escapes inside double quotes load, and the writer prints them back as escapes.
  auto escaped = load_yaml_string("\"k\\x1e\\0\": \"v\\x01\"\n", "e.yaml");
  CHECK(escaped.root.entries()[0].key == std::string("k\x1e\0", 3));
  CHECK(load_yaml_string(trainer::config::to_yaml(escaped.root), "w.yaml").root.entries()[0].key ==
        std::string("k\x1e\0", 3));
  // Multi-line quoted strings are fine.
  CHECK(load_yaml_string("a: 'x\n  y'\nb: \"p \\\" q\"\n", "q.yaml").root.find("b")->as_string() == "p \" q");
}

TEST_CASE("line breaks and escapes read as PyYAML reads them", "[yaml]") {
  // yaml-cpp decodes "\N" and "\_" to the lone bytes 0x85 / 0xA0; OmegaConf gives U+0085 and
  // U+00A0 (fuzz finding nel-line-break-key).
  CHECK(value_of("\"\\N\"") == Node::string("\xc2\x85"));
  CHECK(value_of("\"a\\_b\"") == Node::string("a\xc2\xa0"
                                              "b"));
  CHECK(value_of("\"\\L\\P\"") == Node::string("\xe2\x80\xa8\xe2\x80\xa9"));
  auto escaped_key = load_yaml_string("\"k\\N\": 1\n", "e.yaml");
  CHECK(escaped_key.root.entries()[0].key == "k\xc2\x85");
  // PyYAML (YAML 1.1) reads NEL, a lone CR and CR LF as "\n": {'a': 1, 'b': 2}, 'x y', 'p q'.
  for (const char* text : {"a: 1\xc2\x85"
                           "b: 2\n",
                           "a: 1\rb: 2\n", "a: 1\r\nb: 2\r\n"}) {
    INFO(text);
    auto doc = load_yaml_string(text, "b.yaml");
    REQUIRE(doc.root.entries().size() == 2);
    CHECK(doc.root.find("b")->as_int() == 2);
    CHECK(doc.root.find("b")->origin().line == 2);
  }
  CHECK(value_of("\"x\ry\"") == Node::string("x y"));
  CHECK(value_of("\"x\xc2\x85y\"") == Node::string("x y"));
  CHECK(value_of("\"p\r\n  q\"") == Node::string("p q"));
  CHECK(value_of("|\n  x\r\n  y\n") == Node::string("x\ny\n"));
  // The fuzz input `n]0 <NEL> :: e`: PyYAML sees a second line ` :: e` and fails with "mapping
  // values are not allowed here" at line 2, column 3; yaml-cpp alone took NEL as text.
  CHECK_THAT(error_of("n]0 \xc2\x85 :: e"), Catch::Contains("cfg.yaml:2:3"));
  // U+2028/U+2029 are line breaks to PyYAML that keep their character in the value; yaml-cpp
  // cannot read them so, and they are refused raw (OmegaConf reads 'x<LS>  y' as "x\u2028y").
  CHECK_THAT(error_of("a: 1\nb: 'x\xe2\x80\xa8  y'\n"),
             Catch::Contains("cfg.yaml:2") && Catch::Contains("U+2028") && Catch::Contains("\\L"));
  CHECK_THAT(error_of("a: x\xe2\x80\xa9\n"), Catch::Contains("U+2029") && Catch::Contains("\\P"));
}

TEST_CASE("multi-line quoted scalars fold their line breaks as PyYAML does", "[yaml]") {
  // yaml-cpp collapses the breaks before a closing quote to one "\n"; OmegaConf keeps them all.
  // 'y&\n\n\n  ' is how OmegaConf.to_yaml writes "y&\n\n".
  struct Case {
    const char* yaml;
    const char* expected;  // OmegaConf.create("v: " + yaml)["v"]
  };
  static const Case kCases[] = {
      {"'y&\n\n\n  '", "y&\n\n"},
      {"'a\n\n\n\n  '", "a\n\n\n"},
      {"'a\n\n\n'", "a\n\n"},
      {"\"a\n\n\n  \"", "a\n\n"},
      {"'a  \n\n\n  '", "a\n\n"},
      {"'a\n\n\n  b'", "a\n\nb"},
      {"'a\n\n  '", "a\n"},
      {"'\n\n\n  '", "\n\n"},
      {"'\n\n  '", "\n"},
      {"'\n  '", " "},
      {"'\n\n  a\n\n\n  '", "\na\n\n"},
      {"&x !!str 'a\n\n\n  '", "a\n\n"},
      {"!!str # c\n  'a\n\n\n  '", "a\n\n"},
      {"\"a\\\n\n  b\\\n  c \\t\n d\"", "a\nbc \t d"},
      {"'a\t\n\t\n b'", "a\nb"},
      {"'it''s\n  x'", "it's x"},
  };
  for (const Case& c : kCases) {
    INFO("yaml: [" << c.yaml << "]");
    CHECK(value_of(c.yaml) == Node::string(c.expected));
    CHECK(trainer::config::yaml_detail::load_yaml_string_full(std::string("v: ") + c.yaml + "\n", "f.yaml")
              .root.find("v")
              ->as_string() == c.expected);
  }
}

TEST_CASE("the # @package header is read like Hydra reads it", "[yaml]") {
  CHECK(load_yaml_string("# @package db.primary\na: 1\n", "p.yaml").package == "db.primary");
  CHECK(load_yaml_string("\n#@package _global_\n", "p.yaml").package == "_global_");
  CHECK(load_yaml_string("  # @package   x  \n", "p.yaml").package == "x");
  // Hydra stops at the first line that is not a `# @` header line.
  CHECK_FALSE(load_yaml_string("# hello\n# @package x\n", "p.yaml").package.has_value());
  CHECK_FALSE(load_yaml_string("a: 1\n# @package x\n", "p.yaml").package.has_value());
  CHECK_THAT(error_of("# @package\n"), Catch::Contains("cfg.yaml:1") && Catch::Contains("@KEY VALUE"));
  CHECK_THAT(error_of("# @package a b\n"), Catch::Contains("too many"));
}

TEST_CASE("load_yaml_file reads a file", "[yaml]") {
  const std::string path = std::string(TRAINER_TEST_DATA_DIR) + "/yaml/rich.yaml";
  auto doc = load_yaml_file(path);
  CHECK(doc.package == "model");
  CHECK(doc.root.find("name")->as_string() == "resnet");
  CHECK(doc.root.find("name")->origin().describe() == path + ":3");
  CHECK_THAT(error_of("a: 1"), Catch::Contains("no error"));
  try {
    load_yaml_file("/nonexistent/x.yaml");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.where() == "/nonexistent/x.yaml");
  }
}

namespace {

// Value and origin equality, recursively.
bool same_tree(const Node& a, const Node& b, std::string& why, const std::string& path = "") {
  if (a != b) {
    why = "values differ at '" + path + "'";
    return false;
  }
  if (a.origin().line != b.origin().line) {
    why =
        "lines differ at '" + path + "': " + std::to_string(a.origin().line) + " vs " + std::to_string(b.origin().line);
    return false;
  }
  for (size_t i = 0; i < a.items().size(); ++i)
    if (!same_tree(a.items()[i], b.items()[i], why, path + "[" + std::to_string(i) + "]")) return false;
  for (size_t i = 0; i < a.entries().size(); ++i) {
    if (a.entries()[i].key_type != b.entries()[i].key_type) {
      why = "key types differ at '" + path + "'";
      return false;
    }
    if (!same_tree(a.entries()[i].value, b.entries()[i].value, why, path + "." + a.entries()[i].key)) return false;
  }
  return true;
}

struct Random {
  uint64_t state;
  uint32_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  }
  size_t below(size_t n) { return next() % n; }
  template <typename T, size_t N>
  const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }
};

// Random block YAML in the style of config files, with tricky scalars mixed in.
void random_block(Random& rng, std::string& out, int indent, int depth, bool is_list, bool clean) {
  static const char* kKeys[] = {"a",   "b",     "c",   "d",   "e",    "f",         "g",  "name", "lr", "my key",
                                "x_1", "model", "k-2", "a.b", "${k}", "h\xc3\xa9", "on", "1",    "<<", "~"};
  static const char* kValues[] = {"1",
                                  "-2",
                                  "0x1F",
                                  "010",
                                  "1_000",
                                  "12:30",
                                  "1.5",
                                  "1e-4",
                                  ".inf",
                                  "-.Inf",
                                  ".nan",
                                  "yes",
                                  "No",
                                  "true",
                                  "off",
                                  "null",
                                  "~",
                                  "\?\?\?",
                                  "'\?\?\?'",
                                  "hello world",
                                  "${a.b}",
                                  "${oc.env:HOME,/tmp}",
                                  "'quoted # not comment'",
                                  "\"dq\"",
                                  "'it''s'",
                                  "x # comment",
                                  "[1, 2, 3]",
                                  "[]",
                                  "{}",
                                  "[a, b c, -1]",
                                  "[ ]",
                                  "a#b",
                                  "http://x.y/z?q=1",
                                  "-x",
                                  "2020-01-01",
                                  "caf\xc3\xa9",
                                  "'  padded  '",
                                  "\"a: b\"",
                                  "1:70",
                                  "+.5",
                                  "0o7",
                                  "=",
                                  "'a' # c",
                                  "é: x",
                                  "a: b",
                                  "[a, ]",
                                  "[{a: 1}]",
                                  "{a: 1}",
                                  "!!str 5",
                                  "&x 1",
                                  "*x",
                                  "|",
                                  "- a",
                                  "'unterminated",
                                  "\"esc\\n\"",
                                  "9223372036854775808",
                                  "3 ",
                                  "'' ",
                                  "\"\"",
                                  "a  b",
                                  "@x",
                                  "`x",
                                  "%x",
                                  "? x",
                                  ": x",
                                  ",x"};
  size_t n = 1 + rng.below(4);
  std::string pad(static_cast<size_t>(indent), ' ');
  for (size_t i = 0; i < n; ++i) {
    if (rng.below(8) == 0) out += pad + "# a comment\n";
    if (rng.below(10) == 0) out += "\n";
    out += pad;
    // Clean documents draw only from the first keys and values, which the fast path accepts.
    const char* key = clean ? kKeys[rng.below(16)] : rng.pick(kKeys);
    const char* value = clean ? kValues[rng.below(41)] : rng.pick(kValues);
    out += is_list ? "- " : std::string(key) + ":";
    size_t kind = depth > 3 ? 0 : rng.below(5);
    if (kind <= 2) {
      if (!is_list) out += " ";
      out += value;
      out += "\n";
    } else if (kind == 3) {
      // A nested map.
      if (is_list && rng.below(2) == 0) {
        // `- a: 1` style: the map starts on the dash line.
        std::string inner;
        random_block(rng, inner, indent + 2, depth + 1, false, clean);
        out += inner.substr(static_cast<size_t>(indent) + 2);
      } else {
        out += "\n";
        random_block(rng, out, indent + 2 + static_cast<int>(rng.below(2)) * 2, depth + 1, false, clean);
      }
    } else {
      // A nested list; under a key it may be indentless.
      out += "\n";
      int child = is_list ? indent + 2 : indent + 2 * static_cast<int>(rng.below(2));
      random_block(rng, out, child, depth + 1, true, clean);
    }
  }
}

}  // namespace

TEST_CASE("the fast block parser agrees with the full yaml-cpp path", "[yaml]") {
  using trainer::config::yaml_detail::load_yaml_string_full;
  Random rng{42};
  int fast_accepted = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string text;
    random_block(rng, text, 0, 0, false, round % 2 == 0);
    // Now and then break the indentation or insert a stray character.
    if (rng.below(6) == 0 && !text.empty()) {
      size_t at = rng.below(text.size());
      static const char kNoise[] = {' ', ':', '-', '#', '\'', '"', '[', '\n', 'x', '{'};
      text.insert(at, 1, kNoise[rng.below(sizeof kNoise)]);
    }
    INFO("document:\n" << text);
    std::string full_error, fast_error;
    YamlDocument full, fast;
    try {
      full = load_yaml_string_full(text, "r.yaml");
    } catch (const Error& e) {
      full_error = e.what();
    }
    try {
      fast = load_yaml_string(text, "r.yaml");
    } catch (const Error& e) {
      fast_error = e.what();
    }
    CHECK(fast_error == full_error);
    if (full_error.empty() && fast_error.empty()) {
      std::string why;
      CHECK(same_tree(fast.root, full.root, why));
      INFO(why);
      CHECK(why.empty());
    }
    Node ignored;
    if (trainer::config::yaml_detail::parse_simple_block_yaml(text, std::make_shared<const std::string>("r.yaml"),
                                                              ignored))
      ++fast_accepted;
  }
  // The fast path must actually be taken for most ordinary documents.
  WARN("fast path accepted " << fast_accepted << " of 4000 random documents");
  CHECK(fast_accepted > 1000);
}

// Large maps go through a hash index instead of a scan per key (src/config/entry_index.h); these
// check that order, values, lines, duplicates and merge keys come out as they did with the scan.
TEST_CASE("large maps load in order with their values and lines", "[yaml]") {
  constexpr int kKeys = 100000;
  std::string text;
  text.reserve(kKeys * 16);
  for (int i = 0; i < kKeys; ++i) {
    text += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
    if (i == 5000) {
      // A nested map large enough to be indexed too, written on lines 5002-5041.
      text += "nested:\n";
      for (int j = 0; j < 40; ++j) text += "  n" + std::to_string(j) + ": v" + std::to_string(j) + "\n";
    }
  }
  const YamlDocument doc = load_yaml_string(text, "big.yaml");
  const std::vector<Node::Entry>& entries = doc.root.entries();
  REQUIRE(entries.size() == kKeys + 1);
  bool in_order = true;
  for (int i = 0, at = 0; i < kKeys; ++i, ++at) {
    if (i == 5001) ++at;  // `nested` sits after k5000
    const Node::Entry& entry = entries[static_cast<size_t>(at)];
    if (entry.key != "k" + std::to_string(i) || entry.value != Node::integer(i)) in_order = false;
  }
  CHECK(in_order);
  CHECK(doc.root.find("k99999")->origin().line == kKeys + 41);
  const Node& nested = *doc.root.find("nested");
  REQUIRE(nested.entries().size() == 40);
  CHECK(nested.entries()[39].key == "n39");
  CHECK(*nested.find("n39") == Node::string("v39"));
  CHECK(nested.find("n39")->origin().line == 5002 + 40);
}

TEST_CASE("large maps read the same on the fast and the full path", "[yaml]") {
  using trainer::config::yaml_detail::load_yaml_string_full;
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text +=
        "k" + std::to_string(i) + ":\n  name: item" + std::to_string(i) + "\n  list: [1, " + std::to_string(i) + "]\n";
  }
  const YamlDocument fast = load_yaml_string(text, "big.yaml");
  const YamlDocument full = load_yaml_string_full(text, "big.yaml");
  std::string why;
  CHECK(same_tree(fast.root, full.root, why));
  CHECK(why.empty());
  CHECK(fast.root.entries().size() == 2000);
}

TEST_CASE("duplicate keys in large maps are refused or overwrite as with small ones", "[yaml]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  CHECK_THAT(error_of(text + "k5: again\n"), Catch::Contains("cfg.yaml:1001") &&
                                                 Catch::Contains("duplicate key 'k5'") &&
                                                 Catch::Contains("first defined on line 6"));
  // PyYAML lets a repeated int key overwrite in place, keeping the first position.
  std::string ints;
  for (int i = 0; i < 100; ++i) ints += std::to_string(i) + ": a" + std::to_string(i) + "\n";
  const YamlDocument doc = load_yaml_string(ints + "7: again\n", "ints.yaml");
  REQUIRE(doc.root.entries().size() == 100);
  CHECK(doc.root.entries()[7].key == "7");
  CHECK(doc.root.entries()[7].key_type == NodeType::kInt);
  CHECK(doc.root.entries()[7].value == Node::string("again"));
}

TEST_CASE("merge keys over large maps keep PyYAML's order", "[yaml]") {
  std::string text = "base: &b\n";
  for (int i = 0; i < 100; ++i) text += "  m" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  text += "derived:\n  own: 1\n  <<: *b\n  m50: fifty\n";
  const YamlDocument doc = load_yaml_string(text, "merge.yaml");
  const Node& derived = *doc.root.find("derived");
  REQUIRE(derived.entries().size() == 101);
  CHECK(derived.entries()[0].key == "m0");
  CHECK(derived.entries()[50].key == "m50");
  CHECK(derived.entries()[50].value == Node::string("fifty"));
  CHECK(derived.entries()[100].key == "own");
}

TEST_CASE("a block mapping line without ':' after its key is refused, as PyYAML refuses it", "[yaml]") {
  // yaml-cpp read `key:value` (the space forgotten) as the key "key:value" with no value, and the
  // setting was silently not made; PyYAML: "while scanning a simple key ... could not find expected ':'".
  CHECK_THAT(error_of("a: 1\ntest_after_fit:false\n"),
             Catch::Contains("cfg.yaml:2: 'test_after_fit:false' has no ':' after it") &&
                 Catch::Contains("Put a space after the colon: test_after_fit: false"));
  CHECK_THAT(error_of("a: 1\nfoo\n"), Catch::Contains("cfg.yaml:2: 'foo' has no ':' after it"));
  // What PyYAML reads: an explicit key, a flow mapping's bare key, a colon inside a key or value.
  CHECK(error_of("? x\n: 1\n") == "no error");
  CHECK(error_of("z: {a, b: 1}\n") == "no error");
  CHECK(error_of("x:y: 1\nurl: a:b\n") == "no error");
  CHECK(error_of("list:\n  - a:b\n  - c\n") == "no error");
}
