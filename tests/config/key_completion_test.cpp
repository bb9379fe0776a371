// Keys and values a config offers a half-typed key, as Hydra 1.3's completion matches them.
#include "trainer/config/key_completion.h"

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using trainer::config::key_completions;
using trainer::config::Node;
using Words = std::vector<std::string>;

namespace {

Node config_of(const std::string& yaml) { return trainer::config::load_yaml_string(yaml, "test").root; }

const Node kConfig = config_of(
    "dict:\n  key1: val1\n  key2: 2\n  key3: ???\n"
    "dict_prefix: yup\n"
    "list:\n- aa\n- name: x\n- ???\n"
    "flag: true\n"
    "rate: 1.0e-05\n"
    "nothing: null\n"
    "ref: ${dict}\n"
    "hydra: {sweeper: {params: null}}\n");

}  // namespace

TEST_CASE("config keys: a prefix gives keys, `key.` a node's keys, `key=` its value") {
  CHECK(key_completions(kConfig, "dict") == Words{"dict.", "dict_prefix="});
  CHECK(key_completions(kConfig, "dict.") == Words{"dict.key1=", "dict.key2=", "dict.key3="});
  CHECK(key_completions(kConfig, "dict.key1=") == Words{"dict.key1=val1"});
  CHECK(key_completions(kConfig, "dict.key2=") == Words{"dict.key2=2"});
  CHECK(key_completions(kConfig, "dict.key3=") == Words{"dict.key3="});  // ??? offers no value
  CHECK(key_completions(kConfig, "list.") == Words{"list.0=", "list.1.", "list.2="});
  CHECK(key_completions(kConfig, "list.1.") == Words{"list.1.name="});
  // Python's spelling of values: true, not True; 1e-05.
  CHECK(key_completions(kConfig, "flag=") == Words{"flag=true"});
  CHECK(key_completions(kConfig, "rate=") == Words{"rate=1e-05"});
  CHECK(key_completions(kConfig, "nothing=").empty());
  CHECK(key_completions(kConfig, "nope.").empty());
  // An interpolation is a value when listed, and what it points at when selected.
  CHECK(key_completions(kConfig, "re") == Words{"ref="});
  CHECK(key_completions(kConfig, "ref.") == Words{"ref.key1=", "ref.key2=", "ref.key3="});
  // Hydra's schema makes hydra.sweeper.params a dict even when null.
  CHECK(key_completions(kConfig, "hydra.sweeper.") == Words{"hydra.sweeper.params."});
  // Below a value there are no keys: Hydra's completion fails there.
  CHECK_THROWS_AS(key_completions(kConfig, "dict.key1.x"), trainer::Error);
}
