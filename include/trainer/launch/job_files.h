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

// A fit (new or resumed) whose run directory is a sweep's (.sweep/ or multirun.yaml in it): its
// files would lie among the sweep's records, where its jobs' directories are. Throws trainer::Error.
void refuse_sweep_directory(const std::string& run_dir);

// A directory (`key`=`dir`: hydra.run.dir, hydra.sweep.dir) inside another training run's own
// checkpoints/, .hydra/ or tensorboard/: its .hydra, metrics and log would lie among that run's
// files, and the run would no longer resume (its checkpoint directory would hold a run). Throws
// trainer::Error naming the run and a place of its own.
void refuse_directory_inside_run(const std::string& dir, const std::string& key);

// The other way round: refuses a hydra.sweep.dir that is a single run's directory (it holds
// .hydra/ and no sweep plan).
void refuse_run_directory_as_sweep(const std::string& sweep_dir);

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

// A run's record as it is before a resume writes its own (`.hydra/config.yaml`, hydra.yaml,
// overrides.yaml, the TensorBoard HParams record), so that a resume refused before it trains (a
// checkpoint that does not fit, a setting the engine refuses) leaves the run as it was: a later
// ckpt_path=best of the run would otherwise follow the refused command's settings (its checkpoint
// directory included). Only the log keeps the refused attempt.
class RecordSnapshot {
 public:
  // `records` and every `*.hparams` file under `run_dir` are kept (their bytes), and which files
  // the run holds (outside checkpoints/ and eval/); `log` is the job's log, relative to run_dir;
  // `last_checkpoint`: the run's last.ckpt, whose replacement means the resume trained and its
  // record stands.
  // Each kept file also gets a second name in <run_dir>/.before-resume/ (a hard link: no space),
  // so that putting it back is a rename, which a full disk cannot refuse (the attempt may have
  // failed because the disk filled); the destructor removes the directory.
  RecordSnapshot(const std::string& run_dir, const std::vector<std::string>& records, const std::string& log,
                 std::string last_checkpoint);
  ~RecordSnapshot();
  RecordSnapshot(const RecordSnapshot&) = delete;
  RecordSnapshot& operator=(const RecordSnapshot&) = delete;
  // When last.ckpt is the one it was: puts the kept files back and removes the files the attempt
  // added (an empty TensorBoard event file), but the log; true when it did. Throws trainer::Error
  // naming the files it could not put back.
  bool restore_if_not_trained();

 private:
  std::string run_dir_, log_, backup_dir_;
  std::vector<std::pair<std::string, std::string>> files_;  // path, bytes
  std::vector<std::string> linked_;                         // each file's second name ("": none)
  std::vector<std::string> present_;                        // sorted
  std::string last_checkpoint_;
  std::string checkpoint_identity_;  // device, inode, size and mtime; empty when there was none
};

}  // namespace trainer::launch
