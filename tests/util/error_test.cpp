#include "trainer/util/error.h"

#include <catch2/catch.hpp>

TEST_CASE("Error reads as one paragraph: where, problem, fix") {
  trainer::Error error("configs/model/mlp.yaml:3", "unknown key 'hiden_size'", "Did you mean 'hidden_size'?");
  CHECK(std::string(error.what()) == "configs/model/mlp.yaml:3: unknown key 'hiden_size'. Did you mean 'hidden_size'?");
  CHECK(error.where() == "configs/model/mlp.yaml:3");
  CHECK(error.fix() == "Did you mean 'hidden_size'?");
}
