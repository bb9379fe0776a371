// How `validate`, `test` and `export` run: never inside the training run they evaluate. The
// checkpoint is found (ckpt_path=best|last in the training run given by hydra.run.dir, or a path),
// the model, data, precision and seed come from the config stored in the checkpoint (an override on the
// command line still wins, and is reported), and the evaluation writes into a directory of its
// own under the training run's eval/ (docs/evaluation.md). Torch-free: the checkpoint's summary and
// config are read without LibTorch (formats/checkpoint_file.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/node.h"
#include "trainer/config/override.h"

namespace trainer::launch {

// validate, test and export.
bool is_evaluation_command(const std::string& command);

struct EvaluationPlan {
  std::string run_dir;                      // the evaluation's own directory (not yet created)
  std::string checkpoint;                   // absolute path of the checkpoint to load; empty: none given
  std::optional<std::string> training_run;  // the run the checkpoint belongs to, when known
  config::Node config;                      // the composed config (hydra node included) to run
  std::vector<std::string> notes;           // what was taken from the checkpoint, what was overridden
};

// Plans one evaluation from the composed config (with its hydra node) and the command line's
// overrides. Throws trainer::Error for a checkpoint that cannot be found or read, and for
// ckpt_path=best|last without a training run to look in. `now` names the directory (tests).
// `keep_run_dir`: run in hydra.run.dir as it is: a secondary rank of a data-parallel evaluation
// (rank 0 chose the directory and the checkpoint, which its command line names), or a job of a
// sweep (its directory is in the sweep's).
EvaluationPlan plan_evaluation(const std::string& command, config::Node composed,
                               const std::vector<config::Override>& overrides, const config::ResolveContext& ctx,
                               bool keep_run_dir = false, std::optional<long long> now = std::nullopt);

// What validate/test/export compose: the command line's overrides, plus, for `model` and `data`
// when the command line overrides a key of the section but picks no option of its group, the
// checkpoint's own option (its section's `name`), so that model.hidden_size=64 is a key of the
// checkpoint's cnn and not of the default mlp. The checkpoint is found from a first composition
// without those keys (torch-free). hydra.overrides.task and hydra.job.override_dirname record the
// command line's overrides only.
config::ComposeResult compose_evaluation(const config::Composer& composer, const std::string& command,
                                         const std::vector<config::Override>& overrides, config::RunMode mode);

// Where the training run in `run_dir` keeps its checkpoints: its callbacks.model_checkpoint.dirpath
// (else trainer.default_root_dir/checkpoints, else <run_dir>/checkpoints) as resolved in that run.
std::string checkpoint_directory(const config::Node& composed, const std::string& run_dir,
                                 const config::ResolveContext& ctx);

// The checkpoint directory of the job `config` (its hydra node included) run in `run_dir`, from
// this config alone (not a config recorded in run_dir), and the key that chose it.
struct CheckpointDirectory {
  std::string path;  // absolute, normalised
  std::string key;   // callbacks.model_checkpoint.dirpath, trainer.default_root_dir or hydra.run.dir
};
CheckpointDirectory job_checkpoint_directory(const config::Node& config, const std::string& run_dir,
                                             const config::ResolveContext& ctx);

// The training run whose checkpoints `directory` holds: the directory itself or its parent when it
// has a .hydra/config.yaml (<run>/checkpoints, or dirpath=<run>).
std::optional<std::string> run_of_checkpoint_directory(const std::string& directory);

// Before a resuming fit writes anything into its run: the checkpoint ckpt_path names is complete
// and its checksums hold (read in full), so a refused resume leaves the run as it was. Throws
// trainer::Error as formats::read_checkpoint_file does, and when the checkpoint's run used another
// optimizer (its state cannot be loaded into this one); another scheduler is a warning.
void verify_resume_checkpoint(const config::Node& composed, const std::string& run_dir,
                              const config::ResolveContext& ctx);

// The settings an evaluation takes from the checkpoint's config: what shapes the model and its
// inputs.
extern const std::vector<std::string> kSettingsFromCheckpoint;

}  // namespace trainer::launch
