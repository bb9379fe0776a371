#include "trainer/engine/trainer_options.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

BatchLimit to_limit(const options::Limit& limit) { return {limit.is_fraction, limit.fraction, limit.count}; }

// Lightning's spellings: 32 / 32-true, 64 / 64-true, 16 / 16-mixed, bf16 / bf16-mixed, 16-true,
// bf16-true (Lightning 1.x's "bf16" means bf16-mixed). The declaration admits no other name.
Precision parse_precision(const std::string& text) {
  if (text == "64" || text == "64-true") return Precision::k64True;
  if (text == "16" || text == "16-mixed") return Precision::k16Mixed;
  if (text == "bf16" || text == "bf16-mixed") return Precision::kBf16Mixed;
  if (text == "16-true") return Precision::k16True;
  if (text == "bf16-true") return Precision::kBf16True;
  return Precision::k32True;
}

GradScalerOptions read_grad_scaler(const options::OptionReader& trainer) {
  GradScalerOptions g;
  if (!trainer.given("grad_scaler")) return g;
  const options::OptionReader s = trainer.sub("grad_scaler");
  g.enabled = s.get<std::optional<bool>>("enabled");
  g.init_scale = s.get<double>("init_scale");
  g.growth_factor = s.get<double>("growth_factor");
  g.backoff_factor = s.get<double>("backoff_factor");
  g.growth_interval = s.get<int64_t>("growth_interval");
  if (!std::isfinite(g.init_scale)) {
    throw Error(s.where("init_scale"), "must be a finite number above 0", "The usual start is 65536.0 (2^16).");
  }
  return g;
}

TraceSchedule read_trace_schedule(const options::OptionReader& trainer) {
  TraceSchedule schedule;
  if (!trainer.given("profiler_schedule")) return schedule;
  const options::OptionReader s = trainer.sub("profiler_schedule");
  schedule.skip_first = s.get<int64_t>("skip_first");
  schedule.wait = s.get<int64_t>("wait");
  schedule.warmup = s.get<int64_t>("warmup");
  schedule.active = s.get<int64_t>("active");
  return schedule;
}

void read_trainer_section(const options::OptionReader& t, TrainerOptions& o, std::string& precision) {
  const std::string accelerator = t.choice("accelerator");
  o.accelerator = accelerator == "cpu"                            ? Accelerator::kCpu
                  : accelerator == "cuda" || accelerator == "gpu" ? Accelerator::kCuda
                                                                  : Accelerator::kAuto;
  if (t.given("precision")) precision = t.choice("precision");
  o.grad_scaler = read_grad_scaler(t);
  o.cpu_float16_autocast = t.get<bool>("cpu_float16_autocast");
  o.deterministic = t.get<bool>("deterministic");
  // Lightning 2.x's `benchmark`: unset, cuDNN autotuning stays off (LibTorch's default). Measured on an
  // H100 with ResNet-18: later epochs 0-2.5 % faster with it, but timing every new input shape (first
  // step, last partial batch, validation) added 4-14 s: a 4-epoch fit took 1.5-2.3x as long.
  o.cudnn_benchmark = t.get<std::optional<bool>>("benchmark").value_or(false);
  if (o.cudnn_benchmark && o.deterministic) {
    throw Error(t.where("benchmark"),
                "benchmark=true picks convolution algorithms by timing them, which "
                "trainer.deterministic=true rules out",
                "Set one of trainer.benchmark=false or trainer.deterministic=false.");
  }
  o.sync_batchnorm = t.get<bool>("sync_batchnorm");
  o.max_epochs = t.get<int64_t>("max_epochs");
  o.max_steps = t.get<int64_t>("max_steps");
  o.max_time_seconds = t.seconds("max_time");
  o.limit_train = to_limit(t.limit("limit_train_batches"));
  o.limit_val = to_limit(t.limit("limit_val_batches"));
  o.limit_test = to_limit(t.limit("limit_test_batches"));
  o.limit_predict = to_limit(t.limit("limit_predict_batches"));
  o.val_check_interval = to_limit(t.limit("val_check_interval"));
  o.check_val_every_n_epoch = t.get<int64_t>("check_val_every_n_epoch");
  o.num_sanity_val_steps = t.get<int64_t>("num_sanity_val_steps");
  o.log_every_n_steps = t.get<int64_t>("log_every_n_steps");
  o.accumulate_grad_batches = t.get<int64_t>("accumulate_grad_batches");
  o.gradient_clip_val = t.get<std::optional<double>>("gradient_clip_val");
  if (o.gradient_clip_val && *o.gradient_clip_val <= 0.0) o.gradient_clip_val.reset();  // Lightning: 0 clips nothing
  o.gradient_clip_algorithm =
      t.choice("gradient_clip_algorithm") == "value" ? ClipAlgorithm::kValue : ClipAlgorithm::kNorm;
  o.fast_dev_run = t.count("fast_dev_run");
  const options::Limit overfit = t.limit("overfit_batches");
  if (t.given("overfit_batches") && (overfit.is_fraction ? overfit.fraction > 0.0 : overfit.count > 0)) {
    o.overfit = true;
    o.shuffle_train = false;
    o.limit_train = to_limit(overfit);
    o.limit_val = to_limit(overfit);
  }
  o.hang_timeout_seconds = t.seconds("hang_timeout").value_or(0.0);
  o.default_root_dir = t.get<std::optional<std::string>>("default_root_dir");
  o.enable_progress_bar = t.get<bool>("enable_progress_bar");
  const std::string profiler = t.choice("profiler");
  o.profile_simple = profiler == "simple";
  o.profile_trace = profiler == "pytorch";
  o.trace_schedule = read_trace_schedule(t);
  o.min_epochs = t.get<std::optional<int64_t>>("min_epochs").value_or(0);
  o.checkpoint.enabled = t.get<bool>("enable_checkpointing");
}

void read_optimizer(const config::ConfigView& root, OptimizerOptions& o) {
  const std::string name = root.get<std::string>("optimizer.name");
  if (name != "sgd" && name != "adam" && name != "adamw") {
    throw Error("optimizer.name", "unknown optimizer '" + name + "'", "Use optimizer=sgd, adam or adamw.");
  }
  const options::OptionReader opt(root.sub("optimizer"), name);
  opt.get<std::string>("name");
  o.kind = name == "sgd" ? OptimizerKind::kSgd : name == "adamw" ? OptimizerKind::kAdamW : OptimizerKind::kAdam;
  o.lr = opt.get<double>("lr");
  o.weight_decay = opt.get<double>("weight_decay");
  o.fused = opt.get<std::optional<bool>>("fused");
  if (o.kind == OptimizerKind::kSgd) {
    o.momentum = opt.get<double>("momentum");
    o.nesterov = opt.get<bool>("nesterov");
    if (o.nesterov && o.momentum <= 0.0) {
      std::ostringstream momentum;
      momentum << o.momentum;
      throw Error(opt.where("nesterov"),
                  "Nesterov momentum needs a momentum above 0 (optimizer.momentum is " + momentum.str() + ")",
                  "Set optimizer.nesterov=false for plain SGD, or a momentum such as optimizer.momentum=0.9.");
    }
  } else {
    o.betas = opt.get<std::vector<double>>("betas");
  }
}

void read_scheduler(const config::ConfigView& root, SchedulerOptions& s, const TrainerOptions& o) {
  const std::string name = root.get_or<std::string>("scheduler.name", "none");
  if (name != "none" && name != "step" && name != "cosine" && name != "warmup_cosine" && name != "onecycle") {
    throw Error("scheduler.name", "unknown scheduler '" + name + "'",
                "Use scheduler=none, step, cosine, warmup_cosine or onecycle.");
  }
  if (!root.has("scheduler")) return;
  const options::OptionReader r(root.sub("scheduler"), name);
  r.get<std::string>("name");
  s.kind = name == "step"            ? ScheduleKind::kStep
           : name == "cosine"        ? ScheduleKind::kCosine
           : name == "warmup_cosine" ? ScheduleKind::kWarmupCosine
           : name == "onecycle"      ? ScheduleKind::kOneCycle
                                     : ScheduleKind::kNone;
  switch (s.kind) {
    case ScheduleKind::kNone:
      return;
    case ScheduleKind::kStep:
      s.step_size = r.get<int64_t>("step_size");
      s.gamma = r.get<double>("gamma");
      break;
    case ScheduleKind::kCosine:
      s.t_max = r.get_or<double>("t_max", static_cast<double>(o.max_epochs));
      s.eta_min = r.get<double>("eta_min");
      break;
    case ScheduleKind::kWarmupCosine:
      s.warmup_steps = r.get<int64_t>("warmup_steps");
      s.eta_min = r.get<double>("eta_min");
      break;
    case ScheduleKind::kOneCycle:
      s.max_lr = r.get_or<double>("max_lr", o.optimizer.lr);
      s.pct_start = r.get<double>("pct_start");
      s.div_factor = r.get<double>("div_factor");
      s.final_div_factor = r.get<double>("final_div_factor");
      s.cycle_momentum = r.get<bool>("cycle_momentum");
      s.base_momentum = r.get<double>("base_momentum");
      s.max_momentum = r.get<double>("max_momentum");
      break;
  }
  s.per_step = r.choice("interval") == "step";
}

void read_checkpoint(const config::ConfigView& root, CheckpointOptions& c) {
  if (!root.has("callbacks.model_checkpoint") || root.node("callbacks.model_checkpoint").is_null()) return;
  const options::OptionReader r(root.sub("callbacks.model_checkpoint"));
  c.dirpath = r.get_or<std::string>("dirpath", c.dirpath);
  c.save_on_train_epoch_end = r.get<std::optional<bool>>("save_on_train_epoch_end");
  c.filename = r.get<std::string>("filename");
  c.monitor = r.choice("monitor");
  c.mode_max = r.choice("mode") == "max";
  c.save_top_k = r.get<int64_t>("save_top_k");
  c.save_last = r.get<bool>("save_last");
  c.every_n_train_steps = r.get<std::optional<int64_t>>("every_n_train_steps");
  c.every_n_epochs = r.get<int64_t>("every_n_epochs");
}

// Lightning's loop limits: max_steps -1 is no step limit; max_epochs -1 is no epoch limit, which
// here needs max_steps or max_time to end the run (an endless run is a mistake, not a default).
void check_run_length(TrainerOptions& o) {
  if (o.max_epochs != -1) return;
  if (o.max_steps <= 0 && !o.max_time_seconds) {
    throw Error("trainer.max_epochs",
                "-1 means no epoch limit, but neither trainer.max_steps nor trainer.max_time ends the run",
                "Give trainer.max_steps=N or trainer.max_time=DD:HH:MM:SS with max_epochs=-1, or set max_epochs to a "
                "number of epochs.");
  }
  const ScheduleKind kind = o.scheduler.kind;
  const bool needs_length = kind == ScheduleKind::kOneCycle || kind == ScheduleKind::kWarmupCosine ||
                            (kind == ScheduleKind::kCosine && !(o.scheduler.t_max > 0));
  if (o.max_steps <= 0 && needs_length) {
    throw Error(std::string("scheduler=") + schedule_name(kind),
                "this schedule spans the whole run, whose length trainer.max_epochs=-1 with only trainer.max_time "
                "leaves open",
                "Set trainer.max_steps (the schedule then spans it), or max_epochs to a number of epochs" +
                    std::string(kind == ScheduleKind::kCosine ? ", or scheduler.t_max." : "."));
  }
  o.max_epochs = std::numeric_limits<int64_t>::max();
}

}  // namespace

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::k32True:
      return "32-true";
    case Precision::k64True:
      return "64-true";
    case Precision::k16Mixed:
      return "16-mixed";
    case Precision::kBf16Mixed:
      return "bf16-mixed";
    case Precision::k16True:
      return "16-true";
    case Precision::kBf16True:
      return "bf16-true";
  }
  return "?";
}

const char* optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAdam:
      return "adam";
    case OptimizerKind::kAdamW:
      return "adamw";
    case OptimizerKind::kSgd:
      return "sgd";
  }
  return "?";
}

const char* schedule_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kNone:
      return "none";
    case ScheduleKind::kStep:
      return "step";
    case ScheduleKind::kCosine:
      return "cosine";
    case ScheduleKind::kWarmupCosine:
      return "warmup_cosine";
    case ScheduleKind::kOneCycle:
      return "onecycle";
  }
  return "?";
}

bool is_mixed(Precision precision) { return precision == Precision::k16Mixed || precision == Precision::kBf16Mixed; }

int64_t BatchLimit::resolve(int64_t batches_per_epoch) const {
  if (!is_fraction) return std::min(count, batches_per_epoch);
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(batches_per_epoch)));
}

TrainerOptions TrainerOptions::from_config(const config::ConfigView& root, const std::string& run_dir) {
  TrainerOptions o;
  const options::OptionReader top(root);
  o.seed = static_cast<uint64_t>(top.get<int64_t>("seed"));
  std::string precision = top.choice("precision");
  o.ckpt_path = top.get<std::optional<std::string>>("ckpt_path");
  o.test_after_fit = top.get<bool>("test_after_fit");

  const std::string top_precision = precision;
  if (root.has("trainer")) read_trainer_section(options::OptionReader(root.sub("trainer")), o, precision);
  if (root.has("optimizer")) read_optimizer(root, o.optimizer);
  read_scheduler(root, o.scheduler, o);
  o.precision = parse_precision(precision);
  // trainer.precision is ${precision} unless given: both given, and meaning two things, is a
  // mistake one of them would hide (the top-level key at its default, 32, says nothing).
  if (const Precision top_meaning = parse_precision(top_precision);
      top_meaning != o.precision && top_meaning != Precision::k32True) {
    throw Error("trainer.precision",
                "is " + precision + ", but precision is " + top_precision +
                    ": two keys give the precision (trainer.precision is ${precision} unless set)",
                "Give one of them: precision=" + precision + " alone, or precision=" + top_precision +
                    " with trainer.precision left at ${precision}.");
  }
  o.grad_scaler_enabled = o.grad_scaler.enabled.value_or(o.precision == Precision::k16Mixed);
  if (o.grad_scaler_enabled && o.precision == Precision::k16True) {
    throw Error("trainer.grad_scaler.enabled",
                "loss scaling cannot run with precision=16-true: float16 gradients lose too much when they are "
                "scaled and unscaled in place (PyTorch's GradScaler refuses them too)",
                "Use precision=16-mixed (float32 weights, float16 autocast, scaler on), or set "
                "trainer.grad_scaler.enabled=false.");
  }
  if (o.precision == Precision::k16True && o.optimizer.kind != OptimizerKind::kSgd) {
    // Adam's eps (1e-8) is below float16's smallest subnormal (6e-8): with float16 state it rounds
    // to 0, and the first update divides 0 by 0 wherever a gradient is exactly zero (ReLU nets).
    throw Error("precision",
                std::string("precision=16-true with optimizer=") + optimizer_name(o.optimizer.kind) +
                    " diverges at the first step: the optimizer's state is float16 too, where Adam's eps "
                    "(1e-8) rounds to 0 and 0/0 gives NaN for every gradient that is exactly zero",
                "Use precision=16-mixed (float32 weights and optimizer state, float16 compute), bf16-true "
                "(bfloat16 has float32's range), or optimizer=sgd with 16-true.");
  }
  o.checkpoint.dirpath = o.default_root_dir.value_or(run_dir) + "/checkpoints";
  read_checkpoint(root, o.checkpoint);
  check_run_length(o);
  if (o.fast_dev_run > 0) {
    // Lightning: n batches of train/val/test, one epoch, no checkpoints or loggers.
    o.max_epochs = 1;
    o.max_steps = o.fast_dev_run;
    o.limit_train = {false, 0.0, o.fast_dev_run};
    o.limit_val = {false, 0.0, o.fast_dev_run};
    o.limit_test = {false, 0.0, o.fast_dev_run};
    o.limit_predict = {false, 0.0, o.fast_dev_run};
    o.num_sanity_val_steps = 0;
    o.checkpoint.enabled = false;
    o.enable_loggers = false;
    o.enable_callbacks = false;
  }
  return o;
}

}  // namespace trainer::engine
