// Completion candidates for whole lines without a shell, over tests/data/completion/app (a tree
// shaped like Hydra's own completion test tree). The real binary and real shells:
// tests/e2e/shell_completion_test.cpp; keys of a config: tests/config/key_completion_test.cpp.
#include "trainer/launch/shell_completion.h"

#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

namespace fs = std::filesystem;
using namespace trainer::launch;
using Words = std::vector<std::string>;

namespace {

// The composer a line would get: the tree under tests/data/completion (-cp app by default).
trainer::config::Composer composer_for(const CompletionTree& tree, const std::vector<trainer::config::Override>&) {
  const fs::path root = fs::path(TRAINER_TEST_DATA_DIR) / "completion";
  trainer::config::ComposerOptions options;
  options.search_path = {{"main", "file://" + (root / tree.config_path.value_or("app")).string()}};
  if (tree.config_dir) options.search_path.push_back({"command-line", "file://" + (root / *tree.config_dir).string()});
  options.config_name = tree.config_name.value_or("config");
  return trainer::config::Composer(std::move(options));
}

Words complete(const std::string& line) { return completion_candidates(line, {}, composer_for); }

}  // namespace

TEST_CASE("a line: groups, their options, keys of the config it composes, and files") {
  CHECK(complete("trainer fit ") ==
        Words{"dict.", "dict_prefix=", "group=", "hydra", "hydra.", "list.", "list_prefix=", "test_hydra/"});
  CHECK(complete("trainer fit group=") == Words{"group=dict", "group=list"});
  CHECK(complete("trainer fit +gro") == Words{"+group="});
  CHECK(complete("trainer fit ~gro") == Words{"~group"});
  CHECK(complete("trainer fit test_hydra/") == Words{"test_hydra/launcher="});
  // The group chosen earlier on the line is composed in.
  CHECK(complete("trainer fit group=dict toys.") == Words{"toys.andy=", "toys.list.", "toys.slinky="});
  // A sweep composes only as a multirun, without its values.
  CHECK(complete("trainer fit group=dict,list list.").empty());
  CHECK(complete("trainer fit -m group=dict,list list.") == Words{"list.0=", "list.1=", "list.2="});
  // A malformed earlier override: nothing, as in Hydra.
  CHECK(complete("trainer fit dict.key1=[1 di").empty());
  // The line's -cn and -cd.
  CHECK(complete("trainer fit -cn missing_default ") == Words{"group=", "hydra", "test_hydra/"});
  CHECK(complete("trainer fit -cd extra gro") == Words{"group="});
  CHECK(complete("trainer fit -cd extra group=") == Words{"group=dict", "group=file_opt", "group=list"});
}

TEST_CASE("a line: commands, flags and their values where Hydra's parser gives up") {
  CHECK(complete("trainer ") == Words{"data", "export", "fit", "predict", "sweep", "test", "tune", "validate"});
  CHECK(complete("trainer v") == Words{"validate"});
  CHECK(complete("trainer tune ") == Words{"batch_size"});
  CHECK(complete("trainer data ") == Words{"pack"});
  CHECK(complete("trainer data pack gro") == Words{"group="});
  CHECK(complete("trainer tune batch_size gro") == Words{"group="});
  CHECK(complete("trainer sweep su") == Words{"summary"});
  CHECK(complete("trainer fit --mu") == Words{"--multirun"});
  CHECK(complete("trainer fit -c ") == Words{"all", "hydra", "job"});
  CHECK(complete("trainer fit -c job ") == complete("trainer fit "));  // Hydra's answer
  CHECK(complete("trainer fit -i ") == complete("trainer fit "));
  CHECK(complete("trainer fit --info def") == Words{"defaults", "defaults-tree"});
  CHECK(complete("trainer fit --info dict.") == Words{"dict.key1=", "dict.key2=", "dict.key3="});
  CHECK(complete("trainer fit -cn m") == Words{"missing_default"});
  CHECK(complete("trainer fit --config-name=m") == Words{"--config-name=missing_default"});
}
