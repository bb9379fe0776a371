#include "trainer/engine/trainer_options.h"

#include <limits>

#include <cmath>
#include <sstream>

#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

BatchLimit read_limit(const config::ConfigView& view, const std::string& key, BatchLimit fallback) {
  if (!view.has(key)) return fallback;
  const config::Node& node = view.node(key);
  BatchLimit limit;
  if (node.type() == config::NodeType::kInt) {
    limit.is_fraction = false;
    limit.count = node.as_int();
  } else if (node.type() == config::NodeType::kFloat) {
    limit.fraction = node.as_float();
    if (limit.fraction < 0.0 || limit.fraction > 1.0) {
      throw Error(view.full_path(key), "a fraction must lie in [0, 1], got " + std::to_string(limit.fraction),
                  "Use a float in [0, 1] for a share of the epoch or an int for a number of batches.");
    }
  } else {
    throw Error(view.full_path(key), std::string("expected an int or a float, got a ") +
                                         config::type_name(node.type()));
  }
  if (!limit.is_fraction && limit.count < 0) {
    throw Error(view.full_path(key), "a batch count cannot be negative");
  }
  return limit;
}

std::string precision_text(const config::Node& node) {
  switch (node.type()) {
    case config::NodeType::kInt: return node.int_text();
    case config::NodeType::kString: return node.as_string();
    case config::NodeType::kFloat: return "a float";
    case config::NodeType::kBool: return node.as_bool() ? "true" : "false";
    default: return "?";
  }
}

// Lightning's spellings: 32 / 32-true, 64 / 64-true, 16 / 16-mixed, bf16 / bf16-mixed, 16-true,
// bf16-true (Lightning 1.x's "bf16" means bf16-mixed).
Precision parse_precision(const std::string& text) {
  if (text == "32" || text == "32-true") return Precision::k32True;
  if (text == "64" || text == "64-true") return Precision::k64True;
  if (text == "16" || text == "16-mixed") return Precision::k16Mixed;
  if (text == "bf16" || text == "bf16-mixed") return Precision::kBf16Mixed;
  if (text == "16-true") return Precision::k16True;
  if (text == "bf16-true") return Precision::kBf16True;
  throw Error("precision", "unknown precision '" + text + "'",
              "Use 32 (32-true), 64 (64-true), 16 (16-mixed), bf16 (bf16-mixed), 16-true or bf16-true.");
}

GradScalerOptions read_grad_scaler(const config::ConfigView& t) {
  GradScalerOptions g;
  if (!t.has("grad_scaler") || t.node("grad_scaler").is_null()) return g;
  config::ConfigView s = t.sub("grad_scaler");
  g.enabled = s.get_or<std::optional<bool>>("enabled", std::nullopt);
  g.init_scale = s.get_or<double>("init_scale", g.init_scale);
  g.growth_factor = s.get_or<double>("growth_factor", g.growth_factor);
  g.backoff_factor = s.get_or<double>("backoff_factor", g.backoff_factor);
  g.growth_interval = s.get_or<int64_t>("growth_interval", g.growth_interval);
  if (!(g.init_scale > 0.0) || !std::isfinite(g.init_scale)) {
    throw Error(s.full_path("init_scale"), "must be a finite number above 0", "The usual start is 65536.0 (2^16).");
  }
  if (!(g.growth_factor > 1.0)) {
    throw Error(s.full_path("growth_factor"), "must be above 1", "The usual value is 2.0.");
  }
  if (!(g.backoff_factor > 0.0 && g.backoff_factor < 1.0)) {
    throw Error(s.full_path("backoff_factor"), "must lie strictly between 0 and 1", "The usual value is 0.5.");
  }
  if (g.growth_interval < 1) {
    throw Error(s.full_path("growth_interval"), "must be at least 1", "The usual value is 2000.");
  }
  return g;
}

}  // namespace

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::k32True: return "32-true";
    case Precision::k64True: return "64-true";
    case Precision::k16Mixed: return "16-mixed";
    case Precision::kBf16Mixed: return "bf16-mixed";
    case Precision::k16True: return "16-true";
    case Precision::kBf16True: return "bf16-true";
  }
  return "?";
}

bool is_mixed(Precision precision) { return precision == Precision::k16Mixed || precision == Precision::kBf16Mixed; }

int64_t BatchLimit::resolve(int64_t batches_per_epoch) const {
  if (!is_fraction) return std::min(count, batches_per_epoch);
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(batches_per_epoch)));
}

double parse_duration(const std::string& text, const std::string& where) {
  std::vector<double> fields;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ':')) {
    try {
      size_t used = 0;
      fields.push_back(std::stod(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw Error(where, "cannot read '" + text + "' as a duration",
                  "Write DD:HH:MM:SS, e.g. 00:12:00:00 for twelve hours.");
    }
  }
  if (fields.empty() || fields.size() > 4) {
    throw Error(where, "cannot read '" + text + "' as a duration", "Write DD:HH:MM:SS.");
  }
  static const double kUnits[] = {1.0, 60.0, 3600.0, 86400.0};
  double seconds = 0.0;
  for (size_t i = 0; i < fields.size(); ++i) seconds += fields[fields.size() - 1 - i] * kUnits[i];
  return seconds;
}

namespace {

// Lightning's loop limits: max_steps -1 is no step limit; max_epochs -1 is no epoch limit, which
// here needs max_steps or max_time to end the run (an endless run is a mistake, not a default).
void check_run_length(const config::ConfigView& root, TrainerOptions& o) {
  const std::string epochs_key = root.has("trainer") ? root.sub("trainer").full_path("max_epochs") : "trainer.max_epochs";
  const std::string steps_key = root.has("trainer") ? root.sub("trainer").full_path("max_steps") : "trainer.max_steps";
  if (o.max_steps < -1) {
    throw Error(steps_key, "must be -1 (no step limit) or a number of optimizer steps, got " + std::to_string(o.max_steps),
                "Set trainer.max_steps=-1, or a positive number of steps.");
  }
  if (o.max_epochs < -1) {
    throw Error(epochs_key,
                "must be -1 (no epoch limit, with max_steps or max_time) or a number of epochs, got " +
                    std::to_string(o.max_epochs),
                "Set trainer.max_epochs to the number of epochs to train.");
  }
  if (o.max_epochs != -1) return;
  if (o.max_steps <= 0 && !o.max_time_seconds) {
    throw Error(epochs_key, "-1 means no epoch limit, but neither trainer.max_steps nor trainer.max_time ends the run",
                "Give trainer.max_steps=N or trainer.max_time=DD:HH:MM:SS with max_epochs=-1, or set max_epochs to a "
                "number of epochs.");
  }
  const bool needs_length = o.scheduler.name == "onecycle" || o.scheduler.name == "warmup_cosine" ||
                            (o.scheduler.name == "cosine" && !(o.scheduler.t_max > 0));
  if (o.max_steps <= 0 && needs_length) {
    throw Error("scheduler=" + o.scheduler.name,
                "this schedule spans the whole run, whose length trainer.max_epochs=-1 with only trainer.max_time "
                "leaves open",
                "Set trainer.max_steps (the schedule then spans it), or max_epochs to a number of epochs" +
                    std::string(o.scheduler.name == "cosine" ? ", or scheduler.t_max." : "."));
  }
  o.max_epochs = std::numeric_limits<int64_t>::max();
}

}  // namespace

TrainerOptions TrainerOptions::from_config(const config::ConfigView& root, const std::string& run_dir) {
  TrainerOptions o;
  o.seed = static_cast<uint64_t>(root.get_or<int64_t>("seed", 42));
  std::string precision = "32";
  if (root.has("precision") && !root.node("precision").is_null()) precision = precision_text(root.node("precision"));
  if (root.has("ckpt_path") && !root.node("ckpt_path").is_null()) {
    o.ckpt_path = root.get<std::string>("ckpt_path");
  }
  o.test_after_fit = root.get_or<bool>("test_after_fit", true);

  if (root.has("trainer")) {
    config::ConfigView t = root.sub("trainer");
    o.accelerator = t.get_or<std::string>("accelerator", "auto");
    if (t.has("precision") && !t.node("precision").is_null()) precision = precision_text(t.node("precision"));
    o.grad_scaler = read_grad_scaler(t);
    o.cpu_float16_autocast = t.get_or<bool>("cpu_float16_autocast", false);
    o.deterministic = t.get_or<bool>("deterministic", false);
    // Lightning 2.x's `benchmark`: unset, cuDNN autotuning stays off (LibTorch's default). Measured on an
    // H100 with ResNet-18: later epochs 0-2.5 % faster with it, but timing every new input shape (first
    // step, last partial batch, validation) added 4-14 s: a 4-epoch fit took 1.5-2.3x as long.
    o.cudnn_benchmark = t.get_or<std::optional<bool>>("benchmark", std::nullopt).value_or(false);
    if (o.cudnn_benchmark && o.deterministic && t.has("benchmark") && !t.node("benchmark").is_null()) {
      throw Error(t.full_path("benchmark"), "benchmark=true picks convolution algorithms by timing them, which "
                  "trainer.deterministic=true rules out", "Set one of trainer.benchmark=false or trainer.deterministic=false.");
    }
    o.sync_batchnorm = t.get_or<bool>("sync_batchnorm", false);
    o.max_epochs = t.get_or<int64_t>("max_epochs", 10);
    o.max_steps = t.get_or<int64_t>("max_steps", -1);
    if (t.has("max_time") && !t.node("max_time").is_null()) {
      o.max_time_seconds = parse_duration(t.get<std::string>("max_time"), t.full_path("max_time"));
    }
    o.limit_train = read_limit(t, "limit_train_batches", o.limit_train);
    o.limit_val = read_limit(t, "limit_val_batches", o.limit_val);
    o.limit_test = read_limit(t, "limit_test_batches", o.limit_test);
    o.val_check_interval = read_limit(t, "val_check_interval", o.val_check_interval);
    o.check_val_every_n_epoch = t.get_or<int64_t>("check_val_every_n_epoch", 1);
    o.num_sanity_val_steps = t.get_or<int64_t>("num_sanity_val_steps", 2);
    o.log_every_n_steps = std::max<int64_t>(1, t.get_or<int64_t>("log_every_n_steps", 50));
    o.accumulate_grad_batches = t.get_or<int64_t>("accumulate_grad_batches", 1);
    if (o.accumulate_grad_batches < 1) {
      throw Error(t.full_path("accumulate_grad_batches"), "must be at least 1");
    }
    o.gradient_clip_val = t.get_or<std::optional<double>>("gradient_clip_val", std::nullopt);
    o.gradient_clip_algorithm = t.get_or<std::string>("gradient_clip_algorithm", "norm");
    if (o.gradient_clip_algorithm != "norm" && o.gradient_clip_algorithm != "value") {
      throw Error(t.full_path("gradient_clip_algorithm"),
                  "unknown algorithm '" + o.gradient_clip_algorithm + "'", "Use norm or value.");
    }
    if (t.has("fast_dev_run")) {
      const config::Node& fdr = t.node("fast_dev_run");
      if (fdr.type() == config::NodeType::kBool) {
        o.fast_dev_run = fdr.as_bool() ? 1 : 0;
      } else {
        o.fast_dev_run = t.get<int64_t>("fast_dev_run");
      }
    }
    if (t.has("overfit_batches") && !t.node("overfit_batches").is_null()) {
      const BatchLimit overfit = read_limit(t, "overfit_batches", BatchLimit{false, 0.0, 0});
      if (overfit.is_fraction ? overfit.fraction > 0.0 : overfit.count > 0) {
        o.overfit = true;
        o.shuffle_train = false;
        o.limit_train = overfit;
        o.limit_val = overfit;
      }
    }
    if (t.has("hang_timeout") && !t.node("hang_timeout").is_null()) {
      const config::Node& node = t.node("hang_timeout");
      o.hang_timeout_seconds = node.type() == config::NodeType::kInt || node.type() == config::NodeType::kFloat
                                   ? t.get<double>("hang_timeout")
                                   : parse_duration(t.get<std::string>("hang_timeout"), t.full_path("hang_timeout"));
      if (o.hang_timeout_seconds < 0) {
        throw Error(t.full_path("hang_timeout"), "a timeout cannot be negative",
                    "Give DD:HH:MM:SS (e.g. 00:00:05:00), a number of seconds, or 0 for none.");
      }
    }
    if (t.has("default_root_dir") && !t.node("default_root_dir").is_null()) {
      o.default_root_dir = t.get<std::string>("default_root_dir");
    }
    o.enable_progress_bar = t.get_or<bool>("enable_progress_bar", true);
    if (t.has("profiler") && !t.node("profiler").is_null()) {
      const std::string profiler = t.get<std::string>("profiler");
      if (profiler == "simple") {
        o.profile_simple = true;
      } else if (profiler == "pytorch") {
        o.profile_trace = true;
      } else {
        throw Error(t.full_path("profiler"), "unknown profiler '" + profiler + "'",
                    "Use trainer.profiler=simple (time per phase of fit), trainer.profiler=pytorch (a "
                    "Chrome/Perfetto trace of LibTorch's operators and the loop's phases over the steps "
                    "trainer.profiler_schedule picks), or null for none.");
      }
    }
    if (t.has("profiler_schedule") && !t.node("profiler_schedule").is_null()) {
      config::ConfigView s = t.sub("profiler_schedule");
      TraceSchedule& schedule = o.trace_schedule;
      schedule.skip_first = s.get_or<int64_t>("skip_first", schedule.skip_first);
      schedule.wait = s.get_or<int64_t>("wait", schedule.wait);
      schedule.warmup = s.get_or<int64_t>("warmup", schedule.warmup);
      schedule.active = s.get_or<int64_t>("active", schedule.active);
      for (const auto& [key, value] : {std::pair<const char*, int64_t>{"skip_first", schedule.skip_first},
                                       {"wait", schedule.wait},
                                       {"warmup", schedule.warmup}}) {
        if (value < 0) throw Error(s.full_path(key), "must be >= 0, got " + std::to_string(value));
      }
      if (schedule.active < 1) {
        throw Error(s.full_path("active"), "must be at least 1, got " + std::to_string(schedule.active),
                    "The profiler records `active` steps after skip_first + wait + warmup steps.");
      }
    }
    o.min_epochs = t.get_or<std::optional<int64_t>>("min_epochs", std::nullopt).value_or(0);
    o.checkpoint.enabled = t.get_or<bool>("enable_checkpointing", true);
  }

  if (root.has("optimizer")) {
    config::ConfigView opt = root.sub("optimizer");
    o.optimizer.name = opt.get<std::string>("name");
    o.optimizer.lr = opt.get<double>("lr");
    o.optimizer.weight_decay = opt.get_or<double>("weight_decay", 0.0);
    o.optimizer.momentum = opt.get_or<double>("momentum", 0.0);
    o.optimizer.nesterov = opt.get_or<bool>("nesterov", false);
    if (o.optimizer.nesterov && o.optimizer.momentum <= 0.0) {
      std::ostringstream momentum;
      momentum << o.optimizer.momentum;
      throw Error(opt.full_path("nesterov"),
                  "Nesterov momentum needs a momentum above 0 (optimizer.momentum is " + momentum.str() + ")",
                  "Set optimizer.nesterov=false for plain SGD, or a momentum such as optimizer.momentum=0.9.");
    }
    o.optimizer.betas = opt.get_or<std::vector<double>>("betas", {0.9, 0.999});
    if (o.optimizer.betas.size() != 2) throw Error(opt.full_path("betas"), "needs two values");
  }
  if (root.has("scheduler")) {
    config::ConfigView s = root.sub("scheduler");
    o.scheduler.name = s.get_or<std::string>("name", "none");
    o.scheduler.interval = s.get_or<std::string>("interval", "epoch");
    if (o.scheduler.interval != "epoch" && o.scheduler.interval != "step") {
      throw Error(s.full_path("interval"), "must be epoch or step, got '" + o.scheduler.interval + "'");
    }
    o.scheduler.step_size = s.get_or<int64_t>("step_size", 10);
    o.scheduler.gamma = s.get_or<double>("gamma", 0.1);
    o.scheduler.t_max = s.get_or<double>("t_max", static_cast<double>(o.max_epochs));
    o.scheduler.eta_min = s.get_or<double>("eta_min", 0.0);
    o.scheduler.warmup_steps = s.get_or<int64_t>("warmup_steps", 0);
    o.scheduler.max_lr = s.get_or<double>("max_lr", o.optimizer.lr);
    o.scheduler.pct_start = s.get_or<double>("pct_start", 0.3);
  }
  o.precision = parse_precision(precision);
  o.grad_scaler_enabled = o.grad_scaler.enabled.value_or(o.precision == Precision::k16Mixed);
  if (o.grad_scaler_enabled && o.precision == Precision::k16True) {
    throw Error("trainer.grad_scaler.enabled",
                "loss scaling cannot run with precision=16-true: float16 gradients lose too much when they are "
                "scaled and unscaled in place (PyTorch's GradScaler refuses them too)",
                "Use precision=16-mixed (float32 weights, float16 autocast, scaler on), or set "
                "trainer.grad_scaler.enabled=false.");
  }
  if (o.precision == Precision::k16True && (o.optimizer.name == "adam" || o.optimizer.name == "adamw")) {
    // Adam's eps (1e-8) is below float16's smallest subnormal (6e-8): with float16 state it rounds
    // to 0, and the first update divides 0 by 0 wherever a gradient is exactly zero (ReLU nets).
    throw Error("precision",
                "precision=16-true with optimizer=" + o.optimizer.name +
                    " diverges at the first step: the optimizer's state is float16 too, where Adam's eps "
                    "(1e-8) rounds to 0 and 0/0 gives NaN for every gradient that is exactly zero",
                "Use precision=16-mixed (float32 weights and optimizer state, float16 compute), bf16-true "
                "(bfloat16 has float32's range), or optimizer=sgd with 16-true.");
  }
  o.checkpoint.dirpath = o.default_root_dir.value_or(run_dir) + "/checkpoints";
  if (root.has("callbacks.model_checkpoint")) {
    config::ConfigView c = root.sub("callbacks.model_checkpoint");
    if (c.has("dirpath") && !c.node("dirpath").is_null()) o.checkpoint.dirpath = c.get<std::string>("dirpath");
    o.checkpoint.save_on_train_epoch_end = c.get_or<std::optional<bool>>("save_on_train_epoch_end", std::nullopt);
    o.checkpoint.filename = c.get_or<std::string>("filename", o.checkpoint.filename);
    o.checkpoint.monitor = c.get_or<std::string>("monitor", o.checkpoint.monitor);
    std::string mode = c.get_or<std::string>("mode", "max");
    if (mode != "max" && mode != "min") throw Error(c.full_path("mode"), "must be max or min");
    o.checkpoint.mode_max = mode == "max";
    o.checkpoint.save_top_k = c.get_or<int64_t>("save_top_k", 1);
    o.checkpoint.save_last = c.get_or<bool>("save_last", true);
    o.checkpoint.every_n_train_steps =
        c.get_or<std::optional<int64_t>>("every_n_train_steps", std::nullopt);
    o.checkpoint.every_n_epochs = c.get_or<int64_t>("every_n_epochs", 1);
  }
  check_run_length(root, o);
  if (o.fast_dev_run > 0) {
    // Lightning: n batches of train/val/test, one epoch, no checkpoints or loggers.
    o.max_epochs = 1;
    o.max_steps = o.fast_dev_run;
    o.limit_train = {false, 0.0, o.fast_dev_run};
    o.limit_val = {false, 0.0, o.fast_dev_run};
    o.limit_test = {false, 0.0, o.fast_dev_run};
    o.num_sanity_val_steps = 0;
    o.checkpoint.enabled = false;
    o.enable_loggers = false;
    o.enable_callbacks = false;
  }
  return o;
}

}  // namespace trainer::engine
