// A job's output directory as Hydra lays it out: the directory itself (hydra.run.dir, or
// hydra.sweep.dir/subdir in a sweep) and the `.hydra/` files config.yaml, hydra.yaml and
// overrides.yaml, each written to a temporary file and renamed so a crash never leaves half a file.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/util/atomic_file.h"

namespace trainer::launch {

// Nothing is ever lost: `fit` without ckpt_path into a directory whose checkpoints/ already holds
// checkpoints would overwrite that run's last.ckpt and mix two runs' metrics. Throws trainer::Error
// saying how to resume it or start elsewhere.
void refuse_overwriting_run(const std::string& run_dir);

// The same for the checkpoint directory a new fit resolves (callbacks.model_checkpoint.dirpath, else
// trainer.default_root_dir/checkpoints, else <run>/checkpoints): *.ckpt files there belong to
// another run, whose last.ckpt this fit would replace and whose ckpt_path=best|last would then load
// this fit's model. `key` set the directory. Throws trainer::Error naming the directory, its run
// and the fixes.
void refuse_overwriting_checkpoints(const std::string& checkpoint_dir, const std::string& key);

// The launcher's files are written with util's one atomic writer (trainer/util/atomic_file.h).
using ::trainer::write_file_atomically;

// Creates `run_dir` (and parents) and writes <run_dir>/<output_subdir>/{config,hydra,overrides}.yaml.
// `job_config` is the config without the hydra node; `hydra` is the hydra node itself.
// An empty output_subdir (hydra.output_subdir=null) writes no files, as in Hydra.
void write_job_files(const std::string& run_dir, const std::string& output_subdir, const config::Node& job_config,
                     const config::Node& hydra, const std::vector<std::string>& task_overrides);

}  // namespace trainer::launch
