// The run directory's side of the batch-size search (docs/tuning.md): the engine writes its result
// to <run dir>/tune_batch_size.yaml and reports the batch it found in its job result; the run's
// .hydra/config.yaml then gets data.batch_size set to that batch, rewritten atomically like every
// .hydra file, so the run's config says what ran.
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::launch {

// The search result file's name inside the run directory.
inline constexpr const char* kTuneResultFile = "tune_batch_size.yaml";

// Whether the job searches for a batch size: `trainer tune batch_size` (command tune_batch_size), or
// fit with trainer.auto_scale_batch_size set (not null, not false) in the resolved `job_config`.
bool searches_batch_size(const std::string& command, const config::Node& job_config);

// Before such a job: drops a result file left by an earlier job in the same directory, unless the
// job resumes (ckpt_path set), which reuses it.
void forget_earlier_search(const std::string& run_dir, const config::Node& job_config);

// After it: sets data.batch_size to the batch the engine reported (TrainerJobResult::tuned_batch_size)
// in `job_config` (the unresolved config of .hydra/config.yaml) and rewrites
// <run_dir>/<output_subdir>/config.yaml.
void record_tuned_batch_size(const std::string& run_dir, const std::string& output_subdir, config::Node& job_config,
                             long long batch_size);

}  // namespace trainer::launch
