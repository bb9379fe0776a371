// TrainerOptions::from_config on small job configs: the declared defaults, Lightning's rules
// (fast_dev_run, overfit_batches, max_epochs=-1), precision's spellings, the enums each closed set
// of names becomes, and errors that name the key at fault.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/trainer_options.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using trainer::engine::Accelerator;
using trainer::engine::ClipAlgorithm;
using trainer::engine::OptimizerKind;
using trainer::engine::Precision;
using trainer::engine::ScheduleKind;
using trainer::engine::TrainerOptions;

namespace {

TrainerOptions options_of(const std::string& yaml) {
  const trainer::config::YamlDocument document = trainer::config::load_yaml_string(yaml, "job.yaml");
  return TrainerOptions::from_config(trainer::config::ConfigView(document.root), "/runs/r1");
}

// The error from_config throws for `yaml`: where (the key, and where its value came from) and
// the whole paragraph.
trainer::Error error_of(const std::string& yaml) {
  try {
    options_of(yaml);
  } catch (const trainer::Error& error) {
    return error;
  }
  return trainer::Error("(no error)", "");
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

CATCH_TEST_CASE("an empty trainer section gives the declared defaults") {
  const TrainerOptions o = options_of("seed: 7\ntrainer: {}\n");
  CATCH_CHECK(o.seed == 7);
  CATCH_CHECK(o.accelerator == Accelerator::kAuto);
  CATCH_CHECK(o.precision == Precision::k32True);
  CATCH_CHECK_FALSE(o.grad_scaler_enabled);
  CATCH_CHECK(o.max_epochs == 10);
  CATCH_CHECK(o.min_epochs == 1);
  CATCH_CHECK(o.max_steps == -1);
  CATCH_CHECK_FALSE(o.max_time_seconds.has_value());
  CATCH_CHECK(o.limit_train.is_fraction);
  CATCH_CHECK(o.limit_train.fraction == 1.0);
  CATCH_CHECK(o.check_val_every_n_epoch == 1);
  CATCH_CHECK(o.num_sanity_val_steps == 2);
  CATCH_CHECK(o.log_every_n_steps == 50);
  CATCH_CHECK(o.accumulate_grad_batches == 1);
  CATCH_CHECK_FALSE(o.gradient_clip_val.has_value());
  CATCH_CHECK(o.gradient_clip_algorithm == ClipAlgorithm::kNorm);
  CATCH_CHECK(o.fast_dev_run == 0);
  CATCH_CHECK_FALSE(o.overfit);
  CATCH_CHECK(o.shuffle_train);
  CATCH_CHECK(o.hang_timeout_seconds == 300.0);
  CATCH_CHECK_FALSE(o.cudnn_benchmark);
  CATCH_CHECK_FALSE(o.profile_simple);
  CATCH_CHECK_FALSE(o.profile_trace);
  CATCH_CHECK(o.enable_loggers);
  CATCH_CHECK(o.enable_callbacks);
  CATCH_CHECK(o.checkpoint.enabled);
  CATCH_CHECK(o.checkpoint.dirpath == "/runs/r1/checkpoints");
  CATCH_CHECK(o.test_after_fit);
  CATCH_CHECK_FALSE(o.ckpt_path.has_value());
  CATCH_CHECK(o.scheduler.kind == ScheduleKind::kNone);
}

CATCH_TEST_CASE("trainer's keys reach their fields") {
  const TrainerOptions o = options_of(
      "trainer:\n"
      "  accelerator: cpu\n  max_epochs: 3\n  min_epochs: null\n  max_steps: 40\n  max_time: "
      "'00:01:00:30'\n"
      "  limit_train_batches: 0.25\n  limit_val_batches: 7\n  val_check_interval: 0.5\n"
      "  accumulate_grad_batches: 4\n  gradient_clip_val: 1.5\n  gradient_clip_algorithm: value\n"
      "  hang_timeout: 0\n  profiler: simple\n  default_root_dir: /elsewhere\n  deterministic: "
      "true\n"
      "ckpt_path: last\ntest_after_fit: false\n");
  CATCH_CHECK(o.accelerator == Accelerator::kCpu);
  CATCH_CHECK(o.max_epochs == 3);
  CATCH_CHECK(o.min_epochs == 0);  // null: early stopping may end the run at once
  CATCH_CHECK(o.max_steps == 40);
  CATCH_REQUIRE(o.max_time_seconds.has_value());
  CATCH_CHECK(*o.max_time_seconds == 3630.0);
  CATCH_CHECK(o.limit_train.is_fraction);
  CATCH_CHECK(o.limit_train.fraction == 0.25);
  CATCH_CHECK(o.limit_train.resolve(10) == 2);  // floor, as Lightning
  CATCH_CHECK_FALSE(o.limit_val.is_fraction);
  CATCH_CHECK(o.limit_val.resolve(100) == 7);
  CATCH_CHECK(o.limit_val.resolve(5) == 5);  // a count never exceeds the epoch
  CATCH_CHECK(o.val_check_interval.fraction == 0.5);
  CATCH_CHECK(o.accumulate_grad_batches == 4);
  CATCH_CHECK(o.gradient_clip_val == 1.5);
  CATCH_CHECK(o.gradient_clip_algorithm == ClipAlgorithm::kValue);
  CATCH_CHECK(o.hang_timeout_seconds == 0.0);
  CATCH_CHECK(o.profile_simple);
  CATCH_CHECK(o.deterministic);
  CATCH_CHECK(o.checkpoint.dirpath == "/elsewhere/checkpoints");  // default_root_dir, not the run
  CATCH_CHECK(o.ckpt_path == "last");
  CATCH_CHECK_FALSE(o.test_after_fit);
}

CATCH_TEST_CASE("the accelerator's names: gpu is cuda") {
  CATCH_CHECK(options_of("trainer: {accelerator: auto}\n").accelerator == Accelerator::kAuto);
  CATCH_CHECK(options_of("trainer: {accelerator: cpu}\n").accelerator == Accelerator::kCpu);
  CATCH_CHECK(options_of("trainer: {accelerator: gpu}\n").accelerator == Accelerator::kCuda);
  CATCH_CHECK(options_of("trainer: {accelerator: cuda}\n").accelerator == Accelerator::kCuda);
  CATCH_CHECK(starts_with(error_of("trainer: {accelerator: tpu}\n").where(), "trainer.accelerator"));
}

CATCH_TEST_CASE("precision: Lightning's short names, the trainer key over the top-level one, the loss scaler") {
  const struct {
    const char* given;
    Precision precision;
    const char* canonical;
  } names[] = {{"32", Precision::k32True, "32-true"},         {"32-true", Precision::k32True, "32-true"},
               {"64", Precision::k64True, "64-true"},         {"64-true", Precision::k64True, "64-true"},
               {"16", Precision::k16Mixed, "16-mixed"},       {"16-mixed", Precision::k16Mixed, "16-mixed"},
               {"bf16", Precision::kBf16Mixed, "bf16-mixed"}, {"bf16-mixed", Precision::kBf16Mixed, "bf16-mixed"},
               {"16-true", Precision::k16True, "16-true"},    {"bf16-true", Precision::kBf16True, "bf16-true"}};
  for (const auto& name : names) {
    CATCH_INFO("precision " << name.given);
    // optimizer=sgd: 16-true refuses Adam (below).
    const TrainerOptions o = options_of(std::string("precision: '") + name.given + "'\noptimizer: {name: sgd}\n");
    CATCH_CHECK(o.precision == name.precision);
    CATCH_CHECK(std::string(trainer::engine::precision_name(o.precision)) == name.canonical);
    // PyTorch's GradScaler is on exactly for float16 autocast unless set.
    CATCH_CHECK(o.grad_scaler_enabled == (name.precision == Precision::k16Mixed));
  }
  CATCH_CHECK(trainer::engine::is_mixed(Precision::k16Mixed));
  CATCH_CHECK(trainer::engine::is_mixed(Precision::kBf16Mixed));
  CATCH_CHECK_FALSE(trainer::engine::is_mixed(Precision::kBf16True));

  CATCH_CHECK(options_of("precision: 32\ntrainer: {precision: bf16}\n").precision == Precision::kBf16Mixed);
  const TrainerOptions unscaled = options_of("precision: 16\ntrainer: {grad_scaler: {enabled: false}}\n");
  CATCH_CHECK_FALSE(unscaled.grad_scaler_enabled);
  const TrainerOptions scaled =
      options_of("precision: bf16\ntrainer: {grad_scaler: {enabled: true, init_scale: 1024.0}}\n");
  CATCH_CHECK(scaled.grad_scaler_enabled);
  CATCH_CHECK(scaled.grad_scaler.init_scale == 1024.0);
  CATCH_CHECK(scaled.grad_scaler.growth_interval == 2000);  // the rest declared defaults

  CATCH_CHECK(starts_with(error_of("precision: '8'\n").where(), "precision"));
  const trainer::Error adam16 = error_of("precision: 16-true\noptimizer: {name: adam}\n");
  CATCH_CHECK(adam16.where() == "precision");
  CATCH_CHECK_THAT(adam16.problem(), Catch::Contains("optimizer=adam diverges"));
  CATCH_CHECK(
      error_of("precision: 16-true\noptimizer: {name: sgd}\ntrainer: {grad_scaler: {enabled: true}}\n").where() ==
      "trainer.grad_scaler.enabled");
  CATCH_CHECK(
      starts_with(error_of("trainer: {grad_scaler: {init_scale: .inf}}\n").where(), "trainer.grad_scaler.init_scale"));
}

CATCH_TEST_CASE("fast_dev_run: n batches of each phase, one epoch, no checkpoints, loggers or callbacks") {
  const struct {
    const char* given;
    int64_t batches;
  } cases[] = {{"true", 1}, {"5", 5}};
  for (const auto& [given, batches] : cases) {
    CATCH_INFO("fast_dev_run " << given);
    const TrainerOptions o =
        options_of(std::string("trainer:\n  fast_dev_run: ") + given + "\n  max_epochs: 20\n  max_steps: 1000\n");
    CATCH_CHECK(o.fast_dev_run == batches);
    CATCH_CHECK(o.max_epochs == 1);
    CATCH_CHECK(o.max_steps == batches);
    for (const trainer::engine::BatchLimit& limit : {o.limit_train, o.limit_val, o.limit_test}) {
      CATCH_CHECK_FALSE(limit.is_fraction);
      CATCH_CHECK(limit.count == batches);
    }
    CATCH_CHECK(o.num_sanity_val_steps == 0);
    CATCH_CHECK_FALSE(o.checkpoint.enabled);
    CATCH_CHECK_FALSE(o.enable_loggers);
    CATCH_CHECK_FALSE(o.enable_callbacks);
  }
  const TrainerOptions off = options_of("trainer: {fast_dev_run: false}\n");
  CATCH_CHECK(off.fast_dev_run == 0);
  CATCH_CHECK(off.checkpoint.enabled);
}

CATCH_TEST_CASE("overfit_batches: the same share or count of batches for training and validation, unshuffled") {
  const TrainerOptions share = options_of("trainer: {overfit_batches: 0.1, limit_val_batches: 0.5}\n");
  CATCH_CHECK(share.overfit);
  CATCH_CHECK_FALSE(share.shuffle_train);
  CATCH_CHECK(share.limit_train.is_fraction);
  CATCH_CHECK(share.limit_train.fraction == 0.1);
  CATCH_CHECK(share.limit_val.fraction == 0.1);  // overrides limit_val_batches, as Lightning does

  const TrainerOptions count = options_of("trainer: {overfit_batches: 3}\n");
  CATCH_CHECK(count.overfit);
  CATCH_CHECK_FALSE(count.limit_train.is_fraction);
  CATCH_CHECK(count.limit_train.count == 3);
  CATCH_CHECK(count.limit_val.count == 3);

  for (const char* off : {"0", "0.0"}) {
    CATCH_INFO("overfit_batches " << off);
    const TrainerOptions o = options_of(std::string("trainer: {overfit_batches: ") + off + "}\n");
    CATCH_CHECK_FALSE(o.overfit);
    CATCH_CHECK(o.shuffle_train);
  }
}

CATCH_TEST_CASE("max_epochs=-1: no epoch limit, but something must end the run") {
  const TrainerOptions steps = options_of("trainer: {max_epochs: -1, max_steps: 100}\n");
  CATCH_CHECK(steps.max_epochs == std::numeric_limits<int64_t>::max());
  const TrainerOptions timed = options_of("trainer: {max_epochs: -1, max_time: '00:00:10:00'}\n");
  CATCH_CHECK(timed.max_epochs == std::numeric_limits<int64_t>::max());

  const trainer::Error endless = error_of("trainer: {max_epochs: -1}\n");
  CATCH_CHECK(endless.where() == "trainer.max_epochs");
  CATCH_CHECK_THAT(endless.fix(), Catch::Contains("trainer.max_steps=N"));

  // A schedule over the whole run needs its length: max_time alone leaves it open.
  const std::string timed_only = "trainer: {max_epochs: -1, max_time: '00:00:10:00'}\n";
  CATCH_CHECK(error_of(timed_only + "scheduler: {name: onecycle}\n").where() == "scheduler=onecycle");
  CATCH_CHECK(error_of(timed_only + "scheduler: {name: warmup_cosine}\n").where() == "scheduler=warmup_cosine");
  CATCH_CHECK(error_of(timed_only + "scheduler: {name: cosine, t_max: 0}\n").where() == "scheduler=cosine");
  CATCH_CHECK(options_of(timed_only + "scheduler: {name: cosine, t_max: 5}\n").scheduler.t_max == 5.0);
  CATCH_CHECK(options_of(timed_only + "scheduler: {name: step}\n").scheduler.kind == ScheduleKind::kStep);
}

CATCH_TEST_CASE("optimizer: the name becomes an enum, each optimizer's declared defaults apply") {
  const TrainerOptions sgd = options_of("optimizer: {name: sgd}\n");
  CATCH_CHECK(sgd.optimizer.kind == OptimizerKind::kSgd);
  CATCH_CHECK(sgd.optimizer.lr == 0.1);
  CATCH_CHECK(sgd.optimizer.momentum == 0.9);
  CATCH_CHECK(sgd.optimizer.nesterov);
  CATCH_CHECK(sgd.optimizer.weight_decay == 5.0e-4);

  const TrainerOptions adamw = options_of("optimizer: {name: adamw, lr: 0.002, betas: [0.8, 0.99]}\n");
  CATCH_CHECK(adamw.optimizer.kind == OptimizerKind::kAdamW);
  CATCH_CHECK(adamw.optimizer.lr == 0.002);
  CATCH_CHECK(adamw.optimizer.weight_decay == 0.01);
  CATCH_CHECK(adamw.optimizer.betas == std::vector<double>{0.8, 0.99});

  const TrainerOptions adam = options_of("optimizer: {name: adam}\n");
  CATCH_CHECK(adam.optimizer.kind == OptimizerKind::kAdam);
  CATCH_CHECK(adam.optimizer.weight_decay == 0.0);
  for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kAdamW, OptimizerKind::kSgd}) {
    CATCH_CHECK(
        options_of(std::string("optimizer: {name: ") + trainer::engine::optimizer_name(kind) + "}\n").optimizer.kind ==
        kind);
  }

  const trainer::Error unknown = error_of("optimizer: {name: lamb}\n");
  CATCH_CHECK(unknown.where() == "optimizer.name");
  CATCH_CHECK_THAT(unknown.problem(), Catch::Contains("'lamb'"));
  CATCH_CHECK(
      starts_with(error_of("optimizer: {name: sgd, nesterov: true, momentum: 0.0}\n").where(), "optimizer.nesterov"));
  CATCH_CHECK(starts_with(error_of("optimizer: {name: adam, lr: -1.0}\n").where(), "optimizer.lr"));
}

CATCH_TEST_CASE("scheduler: the name becomes an enum, with each schedule's keys and interval") {
  const TrainerOptions none = options_of("scheduler: {name: none}\n");
  CATCH_CHECK(none.scheduler.kind == ScheduleKind::kNone);

  const TrainerOptions step = options_of("scheduler: {name: step, step_size: 4, gamma: 0.5}\n");
  CATCH_CHECK(step.scheduler.kind == ScheduleKind::kStep);
  CATCH_CHECK(step.scheduler.step_size == 4);
  CATCH_CHECK(step.scheduler.gamma == 0.5);
  CATCH_CHECK_FALSE(step.scheduler.per_step);  // StepLR advances per epoch unless told

  const TrainerOptions cosine = options_of("trainer: {max_epochs: 6}\nscheduler: {name: cosine}\n");
  CATCH_CHECK(cosine.scheduler.kind == ScheduleKind::kCosine);
  CATCH_CHECK(cosine.scheduler.t_max == 6.0);  // absent: trainer.max_epochs
  CATCH_CHECK_FALSE(cosine.scheduler.per_step);
  CATCH_CHECK(options_of("scheduler: {name: cosine, interval: step}\n").scheduler.per_step);

  const TrainerOptions warmup = options_of("scheduler: {name: warmup_cosine, eta_min: 0.001}\n");
  CATCH_CHECK(warmup.scheduler.kind == ScheduleKind::kWarmupCosine);
  CATCH_CHECK(warmup.scheduler.warmup_steps == 500);
  CATCH_CHECK(warmup.scheduler.eta_min == 0.001);
  CATCH_CHECK(warmup.scheduler.per_step);

  const TrainerOptions onecycle = options_of("optimizer: {name: adam, lr: 0.004}\nscheduler: {name: onecycle}\n");
  CATCH_CHECK(onecycle.scheduler.kind == ScheduleKind::kOneCycle);
  CATCH_CHECK(onecycle.scheduler.max_lr == 0.004);  // absent: optimizer.lr
  CATCH_CHECK(onecycle.scheduler.pct_start == 0.3);
  CATCH_CHECK(onecycle.scheduler.per_step);
  CATCH_CHECK_FALSE(options_of("scheduler: {name: onecycle, max_lr: 0.1, interval: epoch}\n").scheduler.per_step);

  for (ScheduleKind kind : {ScheduleKind::kNone, ScheduleKind::kStep, ScheduleKind::kCosine,
                            ScheduleKind::kWarmupCosine, ScheduleKind::kOneCycle}) {
    CATCH_CHECK(
        options_of(std::string("scheduler: {name: ") + trainer::engine::schedule_name(kind) + "}\n").scheduler.kind ==
        kind);
  }

  const trainer::Error unknown = error_of("scheduler: {name: plateau}\n");
  CATCH_CHECK(unknown.where() == "scheduler.name");
  CATCH_CHECK_THAT(unknown.fix(), Catch::Contains("warmup_cosine"));
  CATCH_CHECK(starts_with(error_of("scheduler: {name: step, step_size: 0}\n").where(), "scheduler.step_size"));
  CATCH_CHECK(starts_with(error_of("scheduler: {name: onecycle, pct_start: 1.5}\n").where(), "scheduler.pct_start"));
  CATCH_CHECK(starts_with(error_of("scheduler: {name: step, interval: batch}\n").where(), "scheduler.interval"));
}

CATCH_TEST_CASE("the model checkpoint callback's keys, and its absence") {
  const TrainerOptions o = options_of(
      "callbacks:\n  model_checkpoint:\n    dirpath: /ckpts\n    monitor: val/loss\n    mode: min\n"
      "    save_top_k: 3\n    save_last: false\n    every_n_train_steps: 200\n    "
      "save_on_train_epoch_end: true\n");
  CATCH_CHECK(o.checkpoint.dirpath == "/ckpts");
  CATCH_CHECK(o.checkpoint.monitor == "val/loss");
  CATCH_CHECK_FALSE(o.checkpoint.mode_max);
  CATCH_CHECK(o.checkpoint.save_top_k == 3);
  CATCH_CHECK_FALSE(o.checkpoint.save_last);
  CATCH_CHECK(o.checkpoint.every_n_train_steps == 200);
  CATCH_CHECK(o.checkpoint.save_on_train_epoch_end == true);
  CATCH_CHECK(o.checkpoint.filename == "epoch_{epoch:03d}");

  const TrainerOptions null_dir = options_of("callbacks:\n  model_checkpoint: {dirpath: null}\n");
  CATCH_CHECK(null_dir.checkpoint.dirpath == "/runs/r1/checkpoints");
  const TrainerOptions none = options_of("callbacks:\n  model_checkpoint: null\n");
  CATCH_CHECK(none.checkpoint.monitor == "val/acc");  // the defaults stand
  CATCH_CHECK(starts_with(error_of("callbacks:\n  model_checkpoint: {monitor: val/f1}\n").where(),
                          "callbacks.model_checkpoint.monitor"));
}

CATCH_TEST_CASE("trainer's own cross-key rules name the key") {
  CATCH_CHECK(starts_with(error_of("trainer: {benchmark: true, deterministic: true}\n").where(), "trainer.benchmark"));
  CATCH_CHECK(options_of("trainer: {benchmark: true}\n").cudnn_benchmark);
  const trainer::Error range = error_of("trainer: {max_epochs: -5}\n");
  CATCH_CHECK(range.where() == "trainer.max_epochs (job.yaml:1)");
  CATCH_CHECK(
      starts_with(error_of("trainer: {accumulate_grad_batches: 0}\n").where(), "trainer.accumulate_grad_batches"));
}
