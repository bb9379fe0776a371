// ASHA (asynchronous successive halving), as Ray Tune's ASHAScheduler defines it with one bracket:
// rungs at grace_period * reduction_factor^k epochs (k = 0, 1, ... while <= max_t). When a job
// first reaches a rung it is stopped if its metric is below the (1 - 1/reduction_factor) quantile
// (numpy's linear percentile) of the results recorded at that rung so far, i.e. not in their top
// 1/reduction_factor; either way its result is recorded there. The first job at a rung always goes
// on. Results are compared as rewards: the metric for mode max, minus the metric for mode min.
// A job that skips rungs (reports t=5 after t=3) is judged at the highest rung it passed only.
// Differences from Ray, where Ray's behaviour does not suit a training run: a NaN metric is
// stopped (Ray keeps it running); reaching max_t gives kComplete rather than a stop, so a job
// whose own max_epochs equals max_t is not cut off during its final validation/test.
// A pure class: no processes, no files. The local launcher feeds it each job's per-epoch metric.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::launch {

struct AshaOptions {
  std::string metric;           // a logged metric name, e.g. "val/acc"
  std::string mode = "min";     // "min" or "max"
  int64_t max_t = 100;          // epochs: the most any job is given
  int64_t grace_period = 1;     // epochs before the first cut
  double reduction_factor = 4;  // keep the top 1/reduction_factor at each rung (> 1)
};

// hydra.sweeper's ASHA settings (hydra/sweeper=asha). metric and mode null: the job's monitored
// metric and its mode (callbacks.model_checkpoint.monitor / .mode of `job_config`). Throws
// trainer::Error naming hydra.sweeper.<key> for a missing or invalid setting.
AshaOptions asha_options(const config::Node& hydra_sweeper_node, const config::Node& job_config);

class AshaScheduler {
 public:
  enum class Decision {
    kContinue,  // keep training
    kStop,      // cut at a rung (or NaN metric): stop the job now, it is stopped early
    kComplete,  // the job has had max_t epochs: it may stop, it has used its whole budget
  };

  // Throws trainer::Error naming hydra.sweeper.<key> for invalid options.
  explicit AshaScheduler(AshaOptions options);

  // Job `job` has finished `t` epochs with `metric` (the value logged for that epoch).
  Decision on_result(int job, int64_t t, double metric);

  const AshaOptions& options() const { return options_; }
  // The rungs' epoch milestones, ascending.
  std::vector<double> milestones() const;
  // How many results rung `k` (0 = lowest) has recorded.
  size_t recorded_at(size_t k) const;

 private:
  struct Rung {
    double milestone = 0;
    std::map<int, double> rewards;  // job -> reward recorded at this rung
  };
  AshaOptions options_;
  std::vector<Rung> rungs_;  // descending milestones, as Ray walks them
};

// "continue", "stop", "complete".
const char* decision_name(AshaScheduler::Decision decision);

}  // namespace trainer::launch
