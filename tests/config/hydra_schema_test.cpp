// The hydra node's typed fields converted and checked as Hydra 1.3's HydraConf does (values below
// are what `python app.py --cfg hydra <override>` printed or refused with hydra-core 1.3.2).
#include "trainer/config/hydra_schema.h"

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using Catch::Matchers::Contains;
using trainer::Error;
using trainer::config::apply_hydra_schema;
using trainer::config::load_yaml_string;
using trainer::config::Node;
using trainer::config::NodeType;
using trainer::config::select;

namespace {

Node converted(const std::string& yaml) {
  Node hydra = load_yaml_string(yaml, "hydra.yaml").root;
  apply_hydra_schema(hydra);
  return hydra;
}

std::string refusal(const std::string& yaml) {
  try {
    converted(yaml);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("hydra.job.chdir reads yes/no, on/off, ints and their text as OmegaConf's bool does") {
  for (const char* truthy : {"yes", "'1'", "1", "on", "Y", "TRUE", "true", "7"}) {
    INFO(truthy);
    const Node hydra = converted(std::string("job: {chdir: ") + truthy + "}");
    REQUIRE(select(hydra, "job.chdir")->type() == NodeType::kBool);
    CHECK(select(hydra, "job.chdir")->as_bool());
  }
  for (const char* falsy : {"no", "'0'", "0", "off", "n", "false"}) {
    INFO(falsy);
    CHECK_FALSE(select(converted(std::string("job: {chdir: ") + falsy + "}"), "job.chdir")->as_bool());
  }
  CHECK(select(converted("job: {chdir: null}"), "job.chdir")->is_null());
  CHECK_THAT(refusal("job: {chdir: maybe}"), Contains("Value 'maybe' is not a valid bool (type str)"));
  CHECK_THAT(refusal("job: {chdir: 1.5}"), Contains("Value '1.5' is not a valid bool (type float)"));
}

TEST_CASE("str fields take Python's str() of a scalar; int fields an int or its text; lists and dicts convert items") {
  const Node hydra = converted(
      "run:\n  dir: 12\noutput_subdir: 1\nmode: 2\njob:\n  name: 1\n  id: 5\n  num: '7'\n  env_set:\n    X: 1\n"
      "    Y: true\n  config:\n    override_dirname:\n      exclude_keys: [seed, 3]\n");
  CHECK(select(hydra, "run.dir")->as_string() == "12");
  CHECK(select(hydra, "output_subdir")->as_string() == "1");
  CHECK(select(hydra, "job.name")->as_string() == "1");
  CHECK(select(hydra, "job.id")->as_string() == "5");
  CHECK(select(hydra, "job.num")->as_int() == 7);
  CHECK(select(hydra, "job.env_set.X")->as_string() == "1");
  CHECK(select(hydra, "job.env_set.Y")->as_string() == "True");
  CHECK(select(hydra, "job.config.override_dirname.exclude_keys.1")->as_string() == "3");
  CHECK(select(hydra, "mode")->as_string() == "MULTIRUN");
  // ???, interpolations and absent fields are left alone.
  const Node left = converted("job:\n  num: ???\n  name: '${oc.env:USER}'\n");
  CHECK(select(left, "job.num")->is_missing());
  CHECK(select(left, "job.name")->as_string() == "${oc.env:USER}");
}

TEST_CASE("values Hydra refuses for the hydra node are refused with the field's type") {
  CHECK_THAT(refusal("run: {dir: null}"), Contains("field 'hydra.run.dir' is not Optional"));
  CHECK_THAT(refusal("job: {name: null}"), Contains("field 'hydra.job.name' is not Optional"));
  CHECK_THAT(refusal("job: {num: abc}"), Contains("Value 'abc' of type 'str' could not be converted to Integer"));
  CHECK_THAT(refusal("job: {num: true}"), Contains("could not be converted to Integer"));
  CHECK_THAT(refusal("job: {config: {override_dirname: {exclude_keys: a}}}"),
             Contains("hydra.job.config.override_dirname.exclude_keys is List[str]"));
  CHECK_THAT(refusal("job: {env_set: [a]}"), Contains("is not a dict"));
  CHECK_THAT(refusal("run: {dir: [a]}"), Contains("Cannot convert 'list' to string"));
  CHECK_THAT(refusal("mode: multirun"), Contains("expected one of [RUN, MULTIRUN]"));
  CHECK(refusal("output_subdir: null\nmode: null\njob: {chdir: null, config_name: null}").empty());  // Optional
}
