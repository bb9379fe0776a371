// Every knob of the training loop, read once from the job config (the `trainer` section plus
// `seed`, `precision`, `ckpt_path`, `test_after_fit`, `optimizer`, `scheduler` and the checkpoint
// callback) through the option declarations (src/options/), so the loop itself never looks at the
// config. Closed sets of names are enums here, parsed once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/engine/profiling/trace_schedule.h"

namespace trainer::engine {

// Lightning's limit_*_batches / val_check_interval: a fraction of the epoch or a count.
struct BatchLimit {
  bool is_fraction = true;
  double fraction = 1.0;
  int64_t count = 0;
  int64_t resolve(int64_t batches_per_epoch) const;
};

enum class OptimizerKind { kAdam, kAdamW, kSgd };
const char* optimizer_name(OptimizerKind kind);  // "adam", "adamw", "sgd"

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 1e-3;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool nesterov = false;
  std::vector<double> betas{0.9, 0.999};
  // optimizer.fused: nullopt picks the fused step where there is one (CUDA's kernel for Adam and
  // AdamW, the CPU loops for all three), false LibTorch's per-parameter loop, true insists.
  std::optional<bool> fused;
};

enum class ScheduleKind { kNone, kStep, kCosine, kWarmupCosine, kOneCycle };
const char* schedule_name(ScheduleKind kind);  // "none", "step", "cosine", "warmup_cosine", "onecycle"

struct SchedulerOptions {
  ScheduleKind kind = ScheduleKind::kNone;
  bool per_step = false;  // interval: step (else epoch)
  int64_t step_size = 10;
  double gamma = 0.1;
  double t_max = 0;  // cosine: epochs (or steps when interval=step)
  double eta_min = 0.0;
  int64_t warmup_steps = 0;
  double max_lr = 0.0;  // onecycle
  double pct_start = 0.3;
  double div_factor = 25.0;       // onecycle: the first rate is max_lr / div_factor
  double final_div_factor = 1e4;  // and the last the first / final_div_factor
  bool cycle_momentum = true;     // onecycle: momentum (SGD) or beta1 (Adam) runs opposite the rate
  double base_momentum = 0.85;    // at the peak rate
  double max_momentum = 0.95;     // at the first and last rates
};

struct CheckpointOptions {
  bool enabled = true;
  std::string dirpath;
  std::string filename = "epoch_{epoch:03d}";
  std::string monitor = "val/acc";
  bool mode_max = true;
  int64_t save_top_k = 1;
  bool save_last = true;
  std::optional<int64_t> every_n_train_steps;
  int64_t every_n_epochs = 1;
  // Lightning's save_on_train_epoch_end: true saves at the end of each training epoch only (not
  // after a validation inside the epoch); false only after validations (an epoch that does not
  // validate saves nothing); null: after validation where it runs, else at the epoch's end.
  std::optional<bool> save_on_train_epoch_end;
};

// Lightning's precision settings. Weights stay float32 in the mixed modes (autocast runs the
// forward in half precision); the "true" modes keep weights, inputs and the loss in that dtype.
enum class Precision { k32True, k64True, k16Mixed, kBf16Mixed, k16True, kBf16True };

// Lightning's canonical name ("16" -> "16-mixed", "32" -> "32-true", ...).
const char* precision_name(Precision precision);
bool is_mixed(Precision precision);  // 16-mixed, bf16-mixed

// trainer.grad_scaler: dynamic loss scaling (PyTorch's GradScaler defaults).
struct GradScalerOptions {
  std::optional<bool> enabled;  // null: on exactly for precision=16-mixed
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

enum class Accelerator { kAuto, kCpu, kCuda };  // trainer.accelerator (gpu is cuda)
enum class ClipAlgorithm { kNorm, kValue };     // trainer.gradient_clip_algorithm

struct TrainerOptions {
  Accelerator accelerator = Accelerator::kAuto;
  Precision precision = Precision::k32True;
  bool grad_scaler_enabled = false;  // resolved: grad_scaler.enabled, else precision == 16-mixed
  // trainer.cpu_float16_autocast: run precision=16-mixed on the CPU as float16 autocast instead of
  // Lightning's switch to bf16-mixed (off; the loss scaler's CPU tests opt in).
  bool cpu_float16_autocast = false;
  GradScalerOptions grad_scaler;
  uint64_t seed = 42;
  bool deterministic = false;
  bool cudnn_benchmark = false;  // trainer.benchmark (null: off, as in Lightning 2.x); CUDA only
  bool sync_batchnorm = false;   // batch_norm_sync.h; plain batch norm without data parallel
  int64_t max_epochs = 10;
  int64_t min_epochs = 1;  // early stopping is held back until this many epochs ran
  int64_t max_steps = -1;
  std::optional<double> max_time_seconds;
  BatchLimit limit_train, limit_val, limit_test, limit_predict;
  BatchLimit val_check_interval;
  int64_t check_val_every_n_epoch = 1;
  int64_t num_sanity_val_steps = 2;
  int64_t log_every_n_steps = 50;
  int64_t accumulate_grad_batches = 1;
  std::optional<double> gradient_clip_val;
  ClipAlgorithm gradient_clip_algorithm = ClipAlgorithm::kNorm;
  int64_t fast_dev_run = 0;  // number of batches; 0 = off
  // trainer.overfit_batches (Lightning 2): > 0 limits training and validation to that many batches
  // (or share) and turns the training shuffle off, so the same batches are seen every epoch.
  bool overfit = false;
  bool shuffle_train = true;
  // trainer.default_root_dir: where checkpoints (model_checkpoint.dirpath null) and loggers
  // (save_dir null) go; the run directory when unset.
  std::optional<std::string> default_root_dir;
  // trainer.hang_timeout: how long a data-parallel rank may be silent or make no progress before
  // the job is ended with every rank's phase and step (hang_watchdog.h); 0 = never.
  double hang_timeout_seconds = 300;
  bool enable_progress_bar = true;
  bool profile_simple = false;   // trainer.profiler=simple (phase_profiler.h)
  bool profile_trace = false;    // trainer.profiler=pytorch (trace_profiler.h)
  TraceSchedule trace_schedule;  // trainer.profiler_schedule.* (defaults: wait 1, warmup 1, active 3)
  bool enable_loggers = true;    // off under fast_dev_run, as in Lightning
  bool enable_callbacks = true;  // off under fast_dev_run, as in Lightning
  std::optional<std::string> ckpt_path;
  bool test_after_fit = true;
  OptimizerOptions optimizer;
  SchedulerOptions scheduler;
  CheckpointOptions checkpoint;

  // Throws trainer::Error naming the key for values out of range or of the wrong type.
  static TrainerOptions from_config(const config::ConfigView& root, const std::string& run_dir);
};

}  // namespace trainer::engine
