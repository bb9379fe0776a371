// --hydra-help's parts: Hydra's flag list with the program's completion commands, the config
// groups, and Python's string.Template substitution of the template.
#include "trainer/launch/hydra_help.h"

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using namespace trainer::launch;

TEST_CASE("the flags name the program in the completion commands") {
  const std::string flags = hydra_flags_help("my_trainer");
  CHECK(flags.find("--shell-completion,-sc : Install or Uninstall shell completion:\n    Bash - Install:\n"
                   "    eval \"$(my_trainer -sc install=bash)\"\n") != std::string::npos);
  CHECK(flags.find("    my_trainer -sc uninstall=fish | source\n") != std::string::npos);
  CHECK(flags.rfind("Overrides : ", std::string::npos) != std::string::npos);
  CHECK(flags.back() != '\n');  // the template puts the line break after $FLAGS_HELP
}

TEST_CASE("the config groups: hydra's and the app's apart, with their options") {
  trainer::config::ComposerOptions options;
  options.search_path = {{"main", std::string("file://") + TRAINER_TEST_DATA_DIR + "/completion/app"}};
  trainer::config::Composer composer(std::move(options));
  const std::string hydra = config_groups_help(composer, true);
  CHECK(hydra.find("hydra: config\nhydra/env: default\n") == 0);
  CHECK(hydra.find("hydra/launcher: basic, fairtask, joblib, local, slurm, submitit_slurm\n") != std::string::npos);
  CHECK(config_groups_help(composer, false) == "group: dict, list\ntest_hydra/launcher: fairtask\n");
}

TEST_CASE("the template is substituted as Python's string.Template does") {
  const std::map<std::string, std::string> values = {{"A", "1"}, {"B_2", "two"}};
  CHECK(substitute_template("$A $$A $Ax", {{"A", "1"}, {"Ax", "y"}}, "t") == "1 $A y");
  CHECK(substitute_template("a$A.b ${B_2}c", values, "t") == "a1.b twoc");
  CHECK_THROWS_AS(substitute_template("$C", values, "t"), trainer::Error);
  CHECK_THROWS_AS(substitute_template("cost: 5 $", values, "t"), trainer::Error);
  CHECK_THROWS_AS(substitute_template("${A", values, "t"), trainer::Error);
}
