// The Tree-structured Parzen Estimator, as Optuna's TPESampler (5.0) defines it, for the
// model-based sweeper (hydra/sweeper=optuna). A pure class: no processes, no files.
//
// Until `n_startup_trials` trials have completed or been pruned, parameters are drawn at random
// (uniformly; log-uniformly with `log`). After that, the finished trials are split: the best
// gamma(n) = min(ceil(n / 10), 25) of the n complete and pruned ones are "below" (pruned ones rank
// after every complete one, by the last step they reached and then by their value there), the rest
// and, with `constant_liar`, the running ones are "above". Each side gets a Parzen estimator: one
// kernel per trial (a truncated normal at the trial's value whose width is the larger gap to its
// neighbours, clipped to [range / min(100, n + 2), range]; for categories, the trial's choice
// plus prior_weight / (n + 1) spread over all) plus a prior kernel (the whole range, or uniform),
// weighted by Optuna's default_weights (older trials ramp down once there are more than 25) and
// prior_weight. `n_ei_candidates` draws from "below" are scored by log l(x) − log g(x) and the best
// is returned. With `multivariate` the kernels of one trial are joint across parameters; without,
// each parameter is sampled on its own, in order. Log parameters are modelled in log space;
// stepped ones as the mass of their grid cell.
//
// Draws come from one std::mt19937_64 seeded with SplitMix64's mix of `seed` (config::SweepRandom's
// arithmetic); its
// state can be saved and restored, so a resumed search draws what the uninterrupted one would.
// Optuna draws from numpy's generator: the two make different trials from the same seed, and are
// compared by the quality they reach (tests/launch/tpe_quality_test.cpp, docs/sweepers.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainer/config/random_sweep.h"

namespace trainer::launch {

// One searched parameter, as Optuna's distributions define it. Values are held as doubles: a
// float, an integer, or for a categorical parameter the index of its choice.
struct SearchParam {
  enum class Kind { kFloat, kInt, kCategorical };
  std::string name;
  Kind kind = Kind::kFloat;
  double low = 0, high = 0;  // both included; high is on the step grid (make_* moves it down)
  double step = 0;           // kFloat: 0 for continuous; kInt: >= 1
  bool log = false;
  int64_t choices = 0;  // kCategorical: how many

  // low == high or a single choice: nothing to search.
  bool single() const;
};

// Throw trainer::Error naming `name` for an empty range, a log range not above 0, a step <= 0 or
// a log range with a step (Optuna's rules).
SearchParam float_param(std::string name, double low, double high, double step = 0, bool log = false);
SearchParam int_param(std::string name, int64_t low, int64_t high, int64_t step = 1, bool log = false);
SearchParam categorical_param(std::string name, int64_t choices);

enum class TrialState { kRunning, kComplete, kPruned, kFailed };

struct SearchTrial {
  int64_t number = 0;
  TrialState state = TrialState::kRunning;
  std::vector<double> params;              // one per search-space parameter, in order
  double value = 0;                        // kComplete: the objective
  std::map<int64_t, double> intermediate;  // step -> reported value (ranks pruned trials)
};

struct TpeOptions {
  int64_t n_startup_trials = 10;
  int64_t n_ei_candidates = 24;
  uint64_t seed = 0;
  bool multivariate = true;  // Optuna 5's default for one objective; Hydra's config says false
  bool constant_liar = true;
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool maximize = false;  // the study's direction
};

class TpeSampler {
 public:
  // Throws trainer::Error for an empty space or options out of range (n_ei_candidates < 1,
  // n_startup_trials < 0, prior_weight < 0).
  TpeSampler(std::vector<SearchParam> space, TpeOptions options);

  // The parameters of the next trial, one per search-space parameter, given every trial of the
  // study so far (the one being asked for not among them).
  std::vector<double> ask(const std::vector<SearchTrial>& trials);

  // A uniform random point of the space (the start-up trials).
  std::vector<double> random_point();

  // The generator's state as text, and back: a resumed search continues the same draws.
  std::string rng_state() const { return rng_.state(); }
  void set_rng_state(const std::string& state) { rng_.set_state(state); }

  const std::vector<SearchParam>& space() const { return space_; }
  const TpeOptions& options() const { return options_; }

 private:
  std::vector<double> sample(const std::vector<size_t>& params, const std::vector<const SearchTrial*>& below,
                             const std::vector<const SearchTrial*>& above);
  std::vector<SearchParam> space_;
  TpeOptions options_;
  config::SweepRandom rng_;
};

}  // namespace trainer::launch
