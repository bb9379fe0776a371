// The sweeper chosen by hydra/sweeper turns a multirun's overrides into its jobs:
//   basic  (hydra._internal.core_plugins.basic_sweeper.BasicSweeper): the cartesian product
//          (expand_sweep, Hydra's basic sweeper);
//   random (trainer.sweeper.RandomSweeper): num_samples jobs drawn with a seed (sample_sweep);
//   asha   (trainer.sweeper.AshaSweeper): jobs drawn like random, or the grid when num_samples
//          is null; the launcher stops poor jobs early (trainer/launch/asha.h);
//   optuna (hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper): trials asked for
//          one by one from a TPE or random sampler while the sweep runs (launch/optuna_sweep.h),
//          not planned here.
// See docs/sweepers.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"

namespace trainer::config {

enum class SweeperKind { kBasic, kRandom, kAsha, kOptuna };

inline constexpr std::string_view kBasicSweeperTarget = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper";
inline constexpr std::string_view kRandomSweeperTarget = "trainer.sweeper.RandomSweeper";
inline constexpr std::string_view kAshaSweeperTarget = "trainer.sweeper.AshaSweeper";
inline constexpr std::string_view kOptunaSweeperTarget =
    "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper";

// The kind named by the node's _target_ (a null node or one without _target_: basic). Throws
// trainer::Error naming hydra.sweeper._target_ for a sweeper trainer does not have.
SweeperKind sweeper_kind(const Node& hydra_sweeper_node);

// The jobs of a multirun. `hydra_sweeper_node` is the composed hydra.sweeper node; the other
// arguments are those of expand_sweep (sweep_expansion.h). Throws trainer::Error naming the setting or the
// override at fault (num_samples < 1, interval() under the basic sweeper, log of a non-positive
// bound, ...).
std::vector<SweepJob> make_sweep_jobs(const Node& hydra_sweeper_node, const std::vector<Override>& overrides,
                                      const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                                      const GroupOptionsLookup& group_options);

}  // namespace trainer::config
