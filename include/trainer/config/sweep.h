// Multirun expansion with the semantics of Hydra's basic sweeper: the cartesian product of all
// sweep overrides (command line first, then `hydra.sweeper.params`), the first sweep varying
// slowest, jobs numbered 0..n-1, each job a list of plain (non-sweep) override strings.
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "trainer/config/override.h"

namespace trainer::config {

struct SweepJob {
  int number = 0;
  std::vector<std::string> overrides;  // every override of this job, as Hydra writes overrides.yaml
};

// Returns the options of a config group ("model" -> {"cnn","mlp"}), or nullopt if `group` is not
// a config group. Used by glob().
using GroupOptionsLookup =
    std::function<std::optional<std::vector<std::string>>(const std::string& group)>;

// `overrides` are the command-line overrides; `sweeper_params` the (key, value-text) pairs of
// `hydra.sweeper.params` (a command-line override of the same key wins). `seed` feeds shuffle.
std::vector<SweepJob> expand_sweep(const std::vector<Override>& overrides,
                                   const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                                   const GroupOptionsLookup& group_options, uint64_t seed = 0);

}  // namespace trainer::config
