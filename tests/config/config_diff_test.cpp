#include "trainer/config/config_diff.h"

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"

using trainer::config::config_differences;
using trainer::config::load_yaml_string;

TEST_CASE("config_differences lists changed, removed and added leaves by dotted key", "[config]") {
  const auto before = load_yaml_string(
                          "model:\n  name: mlp\n  hidden_sizes: [256, 128]\n  dropout: 0.1\n"
                          "seed: 1\nprecision: 32-true\n",
                          "before")
                          .root;
  const auto after = load_yaml_string(
                         "model:\n  name: mlp\n  hidden_sizes: [64]\n"
                         "seed: 1\nprecision: 32-true\nextra: {a: 1}\n",
                         "after")
                         .root;
  const auto differences = config_differences(before, after);
  REQUIRE(differences.size() == 3);
  CHECK(differences[0].key == "model.hidden_sizes");
  CHECK(differences[0].before == "[256, 128]");
  CHECK(differences[0].after == "[64]");
  CHECK(differences[1].key == "model.dropout");
  CHECK(differences[1].after == "(absent)");
  CHECK(differences[2].key == "extra");
  CHECK(differences[2].before == "(absent)");
  CHECK(differences[2].after == "{'a': 1}");
}

TEST_CASE("config_differences of equal configs is empty; an int and a float differ", "[config]") {
  const auto a = load_yaml_string("a: {b: [1, 2], c: x}\nn: 1\n", "a").root;
  CHECK(config_differences(a, a).empty());
  const auto b = load_yaml_string("a: {b: [1, 2], c: x}\nn: 1.0\n", "b").root;
  const auto differences = config_differences(a, b);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].key == "n");
}
