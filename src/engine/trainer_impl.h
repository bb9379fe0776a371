// Trainer::Impl, the state of one job's trainer, shared by the files that define its parts:
// trainer.cpp (the loop: fit, validation, test), trainer_setup.cpp (device, precision, data,
// model, optimizer, data parallel, the batch-size search) and trainer_checkpointing.cpp (what a
// checkpoint holds, when it is written and where). Private to the engine: not installed.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "trainer/config/config_view.h"
#include "trainer/data/batch_loader.h"
#include "trainer/data/data_options.h"
#include "trainer/data/datasets.h"
#include "trainer/engine/callbacks/callback.h"
#include "trainer/engine/checkpoint/checkpoint.h"
#include "trainer/engine/checkpoint/checkpoint_writer.h"
#include "trainer/engine/device_meter.h"
#include "trainer/engine/distributed/grad_reducer.h"
#include "trainer/engine/distributed/pipeline_stage.h"
#include "trainer/engine/distributed/process_group.h"
#include "trainer/engine/loggers/metric_logger.h"
#include "trainer/engine/precision/grad_scaler.h"
#include "trainer/engine/precision/precision_setup.h"
#include "trainer/engine/profiling/flops_throughput.h"
#include "trainer/engine/profiling/phase_profiler.h"
#include "trainer/engine/profiling/trace_profiler.h"
#include "trainer/engine/trainer.h"
#include "trainer/engine/trainer_options.h"
#include "trainer/engine/tuner/batch_size_search.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/models/model_registry.h"
#include "trainer/util/fixed_text.h"

namespace trainer::engine {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline std::string fixed(double value, int digits) { return fixed_text(value, digits); }

// A meter's reading as a checkpoint keeps it, and back (with `like`'s kind of metrics).
inline MetricSums sums_of(const DeviceMeter::Reading& r) { return r; }
inline DeviceMeter::Reading reading_of(const MetricSums& s, const DeviceMeter& like) {
  DeviceMeter::Reading r;
  static_cast<MetricSums&>(r) = s;
  r.regression = like.regression;
  r.target_std = like.target_std;
  return r;
}

// A value of any scale in a log line: five significant digits ("48.603", "6.0077e-31").
inline std::string general(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.5g", value);
  return text;
}

// A loss scale as text: every digit a float32 needs (9 significant), short for powers of two.
inline std::string scale_text(double scale) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", scale);
  return text;
}

// A non-finite training loss stops fit before anything is saved from the damaged weights: the
// last checkpoint on disk stays the last good one.
[[noreturn]] void throw_nonfinite(int64_t batches, int64_t last_step, const std::string& last_checkpoint);

struct Trainer::Impl {
  config::Node config;
  std::string run_dir;
  std::string config_yaml;
  TrainerOptions options;
  TunerOptions tuner;
  bool tune_only = false;     // the command is tune_batch_size
  std::string command;        // fit, validate, test, predict, tune_batch_size
  bool predict_only = false;  // the command is predict (data=image_folder reads data.root's images)
  std::shared_ptr<const data::Dataset> predict_set;  // what predict reads (set up for predict only)
  data::DataOptions data_options;
  at::Device device = at::kCPU;
  std::shared_ptr<models::Model> model;
  models::InputSpec input_spec;
  FlopsThroughput throughput;  // flops_per_sec and mfu at logging steps (set up by fit)
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<at::Tensor> parameters;
  std::shared_ptr<const data::Dataset> train_set, val_set, test_set;
  std::vector<std::string> class_names;  // the data's, in label order (empty: it names none)
  // data.task=regression: one output, MSE loss, metrics mae/rmse/r2 in the target's units.
  std::optional<data::RegressionTarget> regression;
  std::vector<NamedLogger> loggers;
  std::vector<NamedCallback> callbacks;
  // Precision, resolved once in setup: the dtype of weights and inputs (float32 but for 64-true and
  // the half "true" modes), autocast for the mixed modes, and the loss scaler when it is on.
  at::ScalarType param_dtype = at::kFloat;
  bool autocast = false;
  at::ScalarType autocast_dtype = at::kBFloat16;
  std::unique_ptr<GradScaler> scaler;
  std::shared_ptr<ProcessGroup> group;  // data parallel (set_distributed), else null
  double bucket_cap_mb = 25;
  // A pipeline run by several replicas: this stage's processes in every replica, whose gradients
  // the reducer averages.
  std::unique_ptr<ProcessGroup> stage_replicas;
  std::unique_ptr<GradReducer> reducer;  // declared after the group it uses: destroyed first
  // trainer.strategy=pipeline: this process's stage (then `parameters` are the stage's, and
  // world_size and data_rank count pipelines, not processes), else null.
  std::unique_ptr<PipelineStage> pipeline;
  // The model summary fit logs, taken at setup (before a pipeline stage frees the other stages'
  // weights).
  std::string summary_text;
  int data_rank = 0;    // this process's share of the data: its rank, or its pipeline's index
  bool is_main = true;  // rank 0: logs, metrics, checkpoints, progress bar
  int world_size = 1;
  std::map<std::string, double> latest_validation;  // the metrics of the latest validation
  // The optimizer step whose model was last scored for the top k, and the file it got ("" when it
  // did not make the top k): a step-based save and the epoch's end (or its validation) at one step
  // score one model, and the later (fresher) score takes the earlier one's place, so the k best
  // files are k different models (Lightning saves once per step, _last_global_step_saved).
  int64_t top_k_scored_step = -1;
  std::string top_k_scored_path;
  Clock::time_point fit_start = Clock::now();
  // The seconds a resumed fit had trained before (the checkpoint's), counted by trainer.max_time.
  double fit_seconds_before = 0.0;
  // Whether this process's fit has used up trainer.max_time (its earlier attempts' time included).
  bool out_of_time() const {
    return options.max_time_seconds && fit_seconds_before + seconds_since(fit_start) >= *options.max_time_seconds;
  }
  PhaseProfiler profiler;              // phases for trainer.profiler=simple/pytorch; off: one branch each
  TraceProfiler tracer;                // trainer.profiler=pytorch; off: one branch per step
  CheckpointWriter checkpoint_writer;  // declared last: destroyed first, finishing any write in flight

  void setup();
  // The checkpoint's and early stopping's monitors checked against the task's metrics: under
  // data.task=regression an accuracy monitor (the default) becomes the loss, said once.
  void fit_monitors_to_task();

  void make_scaler() { scaler = make_grad_scaler(options, device); }

  // Lightning's precision settings on this device and LibTorch (precision_setup.h); what cannot
  // run here is refused now, naming `precision`, before any data is read.
  void configure_precision();

  // Sets `path` (an existing key) in the job config, and in the copy stored with each checkpoint,
  // to what actually runs.
  void record_in_config(const std::string& path, const std::string& value);

  // All-zero inputs of the data's shape and class-0 targets for `samples` samples on the device:
  // the batch of the set-up probes below.
  data::Batch zero_batch(const models::InputSpec& spec, int64_t samples) const;

  // One forward and backward pass of two all-zero samples in the configured precision, in eval
  // mode (no dropout draw, no batch-norm update), gradients dropped afterwards: an operation
  // LibTorch lacks in that dtype on this device (float16 matrix products on the CPU with 1.13, say)
  // fails here, as a configuration error, instead of at the first training step.
  void probe_precision(const models::InputSpec& spec, const std::string& model_name);

  // flops_per_sec at every logging step; on a GPU in the peak table, mfu too (throughput_setup.h).
  void setup_throughput();

  // The optimizer phase of a training step: unscale (so clipping sees true gradients), clip, step
  // and zero the gradients. False when the scaler skipped the step for inf/NaN gradients.
  bool unscale_clip_and_step(bool clip_by_norm);

  // optimizer.step(), through the loss scaler when it is on; false when the scaler skipped the step
  // for inf/NaN gradients (then the LR schedule must not advance either).
  bool optimizer_step();

  // Data parallel on CUDA: one device per local rank.
  c10::DeviceIndex local_cuda_index() const;

  // Every rank starts from rank 0's weights and writes into rank 0's checkpoint directory (ranks
  // started by torchrun may have composed another timestamped run directory).
  void setup_distributed();

  void synchronise_batch_norms();

  // An allocation failure anywhere in the job, as one paragraph (out_of_memory_report.h).
  [[noreturn]] void throw_out_of_memory(const std::string& command, const std::string& cause) const;

  // trainer.profiler=simple: the phase table in the log and in <run dir>/fit-profiler.txt.
  void report_profile(double fit_seconds) const;

  void log_metrics(const MetricRow& row, int64_t epoch, int64_t step);
  void flush_loggers();

  // The loop as callbacks see it.
  struct Context final : FitContext {
    Impl& impl;
    LoopState& state;
    std::string stop_reason;      // a callback's request to stop (the first), pending until min_epochs
    bool stop_held_back = false;  // the request was held back by min_epochs (said once)
    int64_t current_epoch = 0;    // state.epoch moves on to the next epoch before on_epoch_end runs
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

  std::string optimizer_class_name() const;

  void save_callback_states(LoopState& state) const;
  void restore_callback_states(const LoopState& state);
  // A resume whose model checkpoint or early stopping watches another metric or mode than the
  // run that wrote `checkpoint` starts that callback's record afresh (the best files, the best
  // score and patience), with a warning, as Lightning keys a callback's state by its monitor.
  void forget_states_of_other_monitors(const std::string& checkpoint, LoopState& state) const;
  // A resume inside an epoch counts its place in batches: with another data.batch_size than the
  // run that wrote `checkpoint`, samples of this epoch are skipped or seen twice; said once.
  void warn_of_another_batch_size(const std::string& checkpoint, const LoopState& state) const;
  void save_logger_states(LoopState& state) const;

  // `batch_size` 0: data.batch_size.
  data::BatchLoader make_loader(const std::shared_ptr<const data::Dataset>& dataset, bool train,
                                int64_t batch_size = 0) const;

  // The forward pass (under autocast in the mixed modes: autocast state is per thread, and this
  // runs on the training thread) and the loss; float32 under autocast, as autocast itself would.
  at::Tensor forward_loss(const data::Batch& batch, at::Tensor& logits);
  // The loss of a batch's (or micro-batch's) outputs: MSE for a regression, else cross entropy.
  at::Tensor loss_of(const at::Tensor& logits, const at::Tensor& targets) const;
  // The batch's inputs in the parameters' dtype.
  at::Tensor model_inputs(const data::Batch& batch) const;

  // strategy=pipeline (pipeline_stage.h): cuts the model, keeps this stage's parameters, and
  // says how the model was cut. Called by setup before the optimizer is made.
  void setup_pipeline();
  // Every process of the pipeline job agrees whether any was asked to stop (SIGINT/SIGTERM) or
  // ran out of trainer.max_time: {stop, out_of_time}. One small all-reduce.
  std::pair<bool, bool> pipeline_flags();
  // The end of fit: rank 0 logs every stage's measured idle share against the theory, and what
  // each stage holds (parameters, gradients, optimizer state) and its peak resident memory.
  void report_pipeline_idle();
  // The tensors a checkpoint load leaves alone: a pipeline stage's released ones; null without one.
  SkipTensor released_tensors() const;
  // The end of fit, one process or data parallel: rank 0 logs what it holds and its peak memory.
  void report_model_state();
  // A pipeline's checkpoint: stage 0 gathers every stage's weights and writes the whole model
  // (what validate, test, predict and export read) with its own optimizer and loop state; each
  // other stage writes its part beside it, <file>.stage<s>-step<N>, with its optimizer and RNG
  // state. Parts go first, then the main file, then parts of earlier steps: a kill at any instant
  // leaves a main file whose parts are on disk.
  void save_pipeline(LoopState& state, const std::vector<std::string>& paths, const std::vector<std::string>& dropped);
  // The part of `main_path` this stage resumes from (its own file for stage 0).
  std::string pipeline_resume_path(const std::string& main_path) const;

  // Batches one validation (or test) pass runs on rank 0, the rank with the most samples: the
  // same number on every rank. Zero means no validation at all (limit_val_batches=0, an empty
  // split), as in Lightning.
  int64_t evaluation_batches(const data::Dataset& dataset, const BatchLimit& limit) const;

  // Says once, before fit, what a run without validation gives up.
  void warn_no_validation() const;

  // `reading`'s loss and metrics appended to a row as <prefix><name><suffix> and to a log line as
  // " <prefix><name> <value>".
  void add_metrics(const DeviceMeter::Reading& reading, const std::string& prefix, const std::string& suffix,
                   MetricRow& row, std::string& line) const;

  // A meter for this task's metrics, zeroed on the device.
  DeviceMeter new_meter() const;

  // Runs an evaluation loop over up to `limit` batches; returns its loss and metrics.
  // `left_out`, when given, counts the samples left out of the batches it took (on_bad_sample=skip).
  // `stop_check`, when given, is asked before every batch once SIGINT/SIGTERM came, with the batches
  // done and the limit, and throws the error that ends the pass (fit's own validations run to their
  // end: the step after them takes the stop and saves).
  using StopCheck = std::function<void(int64_t done, int64_t limit)>;
  DeviceMeter::Reading evaluate(const std::shared_ptr<const data::Dataset>& dataset, const BatchLimit& limit_option,
                                int64_t hard_limit = -1, int64_t* left_out = nullptr,
                                const StopCheck* stop_check = nullptr);

  void restore_precision_state(const LoopState& state);

  std::string checkpoint_dir() const { return options.checkpoint.dirpath; }
  std::string last_path() const { return checkpoint_dir() + "/last.ckpt"; }

  std::string resolve_ckpt_path(const std::string& wanted) const;

  // Top-k bookkeeping for a new score (checkpoint_policy.h): the file this epoch's checkpoint goes
  // to (empty if it does not make the top k); files that fell out of the top k go to `dropped`.
  std::string update_top_k(LoopState& state, double score, int64_t epoch, std::vector<std::string>& dropped);

  // Takes the snapshot here (callback states, loggers flushed, model + optimizer + loop state
  // serialised) and hands the bytes to the background writer, which writes every path from them.
  void save(LoopState& state, std::vector<std::string> paths, std::vector<std::string> dropped = {});
  // The snapshot of this process's model, optimizer and loop, to every path (rank 0).
  void save_whole(LoopState& state, std::vector<std::string> paths, std::vector<std::string> dropped);

  // Mid-epoch checkpoints (every_n_train_steps, a signal, a validation) first read the epoch's
  // metric sums (one small host read, an all-reduce under data parallel: every rank calls it),
  // refuse to save if a loss of this epoch was non-finite, and keep the sums and those of the last
  // logged line (`logged`) in `state`, so a resumed run goes on from them.
  void keep_epoch_sums(const DeviceMeter& epoch_meter, const DeviceMeter::Reading& logged, LoopState& state) const;

  // data.on_bad_sample=skip: the samples left out this epoch, over every rank (an all-reduce when
  // several read data: every rank calls it at the same points). Counted from the training
  // batches the loop took (`skipped_training`: a loader's workers read ahead of the loop, and a
  // resume reads those batches again) and from the validation set's count over whole validations
  // (`skipped_validation`), plus what the checkpoint it resumed from had counted in the epoch
  // (`skipped_resumed`, held by rank 0 alone).
  int64_t skipped_in_epoch() const;
  int64_t skipped_training = 0;
  int64_t skipped_validation = 0;
  int64_t skipped_resumed = 0;

  void save_last(LoopState& state) { save(state, {last_path()}); }

  // Every rank's CPU generator state into `state` under several processes, and on CUDA every
  // rank's CUDA generator state (an all-reduce of one row per rank; every rank calls it, at every
  // save); and back to this rank's own after a resume when the checkpoint has one per rank of
  // this job.
  void gather_rng_states(LoopState& state) const;
  void restore_own_rng_state(const LoopState& state) const;

  // model_checkpoint.every_n_train_steps: last.ckpt, and a top-k file when the monitored metric has
  // a value: a val/* metric's from the latest validation, a train/* metric's as this epoch's running
  // mean (one host read, only at these checkpoints), as Lightning's ModelCheckpoint uses the latest
  // logged value.
  void save_at_step(LoopState& state, const DeviceMeter& epoch_meter, int64_t epoch);

  // A callback asked to stop (early stopping): honoured once `epochs_done` reaches min_epochs,
  // else held back (said once) and honoured at the end of epoch min_epochs - 1, as Lightning's
  // should_stop stays set. Returns whether fit stops.
  bool take_stop_request(Context& context, int64_t epochs_done) const;

  // Lightning's val_check_batch: validation runs after every this many training batches of an
  // epoch (a float val_check_interval is a share of the epoch, an int a number of batches).
  int64_t resolve_val_check_batch(int64_t train_batches) const;

  // A validation inside the epoch (val_check_interval below one epoch): logs val/*, hands the
  // metrics to the callbacks, and writes the top-k checkpoint and last.ckpt (resumable from the next
  // batch), as Lightning's ModelCheckpoint does after every validation.
  void validate_mid_epoch(LoopState& state, Context& context, const DeviceMeter& epoch_meter,
                          const DeviceMeter::Reading& logged, int64_t batch, int64_t train_batches);

  // ---- Batch-size search (docs/tuning.md) ----

  // A few real training steps (forward, backward, optimizer) on batches of `batch_size` from the
  // training set, in the configured precision on the configured device.
  void run_trial_steps(int64_t batch_size);

  // Lightning's scale_batch_size (batch_size_trials.h): sets data.batch_size to the batch found.
  int64_t scale_batch_size(ScaleMode mode);

  // trainer.auto_scale_batch_size with fit: the search first (skipped under fast_dev_run, as in
  // Lightning; a resumed run keeps the batch its first search found, since the checkpoint's loop
  // position counts batches of that size).
  void auto_scale_before_fit();

  int fit();

  // The test after fit (`after_fit`) or the validate/test command's pass; both stop at a signal.
  void run_test(const std::string& split, bool after_fit);

  int evaluate_command(const std::string& split);
  // An image folder whose classes are not those the checkpoint (ckpt_path) was trained on is an
  // error: its labels would silently mean other classes.
  void check_classes_match_checkpoint() const;
  // A table's checkpoint (data=csv) evaluated or resumed on other data, or the other way round.
  void check_data_kind_matches_checkpoint() const;
  // The summary of the checkpoint ckpt_path names, read torch-free; empty when there is none (no
  // ckpt_path, or ckpt_path=last before the first save). Read from disk once per setup() and kept.
  const formats::CheckpointSummary& checkpoint_summary() const;
  mutable std::optional<formats::CheckpointSummary> checkpoint_summary_read;
  // trainer predict (predict_command.cpp): the checkpoint's predictions for predict_set, written
  // to <run dir>/predictions.csv.
  int predict_command();
  // predict for a regression: the predicted values in the target's units.
  // `batches`: trainer.limit_predict_batches resolved (at least 1).
  int predict_values(int64_t batches);
  // The model's outputs for a batch to predict (no loss), in the checkpoint's precision.
  at::Tensor predict_forward(const data::Batch& batch);
  // validate/test/predict: the model's weights from ckpt_path (model only), or a warning that
  // there is none and the model is "<doing> the freshly initialised model".
  void load_model_to_evaluate(const std::string& doing);
};

}  // namespace trainer::engine
