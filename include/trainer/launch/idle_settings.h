// Settings a job accepts that would change nothing in it, said before it runs (a key that exists
// must do something; where one cannot here, the log says so): a top-level key a typo away from
// one trainer reads, or a map holding trainer's sections (no `# @package _global_`), pipeline
// settings without the
// pipeline strategy, a profiler schedule without the pytorch profiler, float16 autocast on a CPU
// without 16-mixed, trainer.default_root_dir where every directory it stands for is set, OneCycleLR's
// momentum bounds without cycle_momentum, tuner keys in a fit that searches no batch size, and a
// null checkpoint callback (checkpointing stays on, as in Lightning). Warnings only; torch-free.
// Only the top-level keys and the pipeline settings are looked at in an evaluation (validate,
// test, predict, export).
#pragma once

#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::launch {

// One thing said about a setting: a warning, or a note (info) where nothing is wrong.
struct IdleSetting {
  bool warning;
  std::string text;
};

// `job_config`: the job's resolved config (no hydra node); `unresolved`: the same before its
// interpolations were resolved (a key another value reads through `${...}` is never said to change
// nothing); `command`: fit, test, tune_batch_size, ...
std::vector<IdleSetting> idle_settings(const config::Node& job_config, const config::Node& unresolved,
                                       const std::string& command);

// The same, logged (a job's run says them after its log file opens).
void warn_about_idle_settings(const config::Node& job_config, const config::Node& unresolved,
                              const std::string& command);

}  // namespace trainer::launch
