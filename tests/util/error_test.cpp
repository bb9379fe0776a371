#include "trainer/util/error.h"

#include <catch2/catch.hpp>

TEST_CASE("Error reads as one paragraph: where, problem, fix") {
  trainer::Error error("configs/model/mlp.yaml:3", "unknown key 'hiden_size'", "Did you mean 'hidden_size'?");
  CHECK(std::string(error.what()) == "configs/model/mlp.yaml:3: unknown key 'hiden_size'. Did you mean 'hidden_size'?");
  CHECK(error.where() == "configs/model/mlp.yaml:3");
  CHECK(error.fix() == "Did you mean 'hidden_size'?");
}

TEST_CASE("after a listing the fix starts a line of its own, as a sentence") {
  trainer::Error error("override 'model=big'", "Could not find 'model/big'\nConfig search path:\n\tpath=file:///c",
                       "choose one of the options listed above");
  CHECK(std::string(error.what()) ==
        "override 'model=big': Could not find 'model/big'\nConfig search path:\n\tpath=file:///c\n"
        "Choose one of the options listed above.");
  // A fix that starts its own line already is kept as it is.
  trainer::Error listed("config", "2 problems:\n  a\n  b", "\nFix them.");
  CHECK(std::string(listed.what()) == "config: 2 problems:\n  a\n  b.\nFix them.");
}
