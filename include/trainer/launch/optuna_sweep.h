// hydra/sweeper=optuna: a model-based search whose trials are asked for while the sweep runs.
//
// Before anything runs, the search space's corners (every parameter at its low and its high end,
// every choice) are composed and checked like the jobs of any sweep. Then the local launcher
// (basic: one trial at a time; local/joblib: up to min(n_jobs of hydra.launcher and
// hydra.sweeper)) asks for a trial whenever a slot is free: the sampler (TPE or random, with the
// running trials as constant liars) gives its parameters, the trial's job is composed, recorded
// and started. When a job ends its objective (the last value of the metric it logged) is told to
// the study. Failed trials count towards n_trials; more of them than max_failure_rate of the ended
// ones stops the study.
//
// The study (every trial's number, state, parameters, value and per-epoch values, and the
// sampler's generator state) is <sweep_dir>/.sweep/study.yaml, or hydra.sweeper.storage; it is
// written atomically after every event. The same command (or `trainer sweep resume DIR`) on the
// same sweep directory continues it: ended trials are kept, interrupted ones run again from their
// checkpoint, the trial count continues, and a changed search space, direction or objective is an
// error that shows the difference. At the end, <sweep_dir>/optimization_results.yaml holds the
// best parameters and value, as Hydra's Optuna sweeper writes it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/override.h"

namespace trainer::launch {

// The command line a study was started with, kept in the study so that `trainer sweep resume DIR`
// can compose new trials the way the first command did.
struct StudyOrigin {
  std::string cwd;
  std::string command;  // fit | validate | test
  std::optional<std::string> config_path, config_dir, config_name;
  std::vector<std::string> overrides;
};

// True when the composed hydra.sweeper names the Optuna sweeper.
bool is_optuna_sweeper(const config::Node& hydra_sweeper);

// Runs (or continues) the study; returns the sweep's exit code as run_sweep_plan does (130 when
// interrupted). Throws trainer::Error before anything runs for a bad setting, space or trial job.
int run_optuna_sweep(const config::Composer& composer, const StudyOrigin& origin,
                     const std::vector<config::Override>& overrides);

// What --cfg shows for an Optuna sweep: the searched parameters, one per line, as "# " comments.
std::string optuna_sweep_outline(const config::Composer& composer, const std::vector<config::Override>& overrides);

// The origin kept in `sweep_dir`'s study (nullopt: the directory holds no Optuna study).
std::optional<StudyOrigin> optuna_study_origin(const std::string& sweep_dir);

}  // namespace trainer::launch
