// Multirun expansion with the semantics of Hydra's basic sweeper: the cartesian product of all
// sweep overrides, the first sweep varying slowest, jobs numbered 0..n-1, each job a list of plain
// (non-sweep) override strings.
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/override.h"

namespace trainer::config {

struct SweepJob {
  int number = 0;
  // Every override of this job, as Hydra's basic sweeper hands them to the launcher. The job's
  // .hydra/overrides.yaml holds those for which is_hydra_override() is false (in this order);
  // the others go to hydra.overrides.hydra.
  std::vector<std::string> overrides;
};

// True for overrides of Hydra's own config (`hydra.x=...`, `hydra/launcher=...`, with any prefix).
bool is_hydra_override(std::string_view override_text);

// Returns the options of a config group ("model" -> {"cnn","mlp"}), or nullopt if `group` is not
// a config group. Used by glob().
using GroupOptionsLookup = std::function<std::optional<std::vector<std::string>>(const std::string& group)>;

// The values Hydra's basic sweeper enumerates for a sweep, as override value texts, in order.
// `group_options` lists the options of the config group named by the key (for glob); `rng`
// is used by shuffle (Hydra's order is random too). A non-sweep override gives its one value_text.
// Throws trainer::Error for sweeps that cannot be enumerated (interval, a zero range step, glob
// on a key that is not a config group).
std::vector<std::string> sweep_value_texts(const Override& override, const std::vector<std::string>* group_options,
                                           std::mt19937_64& rng);

// One entry of hydra.sweeper.params (a key and its value text) parsed as the override `key=value`.
// A parse error names hydra.sweeper.params.KEY and gives `fix` where the parser has none of its own.
Override parse_sweeper_param(const std::string& key, const std::string& value, const std::string& fix);

// `overrides` are the command-line overrides; `sweeper_params` the (key, value-text) pairs of
// `hydra.sweeper.params`. As in Hydra 1.3 (observed): the params come first, in their order, then
// the command line; an override whose `[prefix]key[@pkg]` was already seen replaces that entry's
// values in place (so a command-line `b=3` beats params `b: 1,2` and keeps the params' slot).
// Non-sweep values are written back re-rendered (`x=1e3` -> `x=1000.0`, `~x` -> `~x=null`), sweep
// values as sweep_value_texts() gives them. `group_options` feeds glob(); `seed` feeds shuffle.
// Throws trainer::Error for sweeps the basic sweeper cannot enumerate.
std::vector<SweepJob> expand_sweep(const std::vector<Override>& overrides,
                                   const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                                   const GroupOptionsLookup& group_options, uint64_t seed = 0);

}  // namespace trainer::config
