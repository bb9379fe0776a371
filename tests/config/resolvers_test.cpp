// Resolver calls: OmegaConf's argument grammar and the built-in resolvers. Every expected value
// was observed with OmegaConf 2.3.1 / hydra-core 1.3.2 (a resolver returning its arguments).
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <catch2/catch.hpp>

#include "trainer/config/interpolation.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using Catch::Matchers::Contains;
using trainer::Error;
using trainer::config::load_yaml_string;
using trainer::config::Node;
using trainer::config::NodeType;
using trainer::config::resolve_all;
using trainer::config::ResolveContext;
using trainer::config::ResolverRegistry;

namespace {

Node echo_args(const std::vector<Node>& args, const ResolveContext&) {
  Node list = Node::list();
  for (const Node& arg : args) list.push_back(arg);
  return list;
}

TRAINER_REGISTER_RESOLVER("test.args", echo_args);
TRAINER_REGISTER_RESOLVER("times_two", [](const std::vector<Node>& args, const ResolveContext&) {
  if (args.size() != 1 || args[0].type() != NodeType::kInt) {
    throw Error("times_two", "needs one int", "Write ${times_two:21}.");
  }
  return Node::integer(args[0].as_int() * 2);
});
TRAINER_REGISTER_RESOLVER("test.literal",
                          [](const std::vector<Node>&, const ResolveContext&) { return Node::string("${x}"); });

Node I(int64_t v) { return Node::integer(v); }
Node F(double v) { return Node::floating(v); }
Node B(bool v) { return Node::boolean(v); }
Node S(const std::string& v) { return Node::string(v); }
Node L(std::initializer_list<Node> items) {
  Node list = Node::list();
  for (const Node& item : items) list.push_back(item);
  return list;
}
Node M(std::initializer_list<std::pair<const char*, Node>> entries) {
  Node map = Node::map();
  for (const auto& [key, value] : entries) map.set(key, value);
  return map;
}

// The config every case runs in (as in the OmegaConf experiments), with `v` under `sub`.
Node fixture(const std::string& value) {
  Node root = Node::map();
  root.set("x", I(5));
  root.set("s", S("str"));
  root.set("f", F(0.5));
  root.set("m", Node::missing());
  root.set("n", Node());
  root.set("l", L({I(1), S("${x}")}));
  root.set("d", M({{"k", S("v")}, {"j", S("${x}")}, {"r", S("${.k}")}}));
  root.set("esc", S("\\${x}"));
  Node& sub = root.set("sub", Node::map());
  sub.set("y", I(1));
  sub.set("v", S(value));
  return root;
}

Node value_of(const std::string& value, const ResolveContext& context = {}) {
  Node root = fixture(value);
  resolve_all(root, context);
  return *root.find("sub")->find("v");
}

Node args_of(const std::string& args) { return value_of("${test.args:" + args + "}"); }

std::string error_of(const std::string& value, const ResolveContext& context = {}) {
  Node root = fixture(value);
  try {
    resolve_all(root, context);
  } catch (const Error& error) {
    return error.what();
  }
  FAIL("expected an error for " << value);
  return {};
}

bool is_nan(const Node& node) { return node.type() == NodeType::kFloat && std::isnan(node.as_float()); }

}  // namespace

TEST_CASE("resolver arguments are typed like OmegaConf's grammar types them") {
  CHECK(args_of("1,2.5,true,null,abc,'q',\"dq\"") == L({I(1), F(2.5), B(true), Node(), S("abc"), S("q"), S("dq")}));
  CHECK(args_of("1_000, 0x10, 010, .5, 5., 1e3, 1E-05, inf, -inf, +3, -0") ==
        L({I(1000), S("0x10"), S("010"), F(0.5), F(5.0), F(1000.0), F(1e-05), F(HUGE_VAL), F(-HUGE_VAL), I(3), I(0)}));
  CHECK(is_nan(args_of("NaN").items()[0]));
  CHECK(args_of("TRUE, False, NULL, Null, yes") == L({B(true), B(false), Node(), Node(), S("yes")}));
  CHECK(args_of("1., 1_0.5, 1e1_0, 1__0, 0_1, 00, -.5e-3, -3, +inf") ==
        L({F(1.0), F(10.5), F(1e10), S("1__0"), S("0_1"), S("00"), F(-0.0005), I(-3), F(HUGE_VAL)}));
}

TEST_CASE("unquoted arguments: blanks, escapes and allowed characters") {
  CHECK(args_of(" a b , c") == L({S("a b"), S("c")}));
  CHECK(args_of("1 2") == L({S("1 2")}));
  CHECK(args_of("a\\,b, a\\ b, \\[x\\]") == L({S("a,b"), S("a b"), S("[x]")}));
  CHECK(args_of("a\\\\b, a\\b, a\\tb") == L({S("a\\b"), S("a\\b"), S("a\\tb")}));
  CHECK(args_of("tab\\\tx") == L({S("tab\tx")}));
  CHECK(args_of("%Y-%m-%d, %H:%M:%S, a:b") == L({S("%Y-%m-%d"), S("%H:%M:%S"), S("a:b")}));
  CHECK(args_of("-, /path/to/x.yaml, @, *, a*b%c, ?, a|b, $") ==
        L({S("-"), S("/path/to/x.yaml"), S("@"), S("*"), S("a*b%c"), S("?"), S("a|b"), S("$")}));
  CHECK(args_of("abc def, 'x' ") == L({S("abc def"), S("x")}));
}

TEST_CASE("empty and missing arguments") {
  CHECK(args_of("") == L({}));
  CHECK(args_of("  ") == L({}));
  // OmegaConf warns for these but passes empty strings.
  CHECK(args_of("a,") == L({S("a"), S("")}));
  CHECK(args_of(",a") == L({S(""), S("a")}));
  CHECK(args_of("a,,b") == L({S("a"), S(""), S("b")}));
}

TEST_CASE("quoted arguments are strings with their own escapes") {
  CHECK(args_of("'a\\\\b'") == L({S("a\\\\b")}));   // 'a\\b'     -> a\\b
  CHECK(args_of("'a\\\\${x}'") == L({S("a\\5")}));  // 'a\\${x}'  -> a\5
  CHECK(args_of("'a\\${x}'") == L({S("a${x}")}));   // 'a\${x}'   -> a${x}
  CHECK(args_of("'a\\'b'") == L({S("a'b")}));       // 'a\'b'     -> a'b
  CHECK(args_of("\"a\\\\\"") == L({S("a\\")}));     // "a\\"      -> a\      .
  CHECK(args_of("\"a\\\"b\"") == L({S("a\"b")}));   // "a\"b"     -> a"b
  CHECK(args_of("'a\"b', \"a'b\"") == L({S("a\"b"), S("a'b")}));
  CHECK(args_of("'x\\y'") == L({S("x\\y")}));
  CHECK(args_of("'  sp  '") == L({S("  sp  ")}));
  CHECK(args_of("'1', '${x}', '${x}_y', '${l}'") == L({S("1"), S("5"), S("5_y"), S("[1, 5]")}));
}

TEST_CASE("interpolations inside arguments") {
  CHECK(args_of("${x}, x_${x}, ${x}${x}") == L({I(5), S("x_5"), S("55")}));
  CHECK(args_of("a ${x} b, ${x} , ${x}") == L({S("a 5 b"), I(5), I(5)}));
  CHECK(args_of("${s}, ${f}, x${f}, ${l}x") == L({S("str"), F(0.5), S("x0.5"), S("[1, 5]x")}));
  CHECK(args_of("${d.k}, ${oc.select:x}") == L({S("v"), I(5)}));
  CHECK(args_of("a\\\\${x}") == L({S("a\\5")}));
  CHECK(args_of("${l}") == L({L({I(1), I(5)})}));
}

TEST_CASE("list and dict arguments") {
  CHECK(args_of("[1,2,[3]], {a:1, b:[x]}, {}, []") ==
        L({L({I(1), I(2), L({I(3)})}), M({{"a", I(1)}, {"b", L({S("x")})}}), M({}), L({})}));
  CHECK(args_of("[ ], { }, [1, ], [,1]") == L({L({}), M({}), L({I(1), S("")}), L({S(""), I(1)})}));
  CHECK(args_of("{a:{b:[1,{c:d}]}}") == L({M({{"a", M({{"b", L({I(1), M({{"c", S("d")}})})}})}})}));
  CHECK(args_of("{-a.b/c:1, a b: 2, a\\,b: 3}") == L({M({{"-a.b/c", I(1)}, {"a b", I(2)}, {"a,b", I(3)}})}));
  CHECK(args_of("{a:1, a:2}") == L({M({{"a", I(2)}})}));
  CHECK(args_of("{a: ${x}}, [a, 'b c', ${x}]") == L({M({{"a", I(5)}}), L({S("a"), S("b c"), I(5)})}));

  const Node typed_keys = args_of("{1:a, null:b, 1.5: c}").items()[0];
  REQUIRE(typed_keys.entries().size() == 3);
  CHECK(typed_keys.entries()[0].key == "1");
  CHECK(typed_keys.entries()[0].key_type == NodeType::kInt);
  CHECK(typed_keys.entries()[1].key_type == NodeType::kNull);
  CHECK(typed_keys.entries()[2].key == "1.5");
  CHECK(typed_keys.entries()[2].key_type == NodeType::kFloat);
}

TEST_CASE("malformed resolver arguments are syntax errors") {
  // OmegaConf: GrammarParseError ("token recognition error" / "mismatched input").
  for (const char* args : {"'it''s'", "{'a':1}", "a=b", "(x)", "#", "a#b", "~", "!", "a&b", "a;b", "<>", "a^b", "'x' y",
                           "a'b", "{a:1,}", "{a:}", "[1", "'open"}) {
    CHECK_THAT(error_of(std::string("${test.args:") + args + "}"), Contains("cannot parse the interpolation"));
  }
}

TEST_CASE("resolver names: blanks, dots, nested interpolations, unknown names") {
  CHECK(value_of("${ test.args : 1 }") == L({I(1)}));
  CHECK(value_of("pre ${times_two:5} post") == S("pre 10 post"));
  const std::string unknown = error_of("${nope:1}");
  CHECK_THAT(unknown, Contains("unknown resolver 'nope'"));
  CHECK_THAT(unknown, Contains("oc.env"));
  CHECK_THAT(unknown, Contains("times_two"));
  CHECK_THAT(error_of("${times_tow:1}"), Contains("Did you mean 'times_two'?"));
  CHECK_THAT(error_of("${x:}"), Contains("unknown resolver 'x'"));
  CHECK_THAT(error_of("${oc.${s}:1}"), Contains("unknown resolver 'oc.str'"));
  CHECK_THAT(error_of("${foo-bar:1}"), Contains("unknown resolver 'foo-bar'"));
}

TEST_CASE("a resolver's string result is not resolved again") {
  CHECK(value_of("${test.literal:}") == S("${x}"));
  CHECK(value_of("a_${test.literal:}") == S("a_${x}"));
}

TEST_CASE("TRAINER_REGISTER_RESOLVER registers a custom resolver") {
  CHECK(value_of("${times_two:21}") == I(42));
  CHECK(value_of("${times_two:${x}}") == I(10));
  const std::string message = error_of("${times_two:abc}");
  CHECK_THAT(message, Contains("sub.v"));
  CHECK_THAT(message, Contains("times_two: needs one int"));
}

TEST_CASE("the registry lists built-ins and refuses taken or malformed names") {
  auto names = ResolverRegistry::global().names();
  for (const char* builtin : {"oc.env", "oc.select", "oc.create", "oc.decode", "oc.deprecated", "oc.dict.keys",
                              "oc.dict.values", "now", "hydra"}) {
    CHECK(std::find(names.begin(), names.end(), builtin) != names.end());
  }
  CHECK(ResolverRegistry::global().find("times_two") != nullptr);
  CHECK(ResolverRegistry::global().find("nope") == nullptr);
  CHECK_THROWS_WITH(ResolverRegistry::global().add("times_two", echo_args), Contains("already registered"));
  CHECK_THROWS_WITH(ResolverRegistry::global().add("oc.env", echo_args), Contains("already registered"));
  CHECK_THROWS_WITH(ResolverRegistry::global().add("bad name", echo_args), Contains("not a valid resolver name"));
  CHECK_THROWS_WITH(ResolverRegistry::global().add("a..b", echo_args), Contains("not a valid resolver name"));
}

TEST_CASE("oc.env reads environment variables as strings") {
  setenv("TRAINER_TEST_TV", "3", 1);
  setenv("TRAINER_TEST_TI", "${x}", 1);
  setenv("TRAINER_TEST_TE", "", 1);
  unsetenv("TRAINER_TEST_UNSET");
  CHECK(value_of("${oc.env:TRAINER_TEST_TV}") == S("3"));
  CHECK(value_of("${oc.env:TRAINER_TEST_TI}") == S("${x}"));  // not resolved again
  CHECK(value_of("${oc.env:TRAINER_TEST_TE}") == S(""));
  CHECK(value_of("${oc.env:TRAINER_TEST_TV,7}") == S("3"));
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,null}").is_null());
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,5}") == S("5"));
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,'5'}") == S("5"));
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,1.5}") == S("1.5"));
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,[1,2]}") == S("[1, 2]"));
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,${x}}") == S("5"));
  CHECK(value_of("${oc.env:TRAINER_TEST_UNSET,}") == S(""));
  CHECK(value_of("x_${oc.env:TRAINER_TEST_UNSET,null}") == S("x_None"));
  CHECK(value_of("${oc.env:TRAINER_TEST_TV}_x") == S("3_x"));
  const std::string unset = error_of("${oc.env:TRAINER_TEST_UNSET}");
  CHECK_THAT(unset, Contains("TRAINER_TEST_UNSET"));
  CHECK_THAT(unset, Contains("Environment variable 'TRAINER_TEST_UNSET' not found"));
  CHECK_THAT(error_of("${oc.env:}"), Contains("oc.env takes 1 to 2 arguments"));
  CHECK_THAT(error_of("${oc.env:1}"), Contains("str expected, not int"));
}

TEST_CASE("oc.select selects with a default") {
  CHECK(value_of("${oc.select:x}") == I(5));
  CHECK(value_of("${oc.select:nope}").is_null());
  CHECK(value_of("${oc.select:nope,7}") == I(7));
  CHECK(value_of("${oc.select:nope,null}").is_null());
  CHECK(value_of("${oc.select:m,7}") == I(7));  // ??? counts as absent
  CHECK(value_of("${oc.select:m}").is_null());
  CHECK(value_of("${oc.select:n,7}").is_null());  // null is a value
  CHECK(value_of("${oc.select:.y}") == I(1));
  CHECK(value_of("${oc.select:.nope,def}") == S("def"));
  CHECK(value_of("${oc.select:..d.k}") == S("v"));
  CHECK(value_of("${oc.select:d}") == M({{"k", S("v")}, {"j", I(5)}, {"r", S("v")}}));
  CHECK(value_of("${oc.select:d.j}") == I(5));
  CHECK(value_of("${oc.select:l.1}") == I(5));
  CHECK(value_of("${oc.select:'x'}") == I(5));
  CHECK(value_of("${oc.select:${s}}").is_null());
}

TEST_CASE("oc.create makes a config node") {
  CHECK(value_of("${oc.create:{a:1,b:[1,2]}}") == M({{"a", I(1)}, {"b", L({I(1), I(2)})}}));
  CHECK(value_of("${oc.create:[1,2]}") == L({I(1), I(2)}));
  CHECK(value_of("${oc.create:'a: 1'}") == M({{"a", I(1)}}));
  CHECK(value_of("${oc.create:${d}}") == M({{"k", S("v")}, {"j", I(5)}, {"r", S("v")}}));
  CHECK(value_of("${oc.create:{a:'${x}'}}") == M({{"a", S("5")}}));
  CHECK(value_of("${oc.create:'{a: ${x}}'}") == M({{"a", I(5)}}));
  CHECK(value_of("${oc.create:null}").is_null());
  CHECK_THAT(error_of("${oc.create:5}"), Contains("Object of unsupported type: 'int'"));
  CHECK_THAT(error_of("${oc.create:true}"), Contains("Object of unsupported type: 'bool'"));
}

TEST_CASE("oc.decode parses a string as one grammar element") {
  CHECK(value_of("${oc.decode:'1'}") == I(1));
  CHECK(value_of("${oc.decode:'1.5'}") == F(1.5));
  CHECK(value_of("${oc.decode:'[1,2,abc]'}") == L({I(1), I(2), S("abc")}));
  CHECK(value_of("${oc.decode:'{a:1}'}") == M({{"a", I(1)}}));
  CHECK(value_of("${oc.decode:'true'}") == B(true));
  CHECK(value_of("${oc.decode:'null'}").is_null());
  CHECK(value_of("${oc.decode:'abc'}") == S("abc"));
  CHECK(value_of("${oc.decode:' 12 '}") == S(" 12 "));
  CHECK(value_of("${oc.decode:'\\${x}'}") == I(5));
  CHECK(value_of("${oc.decode:${esc}}") == I(5));
  CHECK(value_of("${oc.decode:'0x10'}") == S("0x10"));
  CHECK(value_of("${oc.decode:'inf'}") == F(HUGE_VAL));
  CHECK(value_of("${oc.decode:null}").is_null());
  CHECK(value_of("${oc.decode:'${s}'}") == S("str"));
  CHECK_THAT(error_of("${oc.decode:'a, b'}"), Contains("oc.decode cannot parse"));
  CHECK_THAT(error_of("${oc.decode:''}"), Contains("oc.decode cannot parse"));
  CHECK_THAT(error_of("${oc.decode:5}"),
             Contains("`oc.decode` can only take strings or None as input, but `5` is of type int"));
  CHECK_THAT(error_of("${oc.decode:true}"),
             Contains("`oc.decode` can only take strings or None as input, but `True` is of type bool"));
}

TEST_CASE("--resolve (OmegaConf.resolve) cannot store a list or dict from oc.decode") {
  // Observed in OmegaConf 2.3: OmegaConf.resolve fails with "Value 'list' is not a supported
  // primitive type" for ${oc.decode:'[1, 2]'}; scalars and oc.create containers are fine.
  ResolveContext strict;
  strict.omegaconf_resolve = true;
  CHECK_THAT(error_of("${oc.decode:'[1,2]'}", strict), Contains("oc.decode"));
  CHECK_THAT(error_of("${oc.decode:'{a:1}'}", strict), Contains("oc.decode"));
  CHECK(value_of("${oc.decode:'5'}", strict) == I(5));
  CHECK(value_of("${oc.create:[1,2]}", strict) == L({I(1), I(2)}));
}

TEST_CASE("oc.dict.keys and oc.dict.values") {
  CHECK(value_of("${oc.dict.keys:d}") == L({S("k"), S("j"), S("r")}));
  CHECK(value_of("${oc.dict.keys:.}") == L({S("y"), S("v")}));
  CHECK(value_of("${oc.dict.keys:..d}") == L({S("k"), S("j"), S("r")}));
  CHECK(value_of("${oc.dict.keys:''}") ==
        L({S("x"), S("s"), S("f"), S("m"), S("n"), S("l"), S("d"), S("esc"), S("sub")}));
  CHECK(value_of("${oc.dict.values:d}") == L({S("v"), I(5), S("v")}));
  // OmegaConf 2.3's messages.
  CHECK_THAT(error_of("${oc.dict.keys:nope}"), Contains("Key not found: 'nope'"));
  CHECK_THAT(error_of("${oc.dict.keys:l}"),
             Contains("`oc.dict.keys` cannot be applied to objects of type: ListConfig"));
  CHECK_THAT(error_of("${oc.dict.values:s}"), Contains("`oc.dict.values` cannot be applied to objects of type: str"));
  CHECK_THAT(error_of("${oc.dict.keys:n}"), Contains("`oc.dict.keys` cannot be applied to objects of type: NoneType"));
  CHECK_THAT(error_of("${oc.dict.keys:m}"), Contains("Missing mandatory value: m"));
  CHECK_THAT(error_of("${oc.dict.values:5}"),
             Contains("`oc.dict.values` requires a string as input, but obtained `5` of type: int"));
}

TEST_CASE("oc.deprecated gives the new key's value (OmegaConf 2.3)") {
  CHECK(value_of("${oc.deprecated:x}") == I(5));
  CHECK(value_of("${oc.deprecated:d.j}") == I(5));
  CHECK(value_of("${oc.deprecated:.y}") == I(1));
  CHECK(value_of("${oc.deprecated:..d.k}") == S("v"));
  CHECK(value_of("${oc.deprecated:d}") == M({{"k", S("v")}, {"j", I(5)}, {"r", S("v")}}));
  CHECK(value_of("${oc.deprecated:n}").is_null());
  CHECK(value_of("${oc.deprecated:x,'custom $OLD_KEY -> $NEW_KEY'}") == I(5));
  CHECK_THAT(error_of("${oc.deprecated:nope}"),
             Contains("In oc.deprecated resolver at 'sub.v': Key not found: 'nope'"));
  CHECK_THAT(error_of("${oc.deprecated:5}"), Contains("oc.deprecated: interpolation key type is not a string (int)"));
  CHECK_THAT(error_of("${oc.deprecated:x,${d}}"),
             Contains("oc.deprecated: interpolation message type is not a string (DictConfig)"));
  CHECK_THAT(error_of("${oc.deprecated:x,a,b}"), Contains("oc.deprecated takes 1 to 2 arguments"));
}

TEST_CASE("now formats the run's start time, the same everywhere") {
  std::tm local{};
  local.tm_year = 2024 - 1900;
  local.tm_mon = 2;
  local.tm_mday = 5;
  local.tm_hour = 7;
  local.tm_min = 8;
  local.tm_sec = 9;
  local.tm_isdst = -1;
  ResolveContext context;
  context.now = std::chrono::system_clock::from_time_t(std::mktime(&local)) + std::chrono::microseconds(1234);
  CHECK(value_of("${now:%Y-%m-%d}", context) == S("2024-03-05"));
  CHECK(value_of("outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}", context) == S("outputs/2024-03-05/07-08-09"));
  CHECK(value_of("${now:%H:%M:%S.%f}", context) == S("07:08:09.001234"));
  CHECK(value_of("${now:%%f}", context) == S("%f"));
}

TEST_CASE("hydra reads the hydra config") {
  Node hydra = load_yaml_string(
                   "runtime:\n  output_dir: /out/run\n  choices: '\?\?\?'\njob:\n  name: train\n  num: 3\n"
                   "run:\n  dir: outputs/${sub.y}_${hydra.job.name}\n",
                   "hydra.yaml")
                   .root;
  ResolveContext context;
  context.hydra = &hydra;
  CHECK(value_of("${hydra:runtime.output_dir}", context) == S("/out/run"));
  CHECK(value_of("${hydra:job.name}_${hydra:job.num}", context) == S("train_3"));
  CHECK(value_of("${hydra:job.num}", context) == I(3));
  // Hydra selects with OmegaConf.select, which gives None for ??? (`--cfg job --resolve` prints
  // `output_dir: null` before the run directory exists).
  CHECK(value_of("${hydra:runtime.choices}", context).is_null());
  // Hydra values resolve in the whole config: they may refer to job values and to hydra.*.
  CHECK(value_of("${hydra:run.dir}", context) == S("outputs/1_train"));
  const std::string absent = error_of("${hydra:job.nam}", context);
  CHECK_THAT(absent, Contains("hydra.job.nam not found"));
  CHECK_THAT(absent, Contains("Did you mean '${hydra:job.name}'?"));
  CHECK_THAT(error_of("${hydra:job.name}"), Contains("needs the hydra config"));

  // The hydra node may also live in the config itself.
  Node root = fixture("${hydra:job.name}");
  root.set("hydra", hydra);
  context.hydra = root.find("hydra");
  resolve_all(root, context);
  CHECK(*root.find("sub")->find("v") == S("train"));
  CHECK(*root.find("hydra")->find("run")->find("dir") == S("outputs/1_train"));
}
