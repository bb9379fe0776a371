// hydra/sweeper=optuna: Hydra's Optuna sweeper's configuration, read unchanged
// (hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper), and its search space.
//   sampler     _target_ optuna.samplers.TPESampler (its keys: seed, n_startup_trials,
//               n_ei_candidates, multivariate, constant_liar, prior_weight, consider_magic_clip,
//               consider_endpoints; consider_prior and warn_independent_sampling accepted) or
//               optuna.samplers.RandomSampler (seed); any other sampler is refused by name
//   direction   minimize | maximize (a list of several: refused, one objective only)
//   n_trials, n_jobs, study_name, storage (null or a file path; a database URL is refused),
//   max_failure_rate, params (the override grammar: choice, a,b,c, range, interval,
//               tag(log, interval), int(interval)), metric (trainer's: the objective's name)
// Each parameter becomes an Optuna distribution the way Hydra's sweeper makes it: choice and
// a,b,c categorical; range(a, b, s) an int (or, with a float, a stepped float) distribution from
// a to b *inclusive*; interval a float one; int(interval) an int one; tag(log, ...) log-scaled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/launch/tpe_sampler.h"

namespace trainer::launch {

inline constexpr std::string_view kOptunaSweeperTarget =
    "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper";

// hydra.sweeper.pruner (trainer's; Hydra's Optuna sweeper has none): stops trials whose per-epoch
// objective falls behind, as Optuna's pruners do.
//   null, none, or _target_ optuna.pruners.NopPruner       no pruning
//   median, or _target_ optuna.pruners.MedianPruner       n_startup_trials (5), n_warmup_steps (0),
//        interval_steps (1), n_min_trials (1): after epoch s a trial stops when its best value so
//        far is worse than the median of the completed trials' values at epoch s
//   successive_halving, or _target_ optuna.pruners.SuccessiveHalvingPruner   min_resource (1; "auto"
//        reads as 1), reduction_factor (4), min_early_stopping_rate (0): ASHA's rungs
//        (launch/asha.h) at min_resource * reduction_factor^(rate + k) epochs
struct PrunerSettings {
  enum class Kind { kNone, kMedian, kSuccessiveHalving };
  Kind kind = Kind::kNone;
  int64_t n_startup_trials = 5;
  int64_t n_warmup_steps = 0;
  int64_t interval_steps = 1;
  int64_t n_min_trials = 1;
  int64_t min_resource = 1;
  double reduction_factor = 4;
  int64_t min_early_stopping_rate = 0;
};

// "median (n_startup_trials=5, ...)" for the study's first line.
std::string pruner_text(const PrunerSettings& pruner);

struct OptunaSettings {
  enum class Sampler { kTpe, kRandom };
  Sampler sampler = Sampler::kTpe;
  TpeOptions tpe;  // tpe.maximize from direction, tpe.seed from the sampler's seed
  bool seeded = false;
  int64_t n_trials = 20;
  int64_t n_jobs = 2;
  std::string study_name;  // empty: the sweep directory's name
  std::string storage;     // empty: <sweep_dir>/.sweep/study.json
  double max_failure_rate = 0;
  std::string metric;       // the objective
  std::string metric_from;  // the key that named it, for the sweep's first line
  std::string warning;      // a direction that contradicts the monitor's mode, said at the start
  PrunerSettings pruner;
};

// The sweeper's settings. `job_config` is a composed job config: the objective is
// `optimized_metric` (lightning-hydra-template's key), else hydra.sweeper.metric, else the
// checkpoint's monitor (callbacks.model_checkpoint.monitor). direction null (trainer's default):
// the monitor's mode when the monitor is the objective, else minimize (Optuna's and Hydra's). Throws trainer::Error
// naming hydra.sweeper.<key>. `sampler_choice` is the hydra/sweeper/sampler option composed
// (hydra.runtime.choices): its settings are the keys the sampler node may hold, as Hydra's
// structured config has it, whatever its _target_ says (random: _target_ and seed).
OptunaSettings optuna_settings(const config::Node& hydra_sweeper_node, const config::Node& job_config,
                               const std::string& sampler_choice = "");

// The searched parameters and how a value becomes a job's override.
struct OptunaSpace {
  std::vector<SearchParam> params;
  std::vector<std::string> keys;                       // the override's key (with +, ++, @pkg)
  std::vector<std::vector<std::string>> choice_texts;  // categorical: each choice's override text
  std::vector<std::string> fixed;                      // non-sweep overrides, as typed

  // `key=value` for each parameter of `point` (SearchTrial::params), in order.
  std::vector<std::string> overrides(const std::vector<double>& point) const;
  // A one-line description of each parameter ("lr: float in [0.0001, 0.1], log"), for the
  // stored study's space check and the sweep's first lines.
  std::vector<std::string> describe() const;
};

// The space of hydra.sweeper.params followed by the command line's overrides (a command-line
// sweep replaces a params entry of the same key; a plain value there fixes it). Throws
// trainer::Error naming the override (glob(), a range with no values, log of a bound <= 0).
OptunaSpace optuna_space(const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                         const std::vector<config::Override>& overrides,
                         const config::GroupOptionsLookup& group_options);

}  // namespace trainer::launch
