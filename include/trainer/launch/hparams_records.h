// The HParams dashboard's view of runs and sweeps (docs/logging.md): each job's session start
// (its task overrides as hyperparameters, its sweep and number as the group) and end (its outcome),
// written into the job's TensorBoard log directory beside the engine's scalars; and the sweep's
// experiment record at the sweep root (the overridden keys with their domains, the metrics). The
// records are written here, on the torch-free side, because only the launch side knows the
// overrides, the sweep and how the job ended.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/formats/tensorboard_hparams.h"
#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// The directory a fit's TensorBoard logger writes to (logger.tensorboard.save_dir of the resolved
// job config, else <run_dir>/tensorboard), or nullopt when no session is recorded: another command
// (an evaluation's directory lies inside the training run's), logger.tensorboard null or absent,
// or trainer.fast_dev_run.
std::optional<std::string> tensorboard_log_dir(const std::string& command, const config::Node& resolved_job,
                                               const std::string& run_dir);

// An override's value text as the dashboard shows it: a number, true/false, or the text (quotes
// taken off).
formats::HParamValue hparam_value(const std::string& value_text);

// The task overrides (`key=value`, what .hydra/overrides.yaml holds) as hyperparameters, keyed by
// the override's key without its +/++ prefix; deletions (~key) are left out.
formats::HParams hparams_of_overrides(const std::vector<std::string>& task_overrides);

// "<sweep dir name>/<job number>" for a sweep's job (hydra.mode MULTIRUN) in `run_dir`, "" for a
// single run. One per job: the dashboard merges the sessions of one group into one row.
std::string session_group(const config::Node& hydra, const std::string& run_dir);

// A job's records in <log_dir>/events.out.tfevents.0.hparams: the start when made, the end when
// end() is called. A job run again (resumed) replaces its file: one start, at most one end.
class HParamsSession {
 public:
  HParamsSession(const std::string& log_dir, const formats::HParams& hparams, const std::string& group);
  void end(formats::SessionStatus status);

  static const char* file_name();

 private:
  std::string path_;
  std::string start_;  // the start record's content
};

// Writes <sweep_dir>/events.out.tfevents.0.hparams-experiment, when the sweep's jobs write
// TensorBoard logs (its multirun.yaml says): every key the jobs override, with
// the values a grid lists (or, for random and Optuna sweeps, the interval their numbers span), and
// the metrics the jobs logged (their metrics.csv columns), `first_metric` (the sweep's monitor)
// first.
void write_sweep_experiment(const SweepPlan& plan, const std::string& first_metric);

}  // namespace trainer::launch
