#include "trainer/config/repeated_overrides.h"

#include <catch2/catch.hpp>

using trainer::config::parse_overrides;
using trainer::config::repeated_override_warnings;

TEST_CASE("a key set twice warns that the last wins; a shell's brace expansion is shown quoted", "[config]") {
  // bash turns data.shards=/d/train-{000000..000002}.tar into three overrides.
  auto warnings = repeated_override_warnings(
      parse_overrides({"model=cnn", "data.shards=/d/train-000000.tar", "data.shards=/d/train-000001.tar",
                       "data.shards=/d/train-000002.tar", "seed=1"}));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "data.shards is set 3 times on the command line (data.shards=/d/train-000000.tar, "
        "data.shards=/d/train-000001.tar, data.shards=/d/train-000002.tar): the last one, "
        "data.shards=/d/train-000002.tar, wins, as in Hydra. If the shell expanded a brace pattern into these, "
        "quote it to pass it whole: \"data.shards='/d/train-{000000..000002}.tar'\".");

  // Numbers from a pattern were meant as one job each: a sweep, not a quoted string.
  warnings = repeated_override_warnings(parse_overrides({"optimizer.lr=0.1", "optimizer.lr=0.2"}));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "optimizer.lr is set 2 times on the command line (optimizer.lr=0.1, optimizer.lr=0.2): the last one, "
        "optimizer.lr=0.2, wins, as in Hydra. If the shell expanded a brace pattern (optimizer.lr=0.{1..2}) into "
        "these, meaning one job per value, sweep them in one override: -m optimizer.lr=0.1,0.2.");

  // Values a brace pattern would not give (not consecutive numbers): the warning alone.
  warnings = repeated_override_warnings(parse_overrides({"seed=1", "optimizer.lr=0.1", "seed=7"}));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "seed is set 2 times on the command line (seed=1, seed=7): the last one, seed=7, wins, as in "
        "Hydra.");
  // Consecutive values apart on the command line were typed so, not expanded by a shell (which
  // writes them side by side).
  warnings = repeated_override_warnings(parse_overrides({"trainer.max_epochs=2", "seed=1", "trainer.max_epochs=3"}));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "trainer.max_epochs is set 2 times on the command line (trainer.max_epochs=2, trainer.max_epochs=3): the "
        "last one, trainer.max_epochs=3, wins, as in Hydra.");
  warnings = repeated_override_warnings(parse_overrides({"model=cnn", "model=mlp"}));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("If the shell") == std::string::npos);

  // Keys set once, sweeps, additions and deletions: nothing to say.
  CHECK(repeated_override_warnings(parse_overrides({"seed=1,2", "seed=3", "+x=1", "~y", "a=1", "b=1"})).empty());
}
