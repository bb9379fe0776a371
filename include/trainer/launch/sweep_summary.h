// The sweep's results table: <sweep_dir>/sweep_summary.csv and sweep_summary.md (and the metric
// plot sweep_metrics.png), refreshed as jobs finish; `trainer sweep summary DIR` prints it.
// Each job's monitored metric (callbacks.model_checkpoint.monitor / mode of the sweep's first job)
// is read from its run dir's metrics.csv: best and final value, epochs, duration from its status.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainer/launch/job_status.h"
#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// One metric across a run's metrics.csv: the (epoch, value) rows where it is set.
struct MetricHistory {
  std::vector<std::pair<double, double>> points;
  std::optional<double> best, last;
  int64_t epochs = 0;  // epochs with a value of the metric
};

// `mode` is "max" or "min". A missing or unreadable file gives an empty history.
MetricHistory read_metric_history(const std::string& metrics_csv, const std::string& metric, const std::string& mode);

// The metric and mode the sweep reports: callbacks.model_checkpoint.monitor / mode in the first
// job's config (multirun.yaml); val/loss and min when unset. A regression sweep (data.task) whose
// monitor names accuracy reports the loss, as its jobs watch it (task_metrics.h).
std::pair<std::string, std::string> sweep_monitor(const std::string& sweep_dir);

// Which of a job's values names the sweep's best job: the best over its epochs, or (an Optuna
// study whose objective is the metric itself, not the template's `<metric>_best`) the last one,
// the value the study judged the trial by.
enum class BestBy { kBestValue, kFinalValue };

// The test metric the summary shows beside test/loss: test/acc, or test/r2 for a regression sweep.
std::string sweep_test_score(const std::string& sweep_dir);

struct JobSummary {
  PlannedJob job;
  JobState state = JobState::kPending;
  MetricHistory metric;
  std::optional<double> test_score, test_loss;  // the last test score (SweepSummary) and test/loss logged
  double duration_s = 0;
  std::string error;
};

struct SweepSummary {
  std::string metric, mode;
  std::string test_score = "test/acc";  // or test/r2 for a regression sweep
  BestBy best_by = BestBy::kBestValue;
  // Whether a job stopped early (by ASHA or a pruner) may be named best: not in an Optuna study,
  // whose best trial is a complete one (a pruned trial's last value is not its result).
  bool stopped_early_ranks = true;
  // An Optuna study's n_trials (0 for other sweeps, whose jobs are all planned up front): the
  // trials it has not started yet are counted beside the jobs.
  int64_t study_trials = 0;
  std::vector<JobSummary> jobs;
  // Index into jobs of the ended job (done, or stopped_early where it ranks) with the best value
  // (by best_by); -1 when none has one. A running, interrupted or failed job is never named best:
  // its value is not final.
  int best = -1;
  // The value of a job that best_by ranks.
  const std::optional<double>& ranked_value(const JobSummary& job) const {
    return best_by == BestBy::kFinalValue ? job.metric.last : job.metric.best;
  }
};

SweepSummary summarize_sweep(const SweepPlan& plan);

std::string summary_csv(const SweepSummary& summary);
std::string summary_markdown(const SweepSummary& summary);

// Writes sweep_summary.csv, sweep_summary.md and sweep_metrics.png at the sweep root; returns the
// summary written.
SweepSummary write_sweep_summary(const SweepPlan& plan);

// "#3 (val/acc max 0.8123): model.lr=0.1", or for a study judged by final values "#3 (val/acc
// max, final 0.8123): ..."; "" when no job is best.
std::string best_job_text(const SweepSummary& summary);

// "%.4g"-style text of a metric value ("" when absent).
std::string metric_text(const std::optional<double>& value);

}  // namespace trainer::launch
