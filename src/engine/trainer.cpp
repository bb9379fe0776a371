#include "trainer/engine/trainer.h"

#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#if TRAINER_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <new>
#include <sstream>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/data/batch_loader.h"
#include "trainer/data/data_options.h"
#include "trainer/data/datasets.h"
#include "trainer/engine/precision/autocast_guard.h"
#include "trainer/engine/tuner/batch_size_search.h"
#include "trainer/engine/distributed/batch_norm_sync.h"
#include "trainer/engine/callbacks/callback.h"
#include "trainer/engine/checkpoint/checkpoint.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/engine/checkpoint/checkpoint_policy.h"
#include "trainer/engine/checkpoint/checkpoint_writer.h"
#include "trainer/engine/device_meter.h"
#include "trainer/engine/callbacks/model_summary.h"
#include "trainer/engine/distributed/progress_beacon.h"
#include "trainer/engine/profiling/cuda_device_info.h"
#include "trainer/engine/profiling/flop_counter.h"
#include "trainer/engine/optim/optimizer_factory.h"
#include "trainer/engine/profiling/flops_throughput.h"
#include "trainer/engine/profiling/gpu_peak_flops.h"
#include "trainer/engine/precision/grad_scaler.h"
#include "trainer/engine/distributed/grad_reducer.h"
#include "trainer/engine/optim/lr_schedule.h"
#include "trainer/engine/profiling/memory_stats.h"
#include "trainer/engine/loggers/metric_logger.h"
#include "trainer/engine/out_of_memory_report.h"
#include "trainer/engine/profiling/phase_profiler.h"
#include "trainer/engine/posix_files.h"
#include "trainer/engine/precision/precision_setup.h"
#include "trainer/engine/distributed/process_group.h"
#include "trainer/engine/callbacks/progress_bar.h"
#include "trainer/engine/torch_compat.h"
#include "trainer/engine/profiling/throughput_setup.h"
#include "trainer/engine/profiling/trace_profiler.h"
#include "trainer/engine/tuner/batch_size_trials.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/engine/trainer_options.h"
#include "trainer/models/model_registry.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

// A non-finite training loss stops fit before anything is saved from the damaged weights: the
// last checkpoint on disk stays the last good one.
[[noreturn]] void throw_nonfinite(int64_t batches, int64_t last_step, const std::string& last_checkpoint) {
  throw Error("training step " + std::to_string(last_step),
              "the loss was not finite (NaN or infinite) in at least one of the " + std::to_string(batches) +
                  " batches trained since the last check",
              "Lower optimizer.lr, enable gradient clipping (trainer.gradient_clip_val=1.0) or check the data. "
              "Nothing was saved from the damaged weights; " +
                  (posix::exists(last_checkpoint)
                       ? "the last good checkpoint is " + last_checkpoint + " (resume with ckpt_path=last)."
                       : std::string("no checkpoint had been written yet, so start again with the changes above.")));
}

// A loss scale as text: every digit a float32 needs (9 significant), short for powers of two.
std::string scale_text(double scale) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", scale);
  return text;
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
    return "made in the " + std::to_string(o.num_workers) +
           " loader worker threads (" + (o.pin_memory ? "pinned, " : "") + "non-blocking), overlapped with training, so not timed here; "
           "the training thread's wait for it is part of waiting for data";
  }
  return {};  // made on the training thread: the row has the numbers
}

}  // namespace

struct Trainer::Impl {
  config::Node config;
  std::string run_dir;
  std::string config_yaml;
  TrainerOptions options;
  TunerOptions tuner;
  bool tune_only = false;  // the command is tune_batch_size
  data::DataOptions data_options;
  at::Device device = at::kCPU;
  std::shared_ptr<models::Model> model;
  models::InputSpec input_spec;
  FlopsThroughput throughput;  // flops_per_sec and mfu at logging steps (set up by fit)
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<at::Tensor> parameters;
  std::shared_ptr<const data::TensorDataset> train_set, val_set, test_set;
  std::vector<std::unique_ptr<MetricLogger>> loggers;
  std::vector<NamedCallback> callbacks;
  // Precision, resolved once in setup: the dtype of weights and inputs (float32 but for 64-true and
  // the half "true" modes), autocast for the mixed modes, and the loss scaler when it is on.
  at::ScalarType param_dtype = at::kFloat;
  bool autocast = false;
  at::ScalarType autocast_dtype = at::kBFloat16;
  std::unique_ptr<GradScaler> scaler;
  std::shared_ptr<ProcessGroup> group;     // data parallel (set_distributed), else null
  double bucket_cap_mb = 25;
  std::unique_ptr<GradReducer> reducer;
  bool is_main = true;                     // rank 0: logs, metrics, checkpoints, progress bar
  int world_size = 1;
  std::map<std::string, double> latest_validation;  // the metrics of the latest validation
  Clock::time_point fit_start = Clock::now();
  PhaseProfiler profiler;              // phases for trainer.profiler=simple/pytorch; off: one branch each
  TraceProfiler tracer;                // trainer.profiler=pytorch; off: one branch per step
  CheckpointWriter checkpoint_writer;  // declared last: destroyed first, finishing any write in flight

  void setup() {
    config::ConfigView view(config);
    options = TrainerOptions::from_config(view, run_dir);
    tuner = TunerOptions::from_config(view);
    profiler = PhaseProfiler(options.profile_simple);
    if (options.accelerator == Accelerator::kCuda) {
      if (!torch::cuda::is_available()) {
        throw Error("trainer.accelerator", "CUDA was asked for but no CUDA device is available",
                    "Use trainer.accelerator=cpu (or auto), or build against the CUDA wheel on a GPU machine.");
      }
      device = at::Device(at::kCUDA, local_cuda_index());
    } else if (options.accelerator == Accelerator::kAuto) {
      device = torch::cuda::is_available() ? at::Device(at::kCUDA, local_cuda_index()) : at::Device(at::kCPU);
    }
    configure_precision();
    torch::manual_seed(options.seed);
    if (options.deterministic) at::globalContext().setDeterministicAlgorithms(true, false);
    if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(options.cudnn_benchmark);

    data_options = data::DataOptions::from_config(view.sub("data"), options.seed);
    data::DataSplits splits = data::load_datasets(data_options);
    train_set = std::make_shared<const data::TensorDataset>(std::move(splits.train));
    val_set = std::make_shared<const data::TensorDataset>(std::move(splits.val));
    test_set = std::make_shared<const data::TensorDataset>(std::move(splits.test));
    const int workers = data::resolve_num_workers(data_options.num_workers, device);
    log::info("data: " + std::to_string(train_set->size()) + " train / " + std::to_string(val_set->size()) + " val / " +
              std::to_string(test_set->size()) + " test samples, batch " + std::to_string(data_options.batch_size) +
              "; loader: " + (workers == 0 ? std::string("batches made on the training thread") : std::to_string(workers) + " worker thread(s)") +
              (data_options.pin_memory && device.is_cuda() ? ", pinned memory, non-blocking copies" : ""));

    models::InputSpec spec;
    auto sizes = train_set->inputs().sizes();
    spec.sample_shape.assign(sizes.begin() + 1, sizes.end());
    spec.num_classes = data_options.num_classes;
    input_spec = spec;
    model = models::ModelRegistry::global().create(view.sub("model"), spec);
    if (param_dtype != at::kFloat) model->to(param_dtype);
    model->to(device);
    parameters = model->parameters();
    optimizer = make_optimizer(options.optimizer, parameters, device);
    if (uses_fused_adam(options.optimizer, device)) {
      log::info(std::string("optimizer ") + optimizer_name(options.optimizer.kind) + ": one fused kernel for all parameters (CUDA)");
    }
    log::info("model: " + model->describe());
    probe_precision(spec, view.get_or<std::string>("model.name", "?"));
    make_scaler();
    if (options.precision != Precision::k32True) {
      log::info(std::string("precision ") + precision_name(options.precision) +
                (scaler ? ", loss scaling from " + scale_text(options.grad_scaler.init_scale) : std::string()));
    }
    if (group) {
      setup_distributed();
    } else if (options.sync_batchnorm) {
      log::info("sync_batchnorm: one process, nothing to synchronise: batch norm is plain batch norm");
    }
    if (options.overfit && is_main) {
      log::info("trainer.overfit_batches: training and validation limited to " +
                (options.limit_train.is_fraction ? fixed(options.limit_train.fraction, 3) + " of their batches"
                                                 : std::to_string(options.limit_train.count) + " batches") +
                ", training shuffle off: the same batches every epoch");
    }
    if (tune_only) return;  // trainer tune batch_size logs no metrics and runs no callbacks
    if (options.enable_loggers && is_main) loggers = make_loggers(view, options.default_root_dir.value_or(run_dir));
    if (options.enable_callbacks) callbacks = make_callbacks(view);
  }

  void make_scaler() { scaler = make_grad_scaler(options, device); }

  // Lightning's precision settings on this device and LibTorch (precision_setup.h); what cannot
  // run here is refused now, naming `precision`, before any data is read.
  void configure_precision() {
    if (falls_back_to_bf16(options, device, is_main)) {
      options.precision = Precision::kBf16Mixed;
      if (!options.grad_scaler.enabled) options.grad_scaler_enabled = false;
      record_in_config("precision", "bf16-mixed");
      record_in_config("trainer.precision", "bf16-mixed");
    }
    const PrecisionDtypes dtypes = precision_dtypes(options, device, is_main);
    param_dtype = dtypes.param;
    autocast = dtypes.autocast;
    autocast_dtype = dtypes.autocast_dtype;
  }

  // Sets `path` (an existing key) in the job config, and in the copy stored with each checkpoint,
  // to what actually runs.
  void record_in_config(const std::string& path, const std::string& value) {
    config::Node* node = config::select(config, path);
    if (node == nullptr) return;
    *node = config::Node::string(value);
    config_yaml = config::to_yaml(config);
  }

  // All-zero inputs of the data's shape and class-0 targets for `samples` samples on the device:
  // the batch of the set-up probes below.
  data::Batch zero_batch(const models::InputSpec& spec, int64_t samples) const {
    std::vector<int64_t> shape{samples};
    shape.insert(shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
    return {at::zeros(shape, at::TensorOptions().dtype(at::kFloat).device(device)),
            at::zeros({samples}, at::TensorOptions().dtype(at::kLong).device(device))};
  }

  // One forward and backward pass of two all-zero samples in the configured precision, in eval
  // mode (no dropout draw, no batch-norm update), gradients dropped afterwards: an operation
  // LibTorch lacks in that dtype on this device (float16 matrix products on the CPU with 1.13, say)
  // fails here, as a configuration error, instead of at the first training step.
  void probe_precision(const models::InputSpec& spec, const std::string& model_name) {
    if (options.precision == Precision::k32True || options.precision == Precision::k64True) return;
    const data::Batch probe = zero_batch(spec, 2);
    const bool was_training = model->is_training();
    model->eval();
    std::string failure;
    try {
      at::Tensor logits;
      forward_loss(probe, logits).backward();
    } catch (const c10::Error& error) {
      failure = error.what_without_backtrace();
    } catch (const std::exception& error) {
      failure = error.what();
    }
    for (auto& parameter : parameters) parameter.mutable_grad() = at::Tensor();
    model->train(was_training);
    if (failure.empty()) return;
    const size_t line_end = failure.find('\n');
    if (line_end != std::string::npos) failure.resize(line_end);
    throw Error("precision",
                std::string("precision=") + precision_name(options.precision) + " cannot run model=" + model_name +
                    " on the " + c10::DeviceTypeName(device.type(), true) + " with LibTorch " +
                    compat::torch_version_text() + ": " + failure,
                device.is_cpu() ? "Use precision=bf16-mixed (or 32) on the CPU, or train on a CUDA device."
                                : "Use precision=16-mixed or bf16-mixed (or 32).");
  }

  // flops_per_sec at every logging step; on a GPU in the peak table, mfu too (throughput_setup.h).
  void setup_throughput() {
    const data::Batch probe = zero_batch(input_spec, 1);
    const ForwardFlops forward = count_forward_flops(*model, [&] {
      at::Tensor logits;
      forward_loss(probe, logits);
    });
    throughput = make_flops_throughput(forward, device, options.precision, world_size, is_main);
  }

  // The optimizer phase of a training step: unscale (so clipping sees true gradients), clip, step
  // and zero the gradients. False when the scaler skipped the step for inf/NaN gradients.
  bool unscale_clip_and_step(bool clip_by_norm) {
    if (scaler) scaler->unscale_(*optimizer);
    if (options.gradient_clip_val) clip_gradients(parameters, *options.gradient_clip_val, clip_by_norm);
    const bool stepped = optimizer_step();
    optimizer->zero_grad();
    return stepped;
  }

  // optimizer.step(), through the loss scaler when it is on; false when the scaler skipped the step
  // for inf/NaN gradients (then the LR schedule must not advance either).
  bool optimizer_step() {
    if (!scaler) {
      optimizer->step();
      return true;
    }
    const bool stepped = scaler->step(*optimizer);
    scaler->update();
    return stepped;
  }

  // Data parallel on CUDA: one device per local rank.
  c10::DeviceIndex local_cuda_index() const {
    return static_cast<c10::DeviceIndex>(group ? group->local_rank() % std::max<int64_t>(1, torch::cuda::device_count()) : 0);
  }

  // Every rank starts from rank 0's weights and writes into rank 0's checkpoint directory (ranks
  // started by torchrun may have composed another timestamped run directory).
  void setup_distributed() {
    is_main = group->is_main();
    world_size = group->world_size();
    if (!is_main) options.enable_progress_bar = false;
    options.checkpoint.dirpath = group->share_string("checkpoint_dir", options.checkpoint.dirpath);
    broadcast_module_state(*group, parameters, model->buffers());
    reducer = std::make_unique<GradReducer>(*group, parameters, bucket_cap_mb, [this] {
      return GradReducer::LocalFlags{stop_signal_received() != 0,
                                     options.max_time_seconds && seconds_since(fit_start) >= *options.max_time_seconds};
    });
    log::info("data parallel: " + std::to_string(world_size) + " ranks, " + std::to_string(reducer->bucket_count()) +
              " gradient bucket(s) of up to " + fixed(bucket_cap_mb, 1) + " MB");
    if (options.sync_batchnorm) synchronise_batch_norms();
  }

  void synchronise_batch_norms() {
    synchronise_batch_norms_over(*model, config::ConfigView(config).get_or<std::string>("model.name", "?"), *group);
  }

  // An allocation failure anywhere in the job, as one paragraph (out_of_memory_report.h).
  [[noreturn]] void throw_out_of_memory(const std::string& command, const std::string& cause) const {
    OutOfMemoryFacts facts;
    facts.command = command;
    facts.cause = cause;
    facts.model_name = config::ConfigView(config).get_or<std::string>("model.name", "?");
    facts.batch_size = data_options.batch_size;
    facts.accumulate_grad_batches = options.accumulate_grad_batches;
    facts.num_workers = data_options.num_workers;
    facts.precision = precision_name(options.precision);
    facts.device = device;
    facts.parameters = &parameters;
    throw_out_of_memory_error(facts);
  }

  // trainer.profiler=simple: the phase table in the log and in <run dir>/fit-profiler.txt.
  void report_profile(double fit_seconds) const {
    std::string text = "profiler (simple): time per phase of fit, host wall clock\n" + profiler.table(fit_seconds);
    if (reducer) text += reducer->describe_timing() + "\n";
    log::info(text);
    write_file_durably(run_dir + "/fit-profiler.txt", text);
  }

  void log_metrics(const MetricRow& row, int64_t epoch, int64_t step) {
    for (auto& logger : loggers) logger->log_metrics(row, epoch, step);
  }
  void flush_loggers() {
    for (auto& logger : loggers) logger->flush();
  }

  // The loop as callbacks see it.
  struct Context final : FitContext {
    Impl& impl;
    LoopState& state;
    std::string stop_reason;
    int64_t current_epoch = 0;  // state.epoch moves on to the next epoch before on_epoch_end runs
    Context(Impl& owner, LoopState& loop) : impl(owner), state(loop), current_epoch(loop.epoch) {}
    int64_t epoch() const override { return current_epoch; }
    int64_t global_step() const override { return state.global_step; }
    int64_t min_epochs() const override { return impl.options.min_epochs; }
    bool lr_changes_per_step() const override {
      return impl.options.scheduler.kind != ScheduleKind::kNone && impl.options.scheduler.per_step;
    }
    int cuda_device() const override { return impl.device.is_cuda() ? impl.device.index() : -1; }
    std::vector<std::pair<std::string, double>> learning_rates() const override {
      std::vector<std::pair<std::string, double>> rates;
      const std::string base = "lr-" + impl.optimizer_class_name();
      const auto& groups = impl.optimizer->param_groups();
      for (size_t i = 0; i < groups.size(); ++i) {
        rates.emplace_back(i == 0 ? base : base + "/pg" + std::to_string(i + 1), groups[i].options().get_lr());
      }
      return rates;
    }
    void log(const MetricRow& metrics) override { impl.log_metrics(metrics, current_epoch, state.global_step); }
    void request_stop(const std::string& reason) override {
      if (stop_reason.empty()) stop_reason = reason;
    }
  };

  std::string optimizer_class_name() const {
    switch (options.optimizer.kind) {
      case OptimizerKind::kSgd: return "SGD";
      case OptimizerKind::kAdam: return "Adam";
      case OptimizerKind::kAdamW: return "AdamW";
    }
    return "?";
  }

  void save_callback_states(LoopState& state) const {
    state.callback_states.clear();
    for (const auto& entry : callbacks) state.callback_states.emplace_back(entry.name, entry.callback->state());
  }
  void restore_callback_states(const LoopState& state) {
    for (const auto& [name, text] : state.callback_states) {
      for (auto& entry : callbacks) {
        if (entry.name == name) entry.callback->load_state(text);
      }
    }
  }

  // `batch_size` 0: data.batch_size.
  data::BatchLoader make_loader(const std::shared_ptr<const data::TensorDataset>& dataset, bool train,
                                int64_t batch_size = 0) const {
    data::LoaderOptions lo;
    lo.batch_size = batch_size > 0 ? batch_size : data_options.batch_size;
    lo.num_workers = data_options.num_workers;
    lo.pin_memory = data_options.pin_memory && device.is_cuda();
    lo.device = device;
    lo.mean = data_options.mean;
    lo.std = data_options.std;
    lo.crop_padding = train ? data_options.random_crop_padding : 0;
    lo.flip = train && data_options.horizontal_flip;
    lo.seed = group ? data::mix_seed(options.seed, static_cast<uint64_t>(group->rank())) : options.seed;
    const int rank = group ? group->rank() : 0;
    // Training pads every rank to the same number of steps (DistributedSampler); evaluation reads
    // each sample exactly once over the ranks, so its metrics match one process's.
    data::EpochSampler sampler = train ? data::EpochSampler(dataset->size(), options.shuffle_train, options.seed, rank, world_size)
                                       : data::EpochSampler::uneven(dataset->size(), rank, world_size);
    return data::BatchLoader(dataset, std::move(sampler), lo);
  }

  // The forward pass (under autocast in the mixed modes: autocast state is per thread, and this
  // runs on the training thread) and the loss; float32 under autocast, as autocast itself would.
  at::Tensor forward_loss(const data::Batch& batch, at::Tensor& logits) {
    AutocastGuard autocast_scope(device.type(), autocast_dtype, autocast);
    at::Tensor inputs = batch.inputs;
    if (param_dtype != at::kFloat) inputs = inputs.to(param_dtype);
    logits = model->forward(inputs);
    return torch::nn::functional::cross_entropy(autocast ? logits.to(at::kFloat) : logits, batch.targets);
  }

  // Batches one validation (or test) pass runs on rank 0, the rank with the most samples: the
  // same number on every rank. Zero means no validation at all (limit_val_batches=0, an empty
  // split), as in Lightning.
  int64_t evaluation_batches(const data::TensorDataset& dataset, const BatchLimit& limit) const {
    const int64_t per_rank = (dataset.size() + world_size - 1) / world_size;
    return limit.resolve((per_rank + data_options.batch_size - 1) / data_options.batch_size);
  }

  // Says once, before fit, what a run without validation gives up.
  void warn_no_validation() const {
    if (!is_main) return;
    std::string why = val_set->size() == 0 ? "the validation split is empty (data.val_fraction)"
                                           : "trainer.limit_val_batches leaves no batch";
    std::string lost;
    if (options.checkpoint.enabled && options.checkpoint.monitor.rfind("val/", 0) == 0) {
      lost += "; callbacks.model_checkpoint.monitor=" + options.checkpoint.monitor +
              " gets no value, so no best checkpoint is kept (last.ckpt still is)";
    }
    if (const config::Node* es = config::select(config, "callbacks.early_stopping.monitor");
        options.enable_callbacks && es != nullptr && es->is_string() && es->as_string().rfind("val/", 0) == 0) {
      lost += "; early stopping on " + es->as_string() + " never triggers";
    }
    log::warning("no validation in this fit: " + why + lost);
  }

  // Runs an evaluation loop over up to `limit` batches; returns (loss, accuracy).
  std::pair<double, double> evaluate(const std::shared_ptr<const data::TensorDataset>& dataset,
                                     const BatchLimit& limit_option, int64_t hard_limit = -1) {
    if (dataset->size() == 0) return {0.0, 0.0};
    data::BatchLoader loader = make_loader(dataset, /*train=*/false);
    int64_t limit = limit_option.resolve(loader.batches_per_epoch());
    if (hard_limit >= 0) limit = std::min(limit, hard_limit);
    torch::NoGradGuard no_grad;
    model->eval();
    DeviceMeter meter;
    meter.reset(device, group.get());
    loader.start_epoch(0);
    for (int64_t i = 0; i < limit; ++i) {
      auto batch = loader.next();
      if (!batch) break;
      at::Tensor logits;
      at::Tensor loss = forward_loss(*batch, logits);
      meter.add(loss, logits, batch->targets);
      beacon_tick(progress_beacon().step.load(std::memory_order_relaxed));
    }
    model->train();
    const DeviceMeter::Reading reading = meter.read();
    return {reading.loss(), reading.accuracy()};
  }

  void restore_precision_state(const LoopState& state) {
    const std::string name = precision_name(options.precision);
    if (state.precision != name) {
      log::info("the checkpoint was written with precision=" + state.precision + "; continuing with precision=" + name);
    }
    if (!scaler) return;
    if (state.grad_scaler) {
      scaler->load_state(*state.grad_scaler);
      log::info("loss scale restored: " + scale_text(state.grad_scaler->scale) + ", " +
                std::to_string(state.grad_scaler->growth_tracker) + " good steps towards the next growth");
    } else {
      log::info("the checkpoint holds no loss-scaler state: loss scaling starts from init_scale");
    }
  }

  std::string checkpoint_dir() const { return options.checkpoint.dirpath; }
  std::string last_path() const { return checkpoint_dir() + "/last.ckpt"; }

  std::string resolve_ckpt_path(const std::string& wanted) const {
    return formats::resolve_checkpoint_name(wanted, checkpoint_dir());
  }

  // Top-k bookkeeping for a new score (checkpoint_policy.h): the file this epoch's checkpoint goes
  // to (empty if it does not make the top k); files that fell out of the top k go to `dropped`.
  std::string update_top_k(LoopState& state, double score, int64_t epoch, std::vector<std::string>& dropped) {
    // The name's metric fields: the latest validation's, and the monitored value as scored now.
    std::map<std::string, double> metrics = latest_validation;
    metrics[options.checkpoint.monitor] = score;
    return engine::update_top_k(state.top_k, options.checkpoint, score, epoch, state.global_step, metrics, dropped);
  }

  // Takes the snapshot here (callback states, loggers flushed, model + optimizer + loop state
  // serialised) and hands the bytes to the background writer, which writes every path from them.
  void save(LoopState& state, std::vector<std::string> paths, std::vector<std::string> dropped = {}) {
    if (!options.checkpoint.enabled || paths.empty() || !is_main) return;
    PhaseProfiler::Scope timed(profiler, Phase::kCheckpoint);
    save_callback_states(state);
    flush_loggers();
    state.precision = precision_name(options.precision);
    state.grad_scaler.reset();
    if (scaler) state.grad_scaler = scaler->state();
    auto bytes = std::make_shared<const std::string>(serialize_checkpoint(*model, *optimizer, state, config_yaml));
    checkpoint_writer.write(std::move(bytes), std::move(paths), std::move(dropped));
  }

  // Mid-epoch checkpoints (every_n_train_steps, a signal, max_steps/max_time) first make sure no
  // loss of this epoch was non-finite: one small host read, only when a checkpoint is written.
  void check_finite_before_saving(const DeviceMeter& epoch_meter, const LoopState& state) const {
    if (!epoch_meter.read().finite()) throw_nonfinite(epoch_meter.batches, state.global_step, last_path());
  }

  void save_last(LoopState& state) { save(state, {last_path()}); }

  // model_checkpoint.every_n_train_steps: last.ckpt, and a top-k file when the monitored metric has
  // a value: a val/* metric's from the latest validation, a train/* metric's as this epoch's running
  // mean (one host read, only at these checkpoints), as Lightning's ModelCheckpoint uses the latest
  // logged value.
  void save_at_step(LoopState& state, const DeviceMeter& epoch_meter, int64_t epoch) {
    const std::string& monitor = options.checkpoint.monitor;
    std::optional<double> value;
    if (const auto found = latest_validation.find(monitor); found != latest_validation.end()) value = found->second;
    if (monitor == "train/loss" || monitor == "train/acc") {
      const DeviceMeter::Reading reading = epoch_meter.read();
      value = monitor == "train/loss" ? reading.loss() : reading.accuracy();
    }
    std::vector<std::string> paths;
    std::vector<std::string> dropped;
    if (value) {
      const std::string best = update_top_k(state, *value, epoch, dropped);
      if (!best.empty()) paths.push_back(best);
    }
    paths.push_back(last_path());
    save(state, std::move(paths), std::move(dropped));
  }

  // A callback asked to stop (early stopping): honoured once min_epochs are done, else logged and
  // dropped. Returns whether fit stops.
  bool take_stop_request(Context& context, int64_t epoch) const {
    if (context.stop_reason.empty()) return false;
    if (epoch + 1 >= options.min_epochs) {
      log::info(context.stop_reason);
      return true;
    }
    log::info(context.stop_reason + " (held back: trainer.min_epochs=" + std::to_string(options.min_epochs) +
              " not reached yet)");
    context.stop_reason.clear();
    return false;
  }

  // Lightning's val_check_batch: validation runs after every this many training batches of an
  // epoch (a float val_check_interval is a share of the epoch, an int a number of batches).
  int64_t resolve_val_check_batch(int64_t train_batches) const {
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
                  "validation every " + std::to_string(every) + " batches falls between optimizer steps "
                  "(trainer.accumulate_grad_batches=" + std::to_string(options.accumulate_grad_batches) + ")",
                  "Use a multiple of accumulate_grad_batches.");
    }
    return every;
  }

  // A validation inside the epoch (val_check_interval below one epoch): logs val/*, hands the
  // metrics to the callbacks, and writes the top-k checkpoint and last.ckpt (resumable from the next
  // batch), as Lightning's ModelCheckpoint does after every validation.
  void validate_mid_epoch(LoopState& state, Context& context, const DeviceMeter& epoch_meter, int64_t batch,
                          int64_t train_batches) {
    check_finite_before_saving(epoch_meter, state);
    auto [val_loss, val_acc] = evaluate(val_set, options.limit_val);
    log::info("epoch " + std::to_string(context.current_epoch) + " step " + std::to_string(state.global_step) +
              " batch " + std::to_string(batch) + "/" + std::to_string(train_batches) + ": val/loss " +
              fixed(val_loss, 4) + " val/acc " + fixed(val_acc, 4));
    const std::map<std::string, double> metrics = {{"val/loss", val_loss}, {"val/acc", val_acc}};
    log_metrics({{"val/loss", val_loss}, {"val/acc", val_acc}}, context.current_epoch, state.global_step);
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

  // ---- Batch-size search (docs/tuning.md) ----

  // A few real training steps (forward, backward, optimizer) on batches of `batch_size` from the
  // training set, in the configured precision on the configured device.
  void run_trial_steps(int64_t batch_size) {
    data::BatchLoader loader = make_loader(train_set, /*train=*/true, batch_size);
    int64_t epoch = 0;
    loader.start_epoch(epoch);
    const bool by_norm = options.gradient_clip_algorithm == ClipAlgorithm::kNorm;
    model->train();
    for (int64_t step = 0; step < tuner.steps_per_trial; ++step) {
      std::optional<data::Batch> batch = loader.next();
      if (!batch) {  // a batch of most of the training set: the next step starts another pass
        loader.start_epoch(++epoch);
        batch = loader.next();
      }
      at::Tensor logits;
      at::Tensor loss = forward_loss(*batch, logits);
      (scaler ? scaler->scale(loss) : loss).backward();
      unscale_clip_and_step(by_norm);
    }
    if (device.is_cuda()) torch::cuda::synchronize();  // a failure of the last kernels shows here
  }

  // Lightning's scale_batch_size (batch_size_trials.h): sets data.batch_size to the batch found.
  int64_t scale_batch_size(ScaleMode mode) {
    if (group) {
      throw Error("batch size search", "cannot run in a data-parallel job (" + std::to_string(group->world_size()) + " ranks)",
                  "Search with one process (trainer.devices=1), then run the data-parallel fit with the batch it found "
                  "(data.batch_size=...), as Lightning requires.");
    }
    TrialSubject subject;
    subject.model = model.get();
    subject.parameters = &parameters;
    subject.device = device;
    subject.train_samples = train_set->size();
    subject.run_steps = [this](int64_t batch_size) { run_trial_steps(batch_size); };
    subject.fresh_optimizer = [this] {
      optimizer = make_optimizer(options.optimizer, parameters, device);
      make_scaler();
    };
    data_options.batch_size = run_batch_size_search(mode, tuner, run_dir, subject);
    return data_options.batch_size;
  }

  // trainer.auto_scale_batch_size with fit: the search first (skipped under fast_dev_run, as in
  // Lightning; a resumed run keeps the batch its first search found, since the checkpoint's loop
  // position counts batches of that size).
  void auto_scale_before_fit() {
    if (!tuner.auto_scale) return;
    if (options.fast_dev_run > 0) {
      log::warning("trainer.auto_scale_batch_size: skipped under fast_dev_run (as Lightning does)");
      return;
    }
    const std::string earlier = run_dir + "/tune_batch_size.yaml";
    if (options.ckpt_path && posix::exists(earlier)) {
      const config::YamlDocument document = config::load_yaml_file(earlier);
      data_options.batch_size = config::ConfigView(document.root).get<int64_t>("batch_size");
      log::info("resuming: batch size " + std::to_string(data_options.batch_size) + " from the earlier search (" +
                earlier + ")");
      return;
    }
    const int64_t found = scale_batch_size(*tuner.auto_scale);
    log::info("fit runs with the batch size found: data.batch_size=" + std::to_string(found));
  }

  int fit() {
    if (is_main) log::info("model summary\n" + model_summary(*model));
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
      const std::string path = resolve_ckpt_path(*options.ckpt_path);
      state = load_checkpoint(path, *model, optimizer.get(), /*restore_rng=*/true, config_yaml);
      // The best files live beside last.ckpt: a run directory copied or moved since keeps its own
      // files, and never deletes (as fallen out of the top k) those at the recorded location.
      for (TopKEntry& entry : state.top_k) {
        entry.path = checkpoint_dir() + "/" + entry.path.substr(entry.path.find_last_of('/') + 1);
      }
      restore_callback_states(state);
      restore_precision_state(state);
      log::info("resumed from " + path + " at epoch " + std::to_string(state.epoch) + ", batch " +
                std::to_string(state.batch_in_epoch) + ", step " + std::to_string(state.global_step));
    }
    for (auto& logger : loggers) {
      logger->on_fit_start(resuming ? std::optional<int64_t>(state.global_step) : std::nullopt);
    }
    data::BatchLoader train_loader = make_loader(train_set, /*train=*/true);
    CopyPhase copy_phase(profiler);
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
    LrSchedule schedule(options.scheduler, options.optimizer.lr, total_steps);
    auto apply_lr = [&] {
      if (schedule.active()) set_lr(*optimizer, schedule.lr_at(state.scheduler_count));
    };
    apply_lr();

    setup_throughput();
    Context context(*this, state);
    ProgressBar bar(options.enable_progress_bar);
    for (auto& entry : callbacks) entry.callback->on_fit_start(context);
    const bool validation_runs = evaluation_batches(*val_set, options.limit_val) > 0;
    if (!validation_runs) warn_no_validation();
    if (!resuming && options.num_sanity_val_steps > 0 && validation_runs) {
      evaluate(val_set, options.limit_val, options.num_sanity_val_steps);
    }
    const auto start = Clock::now();
    fit_start = start;
    auto epoch_start = start;
    auto interval_start = Clock::now();
    int64_t interval_samples = 0;
    int64_t interval_batches = 0;  // this rank's batches since the last logging step
    bool stop = false;
    bool first_step_reported = false;
    const bool by_norm = options.gradient_clip_algorithm == ClipAlgorithm::kNorm;
    int64_t reported_skips = 0;
    model->train();

    for (int64_t epoch = state.epoch; epoch < options.max_epochs && !stop; ++epoch) {
      state.epoch = epoch;
      context.current_epoch = epoch;
      epoch_start = Clock::now();
      train_loader.start_epoch(epoch, state.batch_in_epoch);
      DeviceMeter epoch_meter;
      epoch_meter.reset(device, group.get());
      DeviceMeter::Reading logged;  // the epoch meter at the last logged line
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
        at::Tensor logits;
        at::Tensor loss;
        {
          PhaseProfiler::Scope timed(profiler, Phase::kForward);
          loss = forward_loss(*batch, logits);
        }
        const bool step_now = (b + 1) % options.accumulate_grad_batches == 0 || b + 1 == train_batches;
        if (reducer) reducer->prepare(/*sync=*/step_now);
        {
          PhaseProfiler::Scope timed(profiler, Phase::kBackward);
          at::Tensor objective =
              options.accumulate_grad_batches > 1 ? loss / static_cast<double>(options.accumulate_grad_batches) : loss;
          (scaler ? scaler->scale(objective) : objective).backward();
        }
        if (reducer && step_now) {
          PhaseProfiler::Scope timed(profiler, Phase::kAllReduce);
          reducer->finish();  // gradients averaged across ranks (still scaled)
        }
        epoch_meter.add(loss, logits, batch->targets);
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
        if (stepped && schedule.active() && schedule.per_step()) {  // not after a skipped step
          ++state.scheduler_count;
          apply_lr();
        }
        if (state.global_step % options.log_every_n_steps == 0) {
          PhaseProfiler::Scope timed(profiler, Phase::kLogging);
          if (scaler && scaler->skipped_steps() > reported_skips) {
            log::info(std::to_string(scaler->skipped_steps() - reported_skips) +
                      " optimizer step(s) skipped since the last line (inf/NaN gradients under loss scaling); "
                      "loss scale now " + scale_text(scaler->current_scale()));
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
          const double accuracy = reading.accuracy();
          const double interval_seconds = std::max(1e-9, seconds_since(interval_start));
          const double rate = static_cast<double>(interval_samples) / interval_seconds;
          const std::string line = "epoch " + std::to_string(epoch) + " step " + std::to_string(state.global_step) +
                                   " batch " + std::to_string(b + 1) + "/" + std::to_string(train_batches) +
                                   " loss " + fixed(mean_loss, 4) + " acc " + fixed(accuracy, 4) + " " +
                                   fixed(rate, 0) + " samples/s" + throughput.text(interval_samples, interval_seconds);
          // On a terminal the bar shows progress; the log file always gets the line.
          if (bar.active()) {
            log::write_file_only(log::Level::kInfo, line);
          } else {
            log::info(line);
          }
          bar.set_loss(mean_loss);
          MetricRow row{{"train/loss", mean_loss}, {"train/acc", accuracy}, {"samples_per_sec", rate},
                        {"batches_per_sec", static_cast<double>(interval_batches) / interval_seconds}};
          throughput.add_to(row, interval_samples, interval_seconds);
          log_metrics(row, epoch, state.global_step);
          for (auto& entry : callbacks) entry.callback->on_log_step(context);
          interval_start = Clock::now();
          interval_samples = 0;
          interval_batches = 0;
        }
        if (options.checkpoint.enabled && options.checkpoint.every_n_train_steps &&
            *options.checkpoint.every_n_train_steps > 0 &&
            state.global_step % *options.checkpoint.every_n_train_steps == 0) {
          check_finite_before_saving(epoch_meter, state);
          save_at_step(state, epoch_meter, epoch);
        }
        if (b + 1 < train_batches && (b + 1) % val_check_batch == 0 && validation_runs &&
            (epoch + 1) % std::max<int64_t>(1, options.check_val_every_n_epoch) == 0) {
          bar.clear();
          PhaseProfiler::Scope timed(profiler, Phase::kValidation);
          validate_mid_epoch(state, context, epoch_meter, b + 1, train_batches);
          if (take_stop_request(context, epoch)) stop = true;
        }
        if ((options.max_steps > 0 && state.global_step >= options.max_steps) ||
            (options.max_time_seconds && (reducer ? reducer->out_of_time() : seconds_since(start) >= *options.max_time_seconds))) {
          stop = true;
        }
        // Data parallel: every rank stops after the same step (the flag rides on the all-reduce).
        if (reducer ? (!device.is_cuda() || state.global_step % options.log_every_n_steps == 0) && reducer->stop_requested()
                    : stop_signal_received() != 0) {
          bar.clear();
          check_finite_before_saving(epoch_meter, state);
          save_last(state);
          checkpoint_writer.wait();
          throw Error("signal " + std::to_string(stop_signal_received() != 0 ? stop_signal_received() : SIGTERM),
                      "stopped after step " + std::to_string(state.global_step) + "; a checkpoint was written to " +
                          last_path(),
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
      const double train_loss = epoch_reading.loss();
      const double train_acc = epoch_reading.accuracy();
      std::vector<std::pair<std::string, double>> row = {{"train/loss_epoch", train_loss},
                                                         {"train/acc_epoch", train_acc}};
      const double epoch_seconds = seconds_since(epoch_start);
      std::string line = "epoch " + std::to_string(epoch) + " done in " + fixed(epoch_seconds, 2) + " s: train/loss " + fixed(train_loss, 4) +
                         " train/acc " + fixed(train_acc, 4);
      std::optional<double> monitored;
      bool validated = false;
      const bool validate_now = epoch_done && validation_runs && train_batches % val_check_batch == 0 &&
                                (epoch + 1) % std::max<int64_t>(1, options.check_val_every_n_epoch) == 0;
      if (validate_now) {
        PhaseProfiler::Scope timed(profiler, Phase::kValidation);
        auto [val_loss, val_acc] = evaluate(val_set, options.limit_val);
        validated = true;
        row.push_back({"val/loss", val_loss});
        row.push_back({"val/acc", val_acc});
        line += " val/loss " + fixed(val_loss, 4) + " val/acc " + fixed(val_acc, 4);
        if (options.checkpoint.monitor == "val/acc") monitored = val_acc;
        if (options.checkpoint.monitor == "val/loss") monitored = val_loss;
        latest_validation = {{"val/loss", val_loss}, {"val/acc", val_acc}};
      }
      if (options.checkpoint.monitor == "train/loss") monitored = train_loss;
      if (options.checkpoint.monitor == "train/acc") monitored = train_acc;
      log::info(line);
      log_metrics(row, epoch, state.global_step);
      if (epoch_done) {
        std::map<std::string, double> epoch_metrics(row.begin(), row.end());
        for (auto& entry : callbacks) entry.callback->on_epoch_end(context, epoch_metrics, validated);
        if (take_stop_request(context, epoch)) stop = true;
      }
      // save_on_train_epoch_end=false: only validations save, and this epoch's end did not validate.
      const bool skip_epoch_save = options.checkpoint.save_on_train_epoch_end == false && !validated;
      if (options.checkpoint.enabled && epoch_done && !skip_epoch_save) {
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
    tracer.finish();
    if (profiler.table_enabled() && is_main) report_profile(seconds_since(start));
    log::info("fit finished in " + fixed(seconds_since(start), 1) + " s, " + std::to_string(state.global_step) +
              " steps" +
              (scaler ? " (" + std::to_string(scaler->skipped_steps()) + " skipped for inf/NaN gradients, loss scale " +
                            scale_text(scaler->current_scale()) + ")"
                      : std::string()));
    const bool test_runs = evaluation_batches(*test_set, options.limit_test) > 0;
    if (options.test_after_fit && !test_runs && is_main) {
      log::warning("test_after_fit: no test batch (" +
                   std::string(test_set->size() == 0 ? "the test split is empty" : "trainer.limit_test_batches leaves none") +
                   "), so no test runs");
    }
    if (options.test_after_fit && test_runs) {
      if (options.checkpoint.enabled && !state.top_k.empty()) {
        load_checkpoint(state.top_k.front().path, *model, nullptr, false, config_yaml);
        log::info("testing the best checkpoint " + state.top_k.front().path);
      }
      run_test("test");
    }
    return 0;
  }

  void run_test(const std::string& split) {
    const bool is_test = split == "test";
    auto [loss, accuracy] = evaluate(is_test ? test_set : val_set, is_test ? options.limit_test : options.limit_val);
    log::info(split + "/loss " + fixed(loss, 4) + " " + split + "/acc " + fixed(accuracy, 4));
    log_metrics({{split + "/loss", loss}, {split + "/acc", accuracy}}, -1, -1);
    flush_loggers();
    if (!is_main) return;
    // The table Lightning ends trainer.validate/test with (the stdout line below is for scripts).
    const std::string title = (is_test ? "Test" : "Validate") + std::string(" metric");
    const std::string rule(36, '-');
    char rows[160];
    std::snprintf(rows, sizeof(rows), "%-20s%-16.10g\n%-20s%-16.10g\n", (split + "/acc").c_str(), accuracy,
                  (split + "/loss").c_str(), loss);
    log::info("metrics\n" + rule + "\n" + title + std::string(20 - title.size(), ' ') + "Value\n" + rule + "\n" + rows +
              rule);
    std::printf("%s/acc=%.6f %s/loss=%.10f\n", split.c_str(), accuracy, split.c_str(), loss);
    std::fflush(stdout);
  }

  int evaluate_command(const std::string& split) {
    const bool is_test = split == "test";
    const data::TensorDataset& dataset = is_test ? *test_set : *val_set;
    if (evaluation_batches(dataset, is_test ? options.limit_test : options.limit_val) == 0) {
      const std::string limit = is_test ? "trainer.limit_test_batches" : "trainer.limit_val_batches";
      throw Error(dataset.size() == 0 ? std::string("data") : limit,
                  std::string(is_test ? "test" : "validate") + " has no batch to evaluate: " +
                      (dataset.size() == 0 ? "the " + std::string(is_test ? "test" : "validation") + " split is empty"
                                           : limit + " leaves none"),
                  dataset.size() == 0 ? (is_test ? std::string("Use a dataset with a test split.")
                                                 : std::string("Set data.val_fraction above 0."))
                                      : "Set " + limit + " to a share above 0 or a number of batches.");
    }
    if (options.ckpt_path) {
      const std::string path = resolve_ckpt_path(*options.ckpt_path);
      const LoopState state = load_checkpoint(path, *model, nullptr, false, config_yaml);
      log::info("loaded " + path + " (epoch " + std::to_string(state.epoch) + ", step " +
                std::to_string(state.global_step) + ")");
    } else {
      log::warning("no ckpt_path given: evaluating the freshly initialised model");
    }
    run_test(split);
    return 0;
  }
};

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

int Trainer::run(const std::string& command) {
  try {
    impl_->tune_only = command == "tune_batch_size";
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
  throw Error("command", "unknown command '" + command + "'", "Use fit, validate, test or tune_batch_size.");
}

}  // namespace trainer::engine
