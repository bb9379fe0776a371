// The loop: fit (training steps, validation, checkpoints at their moments, stop conditions),
// validate and test, and Trainer's public entry points. State and the parts' declarations:
// trainer_impl.h.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <fstream>
#include <limits>
#include <new>

#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include "trainer/engine/callbacks/progress_bar.h"
#include "trainer/engine/checkpoint/checkpoint_policy.h"
#include "trainer/engine/distributed/progress_beacon.h"
#include "trainer/engine/optim/lr_schedule.h"
#include "trainer/engine/optim/optimizer_factory.h"
#include "trainer/engine/out_of_memory_report.h"
#include "trainer/engine/posix_files.h"
#include "trainer/engine/precision/autocast_guard.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/same_file.h"

#include "trainer_impl.h"

namespace trainer::engine {
namespace {

// Seconds since this process started (from /proc: its start time and the system uptime), for
// the time-to-first-step report; -1 when /proc is unreadable.
double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');  // the command name may hold spaces
  std::ifstream uptime_file("/proc/uptime");
  double uptime = -1;
  if (close == std::string::npos || !(uptime_file >> uptime)) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return uptime - std::stod(field) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return -1;
}

// The loader's copy to the device, timed as a phase of its own (nested in waiting for data).
class CopyPhase final : public data::CopyObserver {
 public:
  explicit CopyPhase(PhaseProfiler& profiler) : profiler_(profiler) {}
  void copy_started() override { open_ = profiler_.begin(Phase::kCopy); }
  void copy_finished() override {
    if (open_) profiler_.end();
    open_ = false;
  }

 private:
  PhaseProfiler& profiler_;
  bool open_ = false;
};

// Why the table can have no copy row: it says where the copy happens instead of a number.
std::string copy_phase_note(const data::BatchLoader& loader) {
  const data::LoaderOptions& o = loader.options();
  if (!o.device.is_cuda()) return "none, the device is the CPU (batches stay in host memory)";
  if (o.num_workers > 0) {
    return "made in the " + std::to_string(o.num_workers) + " loader worker threads (" +
           (o.pin_memory ? "pinned, " : "") +
           "non-blocking), overlapped with training, so not timed here; "
           "the training thread's wait for it is part of waiting for data";
  }
  return {};  // made on the training thread: the row has the numbers
}

// A metric in a log line: acc with four decimals; a regression's mae, rmse and r2 (in the
// target's units, of any scale) with five significant digits.
std::string metric_text(const std::string& name, double value) {
  if (name == "acc") return fixed(value, 4);
  return general(value);
}

}  // namespace

bool Trainer::Impl::unscale_clip_and_step(bool clip_by_norm) {
  if (scaler) scaler->unscale_(*optimizer);
  if (options.gradient_clip_val) {
    // A pipeline's stages clip by the whole model's norm.
    // Summed over every process, each replica's (identical, averaged) gradients count world_size times.
    clip_gradients(parameters, *options.gradient_clip_val, clip_by_norm,
                   pipeline ? [this](at::Tensor& squared) {
                     group->allreduce_sum(squared, "pipeline gradient norm");
                     if (world_size > 1) squared.div_(world_size);
                   }
                            : std::function<void(at::Tensor&)>());
  }
  const bool stepped = optimizer_step();
  optimizer->zero_grad();
  return stepped;
}

bool Trainer::Impl::optimizer_step() {
  if (!scaler) {
    optimizer->step();
    return true;
  }
  const bool stepped = scaler->step(*optimizer);
  scaler->update();
  return stepped;
}

void Trainer::Impl::add_metrics(const DeviceMeter::Reading& reading, const std::string& prefix,
                                const std::string& suffix, MetricRow& row, std::string& line) const {
  row.push_back({prefix + "loss" + suffix, reading.loss()});
  line += " " + prefix + "loss " + fixed(reading.loss(), 4);
  for (const auto& [name, value] : reading.metrics()) {
    row.push_back({prefix + name + suffix, value});
    line += " " + prefix + name + " " + metric_text(name, value);
  }
}

void Trainer::Impl::log_metrics(const MetricRow& row, int64_t epoch, int64_t step) {
  for (auto& entry : loggers) entry.logger->log_metrics(row, epoch, step);
}

void Trainer::Impl::flush_loggers() {
  for (auto& entry : loggers) entry.logger->flush();
}

at::Tensor Trainer::Impl::model_inputs(const data::Batch& batch) const {
  return param_dtype != at::kFloat ? batch.inputs.to(param_dtype) : batch.inputs;
}

at::Tensor Trainer::Impl::loss_of(const at::Tensor& logits, const at::Tensor& targets) const {
  if (regression) {
    if (logits.numel() != targets.numel()) {  // sizes only: no sync
      throw Error("model",
                  "gives " + std::to_string(logits.numel() / std::max<int64_t>(1, targets.numel())) +
                      " outputs per sample, but data.task=regression predicts one number",
                  "Build the model with one output (the built-in models do so for data.task=regression).");
    }
    return torch::nn::functional::mse_loss(logits.reshape({-1}).to(at::kFloat), targets);
  }
  return torch::nn::functional::cross_entropy(autocast ? logits.to(at::kFloat) : logits, targets);
}

at::Tensor Trainer::Impl::forward_loss(const data::Batch& batch, at::Tensor& logits) {
  AutocastGuard autocast_scope(device.type(), autocast_dtype, autocast);
  logits = model->forward(model_inputs(batch));
  return loss_of(logits, batch.targets);
}

DeviceMeter Trainer::Impl::new_meter() const {
  DeviceMeter meter;
  meter.reset(device, group.get(), regression ? std::optional<double>(regression->std) : std::nullopt);
  return meter;
}

int64_t Trainer::Impl::evaluation_batches(const data::Dataset& dataset, const BatchLimit& limit) const {
  const int64_t per_rank = (dataset.size() + world_size - 1) / world_size;
  return limit.resolve((per_rank + data_options.batch_size - 1) / data_options.batch_size);
}

DeviceMeter::Reading Trainer::Impl::evaluate(const std::shared_ptr<const data::Dataset>& dataset,
                                             const BatchLimit& limit_option, int64_t hard_limit, int64_t* left_out,
                                             const StopCheck* stop_check) {
  DeviceMeter meter = new_meter();
  if (dataset->size() == 0) return meter.read();
  // Without sync_batchnorm each rank's batch norm running statistics follow its own batches. PyTorch's
  // DDP copies rank 0's buffers to every rank before each training forward, so what every rank
  // evaluates with, and what rank 0's checkpoint holds, are rank 0's. Training forwards do not read
  // running statistics, so one copy here, before they are read, gives the same numbers as a copy
  // per step at a fraction of the cost.
  // A pipeline's stages each keep their own pieces' statistics.
  if (group && !pipeline) broadcast_module_state(*group, {}, model->buffers());
  if (stage_replicas) broadcast_module_state(*stage_replicas, {}, pipeline->buffers());
  data::BatchLoader loader = make_loader(dataset, /*train=*/false);
  int64_t limit = limit_option.resolve(loader.batches_per_epoch());
  if (hard_limit >= 0) limit = std::min(limit, hard_limit);
  torch::NoGradGuard no_grad;
  model->eval();
  loader.start_epoch(0);
  for (int64_t i = 0; i < limit; ++i) {
    if (stop_check != nullptr && stop_signal_received() != 0) (*stop_check)(i, limit);
    auto batch = loader.next();
    if (!batch) break;
    if (left_out != nullptr) *left_out += batch->requested - batch->targets.size(0);
    if (pipeline) {
      const at::Tensor logits = pipeline->forward_only(model_inputs(*batch));
      if (logits.defined()) meter.add(loss_of(logits, batch->targets), logits, batch->targets);
    } else {
      at::Tensor logits;
      at::Tensor loss = forward_loss(*batch, logits);
      meter.add(loss, logits, batch->targets);
    }
    beacon_tick(progress_beacon().step.load(std::memory_order_relaxed));
  }
  model->train();
  return meter.read();
}

bool Trainer::Impl::take_stop_request(Context& context, int64_t epochs_done) const {
  if (context.stop_reason.empty()) return false;
  if (epochs_done >= options.min_epochs) {
    log::info(context.stop_held_back ? "trainer.min_epochs=" + std::to_string(options.min_epochs) +
                                           " reached: stopping, as asked before (" + context.stop_reason + ")"
                                     : context.stop_reason);
    return true;
  }
  if (!context.stop_held_back) {
    log::info(context.stop_reason + " (held back: trainer.min_epochs=" + std::to_string(options.min_epochs) +
              " not reached yet; the fit stops at the end of epoch " + std::to_string(options.min_epochs - 1) +
              ", as Lightning's)");
    context.stop_held_back = true;
  }
  return false;
}

int64_t Trainer::Impl::resolve_val_check_batch(int64_t train_batches) const {
  const BatchLimit& v = options.val_check_interval;
  int64_t every = 0;
  if (v.is_fraction) {
    if (!(v.fraction > 0.0)) {
      throw Error("trainer.val_check_interval", "a share of the epoch must be above 0, got 0",
                  "Use a float in (0, 1] or a number of batches; to skip validation set trainer.limit_val_batches=0.");
    }
    every = std::max<int64_t>(1, static_cast<int64_t>(v.fraction * static_cast<double>(train_batches)));
  } else {
    every = v.count;
    if (every < 1 || every > train_batches) {
      throw Error("trainer.val_check_interval",
                  "validation every " + std::to_string(every) + " batches does not fit an epoch of " +
                      std::to_string(train_batches) + " training batches",
                  "Use a number of batches from 1 to " + std::to_string(train_batches) +
                      ", or a float share of the epoch; to skip validation set trainer.limit_val_batches=0.");
    }
  }
  if (every < train_batches && every % options.accumulate_grad_batches != 0) {
    throw Error("trainer.val_check_interval",
                "validation every " + std::to_string(every) +
                    " batches falls between optimizer steps "
                    "(trainer.accumulate_grad_batches=" +
                    std::to_string(options.accumulate_grad_batches) + ")",
                "Use a multiple of accumulate_grad_batches.");
  }
  return every;
}

void Trainer::Impl::validate_mid_epoch(LoopState& state, Context& context, const DeviceMeter& epoch_meter,
                                       const DeviceMeter::Reading& logged, int64_t batch, int64_t train_batches) {
  keep_epoch_sums(epoch_meter, logged, state);
  const DeviceMeter::Reading validation = evaluate(val_set, options.limit_val, -1, &skipped_validation);
  MetricRow row;
  std::string line;
  add_metrics(validation, "val/", "", row, line);
  log::info("epoch " + std::to_string(context.current_epoch) + " step " + std::to_string(state.global_step) +
            " batch " + std::to_string(batch) + "/" + std::to_string(train_batches) + ":" + line);
  const std::map<std::string, double> metrics(row.begin(), row.end());
  log_metrics(row, context.current_epoch, state.global_step);
  latest_validation = metrics;
  for (auto& entry : callbacks) entry.callback->on_validation_end(context, metrics);
  // save_on_train_epoch_end=true: checkpoints come at the epoch's end only.
  if (!options.checkpoint.enabled || options.checkpoint.save_on_train_epoch_end == true) return;
  std::vector<std::string> paths;
  std::vector<std::string> dropped;
  const auto monitored = metrics.find(options.checkpoint.monitor);
  if (monitored != metrics.end()) {
    const std::string best = update_top_k(state, monitored->second, context.current_epoch, dropped);
    if (!best.empty()) paths.push_back(best);
  }
  if (options.checkpoint.save_last) paths.push_back(last_path());
  save(state, std::move(paths), std::move(dropped));
}

int Trainer::Impl::fit() {
  if (is_main) log::info("model summary\n" + summary_text);
  auto_scale_before_fit();
  LoopState state;
  // As Lightning: ckpt_path=last before any checkpoint exists (a run killed before its first
  // save) starts afresh, so the documented resume command always works.
  const bool nothing_to_resume = options.ckpt_path == "last" && !posix::exists(last_path());
  if (nothing_to_resume) {
    log::warning("ckpt_path=last: no checkpoint in " + checkpoint_dir() + " yet; starting from scratch");
  }
  const bool resuming = options.ckpt_path.has_value() && !nothing_to_resume;
  if (resuming) {
    const std::string main_path = resolve_ckpt_path(*options.ckpt_path);
    const std::string path = pipeline ? pipeline_resume_path(main_path) : main_path;
    state = load_checkpoint(path, *model, optimizer.get(), /*restore_rng=*/true, config_yaml, released_tensors());
    // The best files live beside last.ckpt: a run directory copied or moved since keeps its own
    // files, and never deletes (as fallen out of the top k) those at the recorded location.
    // A checkpoint of another directory (a fit forked from another run's file) leaves that run's
    // best files where they are: this run's top k starts afresh, as Lightning's does when the
    // dirpath changed (they would be missing here, and the test after fit would not find its best).
    const std::string resumed_dir = main_path.substr(0, main_path.find_last_of('/') + 1);
    if (!state.top_k.empty() && !same_file(resumed_dir.empty() ? "." : resumed_dir, checkpoint_dir())) {
      const bool one = state.top_k.size() == 1;
      log::info("resumed from a checkpoint outside this run's " + checkpoint_dir() + ": its " +
                (one ? std::string("best file (") : std::to_string(state.top_k.size()) + " best files (best ") +
                general(state.top_k.front().score) + ", " + state.top_k.front().path +
                (one ? ") stays where it is" : ") stay where they are") +
                ", and this run keeps its own best checkpoints from now on");
      state.top_k.clear();
    }
    for (TopKEntry& entry : state.top_k) {
      entry.path = checkpoint_dir() + "/" + entry.path.substr(entry.path.find_last_of('/') + 1);
    }
    forget_states_of_other_monitors(main_path, state);
    warn_of_another_batch_size(main_path, state);
    restore_callback_states(state);
    fit_seconds_before = state.fit_seconds;
    restore_precision_state(state);
    restore_own_rng_state(state);
    log::info("resumed from " + path + " at epoch " + std::to_string(state.epoch) + ", batch " +
              std::to_string(state.batch_in_epoch) + ", step " + std::to_string(state.global_step));
  }
  for (auto& entry : loggers) {
    std::string saved;
    for (const auto& [name, text] : state.logger_states) {
      if (name == entry.name) saved = text;
    }
    entry.logger->on_fit_start(resuming ? std::optional<int64_t>(state.global_step) : std::nullopt, saved);
  }
  data::BatchLoader train_loader = make_loader(train_set, /*train=*/true);
  CopyPhase copy_phase(profiler);
  if (pipeline) profiler.set_label(Phase::kForward, "pipeline schedule (forwards, backwards, stage transfers)");
  if (profiler.table_enabled() || options.profile_trace) {
    train_loader.observe_copies(&copy_phase);
    profiler.set_note(Phase::kCopy, copy_phase_note(train_loader));
  }
  if (options.profile_trace && is_main) {
    tracer.start(options.trace_schedule, run_dir + "/fit-trace.json", device.is_cuda(), profiler);
  }
  const int64_t batches_per_epoch = train_loader.batches_per_epoch();
  const int64_t train_batches = options.limit_train.resolve(batches_per_epoch);
  if (train_batches == 0) {
    throw Error("trainer.limit_train_batches", "no training batch would run",
                "Raise limit_train_batches or check the dataset size.");
  }
  const int64_t steps_per_epoch =
      (train_batches + options.accumulate_grad_batches - 1) / options.accumulate_grad_batches;
  const int64_t val_check_batch = resolve_val_check_batch(train_batches);
  const bool endless_epochs = options.max_epochs == std::numeric_limits<int64_t>::max();  // max_epochs=-1
  const int64_t total_steps =
      options.max_steps > 0 ? options.max_steps : (endless_epochs ? 0 : options.max_epochs * steps_per_epoch);
  // The schedule's horizon (t_max 0/-1, warmup_cosine's and onecycle's run) in its own unit:
  // optimizer steps for interval=step, epochs for interval=epoch.
  const int64_t schedule_horizon = options.scheduler.per_step ? total_steps
                                   : options.max_steps > 0 ? (options.max_steps + steps_per_epoch - 1) / steps_per_epoch
                                                           : (endless_epochs ? 0 : options.max_epochs);
  LrSchedule schedule(options.scheduler, options.optimizer.lr, schedule_horizon);
  if (options.scheduler.kind == ScheduleKind::kWarmupCosine && schedule_horizon > 0 &&
      options.scheduler.warmup_steps >= schedule_horizon && is_main && !resuming) {
    const std::string unit = options.scheduler.per_step ? " optimizer steps" : " epochs";
    log::warning("scheduler.warmup_steps=" + std::to_string(options.scheduler.warmup_steps) +
                 " is not shorter than the run's " + std::to_string(schedule_horizon) + unit +
                 ": the rate climbs the whole run and ends at " + general(schedule.lr_at(schedule_horizon - 1)) +
                 ", never reaching optimizer.lr=" + general(options.optimizer.lr) +
                 ". Lower scheduler.warmup_steps (a few percent of the run is usual).");
  }
  // cosine's t_max counts the schedule's unit: the shipped ${trainer.max_epochs} with
  // interval=step makes a period of a few steps, the rate at eta_min every t_max steps.
  if (options.scheduler.kind == ScheduleKind::kCosine && options.scheduler.per_step && options.scheduler.t_max > 0 &&
      options.scheduler.t_max < static_cast<double>(steps_per_epoch) && is_main && !resuming) {
    log::warning("scheduler.t_max=" + general(options.scheduler.t_max) +
                 " with scheduler.interval=step counts optimizer steps: the rate reaches eta_min at step " +
                 general(options.scheduler.t_max) + " and climbs back, a cycle every " +
                 general(2 * options.scheduler.t_max) + " steps, in epochs of " + std::to_string(steps_per_epoch) +
                 " steps. Set scheduler.t_max=-1 (the run's " + std::to_string(total_steps) +
                 " steps) or a number of steps.");
  }
  auto apply_lr = [&] {
    if (!schedule.active()) return;
    set_lr(*optimizer, schedule.lr_at(state.scheduler_count));
    if (const std::optional<double> momentum = schedule.momentum_at(state.scheduler_count)) {
      set_momentum(*optimizer, *momentum);
    }
  };
  apply_lr();

  if (!pipeline) setup_throughput();  // a pipeline's, before its stages freed the others' weights
  Context context(*this, state);
  ProgressBar bar(options.enable_progress_bar);
  for (auto& entry : callbacks) entry.callback->on_fit_start(context);
  const bool validation_runs = evaluation_batches(*val_set, options.limit_val) > 0;
  if (!validation_runs && options.limit_val.is_fraction && options.limit_val.fraction > 0.0 && val_set->size() > 0) {
    // As Lightning: a share asked for that rounds to no batch is a mistake, not "no validation".
    const int64_t all = evaluation_batches(*val_set, BatchLimit{});
    const std::string key = options.overfit ? "trainer.overfit_batches" : "trainer.limit_val_batches";
    throw Error(key,
                general(options.limit_val.fraction) + " of the " + std::to_string(all) +
                    " validation batch(es) is less than one batch",
                "Raise it to at least " + general(std::ceil(100.0 / static_cast<double>(all)) / 100.0) +
                    ", give a number of batches (" + key + "=1), or 0 to skip validation.");
  }
  if (!validation_runs) warn_no_validation();
  if (!resuming && options.num_sanity_val_steps != 0 && validation_runs) {  // -1: every validation batch
    const int64_t available = evaluation_batches(*val_set, options.limit_val);
    const int64_t sanity =
        options.num_sanity_val_steps < 0 ? available : std::min(options.num_sanity_val_steps, available);
    evaluate(val_set, options.limit_val, sanity);
    log::info("sanity check: " + std::to_string(sanity) + " validation batch" + (sanity == 1 ? "" : "es") +
              " ran before training (trainer.num_sanity_val_steps)");
  }
  const auto start = Clock::now();
  fit_start = start;
  auto epoch_start = start;
  auto interval_start = Clock::now();
  int64_t interval_samples = 0;
  int64_t interval_batches = 0;  // this rank's batches since the last logging step
  bool stop = false;
  bool time_is_up = false;  // trainer.max_time, its earlier attempts' time included
  const auto report_time_limit = [&] {
    const auto seconds = static_cast<int64_t>(fit_seconds_before + seconds_since(start));
    char elapsed[32];
    std::snprintf(elapsed, sizeof(elapsed), "%lld:%02lld:%02lld", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
    log::info(std::string("Time limit reached. Elapsed time is ") + elapsed + ". Signaling Trainer to stop.");
  };
  // As Lightning's Timer, trainer.max_time stops the fit once trainer.min_epochs are done: until
  // then the fit goes on, said once, and stops at the end of epoch min_epochs - 1.
  const auto stop_for_time = [&](int64_t epochs_done) {
    if (!time_is_up) {
      time_is_up = true;
      report_time_limit();
      if (epochs_done < options.min_epochs) {
        log::info("Trainer was signaled to stop but the required trainer.min_epochs=" +
                  std::to_string(options.min_epochs) + " has not been met (" + std::to_string(epochs_done) +
                  " epoch(s) done). Training will continue to the end of epoch " +
                  std::to_string(options.min_epochs - 1) + ".");
      }
    }
    if (epochs_done >= options.min_epochs) stop = true;
  };
  if (resuming && out_of_time()) stop_for_time(state.epoch);  // a resume after its time was spent
  bool first_step_reported = false;
  const bool by_norm = options.gradient_clip_algorithm == ClipAlgorithm::kNorm;
  int64_t reported_skips = 0;
  bool warned_data_bound = false;
  const int cores_for_files = data::resolve_num_workers(-1, device, /*reads_files=*/true);
  model->train();

  for (int64_t epoch = state.epoch; epoch < options.max_epochs && !stop; ++epoch) {
    state.epoch = epoch;
    context.current_epoch = epoch;
    epoch_start = Clock::now();
    skipped_training = 0;
    skipped_validation = 0;
    // Resumed inside this epoch: its count goes on from the checkpoint's (rank 0 holds it).
    skipped_resumed = state.batch_in_epoch > 0 && (!group || group->is_main()) ? state.skipped_in_epoch : 0;
    train_loader.start_epoch(epoch, state.batch_in_epoch);
    DeviceMeter epoch_meter = new_meter();
    DeviceMeter::Reading logged;  // the epoch meter at the last logged line
    if (state.batch_in_epoch > 0 && state.epoch_sums.batches > 0) {
      // Resumed inside this epoch: its metrics go on from the checkpoint's sums (over every rank;
      // rank 0 holds them).
      epoch_meter.resume_from(reading_of(state.epoch_sums, epoch_meter), group == nullptr || group->rank() == 0);
      logged = reading_of(state.logged_sums, epoch_meter);
    }
    if (state.batch_in_epoch == 0) {
      for (auto& entry : callbacks) entry.callback->on_train_epoch_start(context);
    }
    bar.start_epoch(epoch, endless_epochs ? 0 : options.max_epochs, train_batches, state.batch_in_epoch);
    for (int64_t b = state.batch_in_epoch; b < train_batches; ++b) {
      TraceProfiler::Step traced(tracer);  // first: its range covers the whole step
      std::optional<data::Batch> batch;
      {
        PhaseProfiler::Scope timed(profiler, Phase::kData);
        batch = train_loader.next();
      }
      if (!batch) break;
      if (data_options.skip_bad_samples) skipped_training += batch->requested - batch->targets.size(0);
      at::Tensor logits;
      at::Tensor loss;
      const bool step_now = (b + 1) % options.accumulate_grad_batches == 0 || b + 1 == train_batches;
      if (pipeline) {
        // The schedule interleaves the micro-batches' forwards and backwards: one phase.
        PhaseProfiler::Scope timed(profiler, Phase::kForward);
        PipelineStage::Result result = pipeline->train_batch(
            model_inputs(*batch), batch->targets,
            [this](const at::Tensor& outputs, const at::Tensor& targets) { return loss_of(outputs, targets); },
            1.0 / static_cast<double>(options.accumulate_grad_batches),
            [this](const at::Tensor& objective) { return scaler ? scaler->scale(objective) : objective; },
            [this, step_now](bool last) {
              if (reducer) reducer->prepare(/*sync=*/step_now && last);  // replicas of this stage
            });
        loss = result.loss;
        logits = result.outputs;
      } else {
        {
          PhaseProfiler::Scope timed(profiler, Phase::kForward);
          loss = forward_loss(*batch, logits);
        }
        if (reducer) reducer->prepare(/*sync=*/step_now);
        {
          PhaseProfiler::Scope timed(profiler, Phase::kBackward);
          at::Tensor objective =
              options.accumulate_grad_batches > 1 ? loss / static_cast<double>(options.accumulate_grad_batches) : loss;
          (scaler ? scaler->scale(objective) : objective).backward();
        }
      }
      if (reducer && step_now) {
        PhaseProfiler::Scope timed(profiler, Phase::kAllReduce);
        reducer->finish();  // gradients averaged across ranks (still scaled)
      }
      if (loss.defined()) epoch_meter.add(loss, logits, batch->targets);  // a pipeline's last stage
      interval_samples += batch->targets.size(0) * world_size;
      ++interval_batches;
      bar.update(b + 1, batch->targets.size(0));
      state.batch_in_epoch = b + 1;
      beacon_tick(state.global_step);
      if (!step_now) continue;
      bool stepped = true;
      {
        PhaseProfiler::Scope timed(profiler, Phase::kOptimizer);
        stepped = unscale_clip_and_step(by_norm);
      }
      ++state.global_step;
      if (!first_step_reported) {
        first_step_reported = true;
        log::info("first training step done " + fixed(seconds_since_process_start(), 2) +
                  " s after the process started");
      }
      if (state.global_step % options.log_every_n_steps == 0) {
        PhaseProfiler::Scope timed(profiler, Phase::kLogging);
        if (scaler && scaler->skipped_steps() > reported_skips) {
          log::info(std::to_string(scaler->skipped_steps() - reported_skips) +
                    " optimizer step(s) skipped since the last line (inf/NaN gradients under loss scaling); "
                    "loss scale now " +
                    scale_text(scaler->current_scale()));
          reported_skips = scaler->skipped_steps();
        }
        const DeviceMeter::Reading now = epoch_meter.read();
        const DeviceMeter::Reading reading = now.since(logged);
        if (!now.finite()) {
          bar.clear();
          throw_nonfinite(reading.batches, state.global_step, last_path());
        }
        logged = now;
        const double mean_loss = reading.loss();
        const double interval_seconds = std::max(1e-9, seconds_since(interval_start));
        const double rate = static_cast<double>(interval_samples) / interval_seconds;
        std::string line = "epoch " + std::to_string(epoch) + " step " + std::to_string(state.global_step) + " batch " +
                           std::to_string(b + 1) + "/" + std::to_string(train_batches) + " loss " + fixed(mean_loss, 4);
        for (const auto& [name, value] : reading.metrics()) line += " " + name + " " + metric_text(name, value);
        line += " " + fixed(rate, 0) + " samples/s" + throughput.text(interval_samples, interval_seconds);
        // On a terminal the bar shows progress; the log file always gets the line.
        if (bar.active()) {
          log::write_file_only(log::Level::kInfo, line);
        } else {
          log::info(line);
        }
        bar.set_loss(mean_loss);
        MetricRow row{{"train/loss", mean_loss}};
        for (const auto& [name, value] : reading.metrics()) row.push_back({"train/" + name, value});
        row.push_back({"samples_per_sec", rate});
        row.push_back({"batches_per_sec", static_cast<double>(interval_batches) / interval_seconds});
        throughput.add_to(row, interval_samples, interval_seconds);
        log_metrics(row, epoch, state.global_step);
        for (auto& entry : callbacks) entry.callback->on_log_step(context);
        interval_start = Clock::now();
        interval_samples = 0;
        interval_batches = 0;
      }
      // After the row: its lr-<optimizer> is the rate this step used, as Lightning's LR monitor
      // logs it before the batch (it logged the next step's).
      if (stepped && schedule.active() && schedule.per_step()) {  // not after a skipped step
        ++state.scheduler_count;
        apply_lr();
      }
      checkpoint_writer.rethrow_if_failed();  // a full disk stops the run now, not at the next save
      if (options.checkpoint.enabled && options.checkpoint.every_n_train_steps &&
          *options.checkpoint.every_n_train_steps > 0 &&
          state.global_step % *options.checkpoint.every_n_train_steps == 0) {
        keep_epoch_sums(epoch_meter, logged, state);
        save_at_step(state, epoch_meter, epoch);
      }
      if (b + 1 < train_batches && (b + 1) % val_check_batch == 0 && validation_runs &&
          (epoch + 1) % std::max<int64_t>(1, options.check_val_every_n_epoch) == 0) {
        bar.clear();
        PhaseProfiler::Scope timed(profiler, Phase::kValidation);
        validate_mid_epoch(state, context, epoch_meter, logged, b + 1, train_batches);
        if (take_stop_request(context, epoch)) stop = true;  // epochs done: this one not
      }
      // A pipeline's processes agree after every step (the data-parallel flags ride on the
      // gradient all-reduce instead).
      const std::pair<bool, bool> pipeline_agreed = pipeline ? pipeline_flags() : std::pair<bool, bool>{};
      if (options.max_steps > 0 && state.global_step >= options.max_steps) stop = true;
      if (options.max_time_seconds && (time_is_up || (pipeline  ? pipeline_agreed.second
                                                      : reducer ? reducer->out_of_time()
                                                                : out_of_time()))) {
        stop_for_time(epoch + (b + 1 >= train_batches ? 1 : 0));
      }
      // Data parallel: every rank stops after the same step (the flag rides on the all-reduce).
      if (pipeline ? pipeline_agreed.first
          : reducer
              ? (!device.is_cuda() || state.global_step % options.log_every_n_steps == 0) && reducer->stop_requested()
              : stop_signal_received() != 0) {
        bar.clear();
        keep_epoch_sums(epoch_meter, logged, state);
        save_last(state);
        checkpoint_writer.wait();
        // What the profilers recorded is kept, as at the end of fit (Ctrl-C is how a profiled run
        // is often ended).
        tracer.finish();
        if (profiler.table_enabled() && is_main) report_profile(seconds_since(start));
        const std::string signal =
            "signal " + std::to_string(stop_signal_received() != 0 ? stop_signal_received() : SIGTERM);
        const std::string stopped = "stopped after step " + std::to_string(state.global_step);
        if (!options.checkpoint.enabled) {
          throw Error(signal, stopped + "; no checkpoint was written (trainer.enable_checkpointing=false)",
                      "Run the command again to train from the start; with trainer.enable_checkpointing=true a "
                      "stopped fit resumes where it stopped.");
        }
        throw Error(signal, stopped + "; a checkpoint was written to " + last_path(),
                    "Resume with the same command plus ckpt_path=last and hydra.run.dir=" + run_dir + ".");
      }
      if (stop) break;
    }
    const bool epoch_done = state.batch_in_epoch >= train_batches;
    if (epoch_done) {
      state.batch_in_epoch = 0;
      state.epoch = epoch + 1;
      if (schedule.active() && !schedule.per_step()) {
        ++state.scheduler_count;
        apply_lr();
      }
    }
    bar.clear();
    const DeviceMeter::Reading epoch_reading = epoch_meter.read();
    if (!epoch_reading.finite()) {
      throw_nonfinite(epoch_reading.since(logged).batches, state.global_step, last_path());
    }
    // A checkpoint at the epoch's end starts the next epoch from nothing; one of a run stopped
    // inside it (max_steps, max_time) goes on from these sums.
    state.epoch_sums = epoch_done ? MetricSums{} : sums_of(epoch_reading);
    state.logged_sums = epoch_done ? MetricSums{} : sums_of(logged);
    MetricRow row;
    const double epoch_seconds = seconds_since(epoch_start);
    std::string line = "epoch " + std::to_string(epoch) + " done in " + fixed(epoch_seconds, 2) + " s:";
    add_metrics(epoch_reading, "train/", "_epoch", row, line);
    std::optional<double> monitored;
    bool validated = false;
    // An epoch's end validates, and so does a stop for trainer.max_time inside an epoch, as
    // Lightning validates when its Timer stops the fit (a stop for max_steps does not).
    const bool validate_now = validation_runs && (epoch_done ? train_batches % val_check_batch == 0 : time_is_up) &&
                              (epoch + 1) % std::max<int64_t>(1, options.check_val_every_n_epoch) == 0;
    if (validate_now) {
      PhaseProfiler::Scope timed(profiler, Phase::kValidation);
      const DeviceMeter::Reading validation = evaluate(val_set, options.limit_val, -1, &skipped_validation);
      validated = true;
      MetricRow val_row;
      add_metrics(validation, "val/", "", val_row, line);
      latest_validation = std::map<std::string, double>(val_row.begin(), val_row.end());
      row.insert(row.end(), val_row.begin(), val_row.end());
    }
    const int64_t skipped = skipped_in_epoch();
    state.skipped_in_epoch = epoch_done ? 0 : skipped;
    if (skipped > 0) {
      line += "; " + std::to_string(skipped) + " unreadable sample(s) left out (data.on_bad_sample=skip)";
    }
    // The checkpoint's monitor names the epoch's training metrics without the "_epoch" suffix.
    for (const auto& [name, value] : row) {
      const bool epoch_metric = name.size() > 6 && name.compare(name.size() - 6, 6, "_epoch") == 0;
      if ((epoch_metric ? name.substr(0, name.size() - 6) : name) == options.checkpoint.monitor) monitored = value;
    }
    // save_on_train_epoch_end=true ranks an epoch that did not validate by the last validation's
    // value, as Lightning's callback reads its latest metrics (and every_n_train_steps saves do).
    if (!monitored && options.checkpoint.save_on_train_epoch_end == true) {
      if (const auto found = latest_validation.find(options.checkpoint.monitor); found != latest_validation.end()) {
        monitored = found->second;
      }
    }
    log::info(line);
    if (!warned_data_bound && train_set->reads_files()) {  // once a run: the loop waited for files
      const auto warning = data::data_bound_warning(train_loader.epoch_timing(), epoch_seconds,
                                                    train_loader.options().num_workers, epoch, cores_for_files);
      if ((warned_data_bound = warning.has_value())) log::warning(*warning);
    }
    log_metrics(row, epoch, state.global_step);
    if (epoch_done) {
      std::map<std::string, double> epoch_metrics(row.begin(), row.end());
      for (auto& entry : callbacks) entry.callback->on_epoch_end(context, epoch_metrics, validated);
      if (take_stop_request(context, epoch + 1)) stop = true;
    }
    // save_on_train_epoch_end=false: only validations save, and this epoch's end did not validate.
    const bool skip_epoch_save = options.checkpoint.save_on_train_epoch_end == false && !validated;
    if (options.checkpoint.enabled && (epoch_done || validated) && !skip_epoch_save) {
      std::vector<std::string> paths;
      std::vector<std::string> dropped;
      if (monitored && (epoch + 1) % std::max<int64_t>(1, options.checkpoint.every_n_epochs) == 0) {
        const std::string best = update_top_k(state, *monitored, epoch, dropped);
        if (!best.empty()) paths.push_back(best);
      }
      if (options.checkpoint.save_last) paths.push_back(last_path());
      save(state, std::move(paths), std::move(dropped));  // one snapshot for both files
    } else if (options.checkpoint.enabled && stop) {
      save_last(state);  // stopped mid-epoch by max_steps / max_time: resumable from here
    }
  }
  flush_loggers();
  checkpoint_writer.wait();
  if (group) group->barrier("end of fit (rank 0 finishing its checkpoint writes)");
  if (reducer) log::info(reducer->describe_timing());
  if (pipeline) {
    report_pipeline_idle();
  } else {
    report_model_state();
  }
  tracer.finish();
  if (profiler.table_enabled() && is_main) report_profile(seconds_since(start));
  log::info("fit finished in " + fixed(seconds_since(start), 1) + " s, " + std::to_string(state.global_step) +
            " steps" +
            (scaler ? " (" + std::to_string(scaler->skipped_steps()) + " skipped for inf/NaN gradients, loss scale " +
                          scale_text(scaler->current_scale()) + ")"
                    : std::string()));
  const bool test_runs = evaluation_batches(*test_set, options.limit_test) > 0;
  if (options.test_after_fit && !test_runs && is_main) {
    log::warning(
        "test_after_fit: no test batch (" +
        std::string(test_set->size() == 0 ? "the test split is empty" : "trainer.limit_test_batches leaves none") +
        "), so no test runs");
  }
  if (options.test_after_fit && test_runs) {
    const bool best = options.checkpoint.enabled && !state.top_k.empty();
    if (best) {
      load_checkpoint(state.top_k.front().path, *model, nullptr, false, config_yaml, released_tensors());
      log::info("testing the best checkpoint " + state.top_k.front().path);
    } else {
      // As lightning-hydra-template's "Best ckpt not found! Using current weights", with why.
      const std::string why = options.fast_dev_run > 0      ? "trainer.fast_dev_run writes no checkpoint"
                              : !options.checkpoint.enabled ? "checkpointing is off"
                              : options.checkpoint.save_top_k == 0
                                  ? "callbacks.model_checkpoint.save_top_k=0 keeps none"
                                  : "no checkpoint was saved with a " + options.checkpoint.monitor + " to rank it by";
      log::info("testing the weights the fit ended with (no best checkpoint: " + why + ")");
    }
    try {
      run_test("test", /*after_fit=*/true);
    } catch (const Error& error) {
      if (error.where().rfind("signal ", 0) == 0) throw;  // already says so
      // The fit's own work is done and kept: what failed is its test, which can run again alone.
      std::string problem = error.problem();
      while (!problem.empty() && (problem.back() == '.' || problem.back() == '\n')) problem.pop_back();
      // Which checkpoint a `trainer test` of this run can load: the best, else last.ckpt, else none.
      const bool last = options.checkpoint.enabled && options.checkpoint.save_last;
      const std::string kept =
          best || last ? ", and its checkpoints are in " + checkpoint_dir() : ", but wrote no checkpoint to test again";
      const std::string again =
          best   ? "Then test them: trainer test ckpt_path=best hydra.run.dir=" + run_dir + "."
          : last ? "Then test its last checkpoint: trainer test ckpt_path=last hydra.run.dir=" + run_dir + "."
                 : std::string();
      throw Error(error.where(), problem + ". This was the test after fit: the fit itself finished" + kept,
                  error.fix() + (error.fix().empty() || again.empty() ? "" : " ") + again);
    }
  }
  return 0;
}

void Trainer::Impl::run_test(const std::string& split, bool after_fit) {
  const bool is_test = split == "test";
  // Ctrl-C / SIGTERM ends the pass before its next batch; nothing of it is recorded.
  const StopCheck stop_check = [&](int64_t done, int64_t limit) {
    const int signal = stop_signal_received();
    const std::string pass = after_fit ? "the test after fit" : is_test ? "test" : "validate";
    const std::string progress = " stopped after " + std::to_string(done) + " of " + std::to_string(limit) + " batch" +
                                 (limit == 1 ? "" : "es") + "; no " + split + "/* metric was recorded";
    if (after_fit) {
      throw Error("signal " + std::to_string(signal),
                  pass + progress + ". The fit itself finished: its checkpoints are in " + checkpoint_dir(),
                  "Test them when you like: trainer test ckpt_path=best hydra.run.dir=" + run_dir +
                      " (or resume the fit with ckpt_path=last, which tests again).");
    }
    throw Error("signal " + std::to_string(signal), pass + progress,
                "Run the same command again; evaluating never changes the checkpoint.");
  };
  const DeviceMeter::Reading reading = evaluate(
      is_test ? test_set : val_set, is_test ? options.limit_test : options.limit_val, -1, nullptr, &stop_check);
  MetricRow row;
  std::string line;
  add_metrics(reading, split + "/", "", row, line);
  log::info(line.substr(1));
  log_metrics(row, -1, -1);
  flush_loggers();
  if (!is_main) return;
  // The table Lightning ends trainer.validate/test with, its metrics sorted by name (the stdout
  // line below is for scripts).
  std::sort(row.begin(), row.end());
  const std::string title = (is_test ? "Test" : "Validate") + std::string(" metric");
  const std::string rule(36, '-');
  std::string rows, printed;
  for (const auto& [name, value] : row) {
    char text[160];
    std::snprintf(text, sizeof(text), "%-20s%-16.10g\n", name.c_str(), value);
    rows += text;
    // acc as before (a share); the loss with ten decimals; mae, rmse and r2, in the target's units,
    // with ten significant digits, whatever their scale.
    std::snprintf(text, sizeof(text),
                  name == split + "/loss"  ? "%s=%.10f"
                  : name == split + "/acc" ? "%s=%.6f"
                                           : "%s=%.10g",
                  name.c_str(), value);
    printed += (printed.empty() ? "" : " ") + std::string(text);
  }
  log::info("metrics\n" + rule + "\n" + title + std::string(20 - title.size(), ' ') + "Value\n" + rule + "\n" + rows +
            rule);
  std::printf("%s\n", printed.c_str());
  std::fflush(stdout);
}

int Trainer::Impl::evaluate_command(const std::string& split) {
  const bool is_test = split == "test";
  const data::Dataset& dataset = is_test ? *test_set : *val_set;
  if (evaluation_batches(dataset, is_test ? options.limit_test : options.limit_val) == 0) {
    const std::string limit = is_test ? "trainer.limit_test_batches" : "trainer.limit_val_batches";
    throw Error(
        dataset.size() == 0 ? std::string("data") : limit,
        std::string(is_test ? "test" : "validate") + " has no batch to evaluate: " +
            (dataset.size() == 0 ? "the " + std::string(is_test ? "test" : "validation") + " split is empty"
                                 : limit + " leaves none"),
        dataset.size() == 0
            ? (data_options.name == "webdataset"
                   ? std::string(is_test ? "Give the test shards: data.test_shards=<path or "
                                           "pattern>."
                                         : "Give the validation shards: data.val_shards=<path "
                                           "or pattern>.")
               : !is_test                       ? std::string("Set data.val_fraction above 0.")
               : data_options.name == "tensors" ? std::string("Give the test files: data.test_inputs=<.npy file> "
                                                              "data.test_targets=<.npy file>.")
               : data_options.name == "csv"     ? std::string("Give the test table: data.test_path=<.csv file>.")
               : data_options.name == "image_folder"
                   ? "Give data.root a test/ folder of class folders beside train/ (" + data_options.root +
                         " has none)."
                   : std::string("Use a dataset with a test split."))
            : "Set " + limit + " to a share above 0 or a number of batches.");
  }
  load_model_to_evaluate("evaluating");
  run_test(split, /*after_fit=*/false);
  return 0;
}

Trainer::Trainer(config::Node job_config, std::string run_dir, std::string config_yaml)
    : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(job_config);
  impl_->run_dir = std::move(run_dir);
  impl_->config_yaml = std::move(config_yaml);
}

Trainer::~Trainer() = default;

void Trainer::set_distributed(std::shared_ptr<ProcessGroup> group, double bucket_cap_mb) {
  impl_->group = std::move(group);
  impl_->bucket_cap_mb = bucket_cap_mb;
}

void Trainer::Impl::load_model_to_evaluate(const std::string& doing) {
  if (!options.ckpt_path) {
    log::warning("no ckpt_path given: " + doing + " the freshly initialised model");
    return;
  }
  const std::string path = resolve_ckpt_path(*options.ckpt_path);
  const LoopState state = load_checkpoint(path, *model, nullptr, false, config_yaml, released_tensors());
  log::info("loaded " + path + " (" +
            formats::checkpoint_position(state.epoch, state.batch_in_epoch, state.global_step) + ")");
}

int Trainer::run(const std::string& command) {
  // The loggers hear how the command ended (Lightning's finalize): finished, failed or stopped.
  try {
    const int code = run_command(command);
    for (auto& entry : impl_->loggers) entry.logger->finalize(RunEnd::kFinished);
    return code;
  } catch (...) {
    const RunEnd end = stop_signal_received() != 0 ? RunEnd::kInterrupted : RunEnd::kFailed;
    for (auto& entry : impl_->loggers) entry.logger->finalize(end);
    throw;
  }
}

int Trainer::run_command(const std::string& command) {
  try {
    impl_->tune_only = command == "tune_batch_size";
    impl_->command = command;
    impl_->predict_only = command == "predict";
    impl_->setup();
    // Under data parallel: a rank silent or stuck for trainer.hang_timeout ends the job (stopped
    // before the process group goes, when this returns).
    std::unique_ptr<HangWatchdog> watchdog;
    if (impl_->group && impl_->options.hang_timeout_seconds > 0) {
      watchdog = impl_->group->watch_for_hangs(impl_->options.hang_timeout_seconds);
    }
    if (command == "fit") return impl_->fit();
    if (command == "validate") return impl_->evaluate_command("val");
    if (command == "test") return impl_->evaluate_command("test");
    if (command == "predict") return impl_->predict_command();
    if (command == "tune_batch_size") {
      impl_->scale_batch_size(impl_->tuner.mode);
      return 0;
    }
  } catch (const c10::Error& error) {
    if (!is_out_of_memory(error)) throw;
    impl_->throw_out_of_memory(command, error.what_without_backtrace());
  } catch (const std::bad_alloc& error) {
    impl_->throw_out_of_memory(command, std::string("std::bad_alloc (") + error.what() + ")");
  }
  throw Error("command", "unknown command '" + command + "'", "Use fit, validate, test, predict or tune_batch_size.");
}

}  // namespace trainer::engine
