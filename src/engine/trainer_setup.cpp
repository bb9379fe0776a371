// A job's set-up before the loop: device, precision (probed), data, model, optimizer, loggers and
// callbacks, data parallel, FLOP counting, and the batch-size search that may precede fit.
#include <optional>

#include <torch/cuda.h>

#include "trainer/config/yaml.h"
#include "trainer/data/csv_dataset.h"
#include "trainer/data/image_folder_dataset.h"
#include "trainer/engine/callbacks/model_summary.h"
#include "trainer/engine/distributed/batch_norm_sync.h"
#include "trainer/engine/optim/optimizer_factory.h"
#include "trainer/engine/out_of_memory_report.h"
#include "trainer/engine/posix_files.h"
#include "trainer/engine/precision/cast_floating_tensors.h"
#include "trainer/engine/profiling/throughput_setup.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/engine/torch_compat.h"
#include "trainer/engine/tuner/batch_size_trials.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/options/task_metrics.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/secondary_rank.h"

#include "trainer_impl.h"

namespace trainer::engine {

void Trainer::Impl::setup() {
  checkpoint_summary_read.reset();
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
  if (device.is_cuda()) {
    at::globalContext().setBenchmarkCuDNN(options.cudnn_benchmark);
  } else if (options.cudnn_benchmark && !is_secondary_rank()) {
    log::warning(
        "trainer.benchmark=true times cuDNN's convolution algorithms on a GPU; this run is on the CPU, so "
        "it changes nothing");
  }

  data_options = data::DataOptions::from_config(view.sub("data"), options.seed);
  data_options.targets_optional = predict_only;
  check_data_kind_matches_checkpoint();
  // A checkpoint's encoding of table rows (columns, categories, statistics) is used as it is: the
  // model was trained on rows encoded so, whatever the table holds now.
  if (data_options.name == "csv") {
    data_options.encoding = checkpoint_summary().data_encoding;
    // A checkpoint of tar shards keeps its shard list there, not a table's encoding.
    if (data_options.encoding.find("\"webdataset_shards\"") != std::string::npos) data_options.encoding.clear();
  }
  // A resumed fit on data=webdataset checks that its training shards are the checkpoint's.
  if (data_options.name == "webdataset" && command == "fit") {
    data_options.encoding = checkpoint_summary().data_encoding;
  }
  // validate, test and predict on data=webdataset read the evaluated split's shards alone: the
  // checkpoint says what the model takes, so the training shards may have moved or gone.
  if (data_options.name == "webdataset" && (command == "validate" || command == "test" || predict_only)) {
    const formats::CheckpointSummary& trained = checkpoint_summary();
    if (!trained.sample_shape.empty() && trained.num_classes > 0) {
      data_options.trained_sample_shape = trained.sample_shape;
      data_options.trained_num_classes = trained.num_classes;
      data_options.evaluated_split = command == "validate" ? "val" : "test";
    }
  }
  // test and predict on data=tensors read the test files alone when the checkpoint says what the
  // model was trained on (the inputs' dtype is in its data encoding): the training files, named
  // relative to the training run's directory, need not be there.
  if (data_options.name == "tensors" && (command == "test" || predict_only)) {
    const formats::CheckpointSummary& trained = checkpoint_summary();
    if (!trained.sample_shape.empty() && trained.num_classes > 0 && !trained.data_encoding.empty()) {
      data_options.trained_sample_shape = trained.sample_shape;
      data_options.trained_num_classes = trained.num_classes;
      data_options.evaluated_split = "test";
      data_options.encoding = trained.data_encoding;
    }
  }
  // validate and a resumed fit on data=tensors compare the training files with the checkpoint's.
  if (data_options.name == "tensors" && data_options.encoding.empty() && !predict_only && command != "test") {
    data_options.encoding = checkpoint_summary().data_encoding;
  }
  // test on data=csv reads data.test_path alone: the checkpoint's encoding says how rows become inputs.
  if (data_options.name == "csv" && command == "test" && !data_options.encoding.empty()) {
    data_options.evaluated_split = "test";
  }
  if (predict_only && data_options.name == "csv") {
    if (data_options.encoding.empty()) {
      throw Error("ckpt_path", "predict with data=csv needs a checkpoint written by a fit on data=csv",
                  "Give ckpt_path=best|last (with hydra.run.dir=<the training run>) or the path of such a "
                  "checkpoint.");
    }
    predict_set = data::load_csv_to_predict(data_options);
    auto empty = std::make_shared<const data::TensorDataset>();
    train_set = predict_set;
    val_set = empty;
    test_set = empty;
  } else if (predict_only && data_options.name == "image_folder") {
    // The images of data.root, named by the checkpoint's classes (its summary, read torch-free).
    formats::CheckpointSummary trained;
    if (options.ckpt_path) trained = formats::read_checkpoint_summary(resolve_ckpt_path(*options.ckpt_path)).summary;
    if (trained.class_names.empty()) {
      throw Error("ckpt_path", "predict with data=image_folder needs a checkpoint that names its classes",
                  "Give ckpt_path=best|last (with hydra.run.dir=<the training run>) or the path of a checkpoint "
                  "written by a fit on data=image_folder.");
    }
    // Trained on the images' own size (data.image_size null): new images are brought to that size
    // (shorter side resized, centre cropped), as data.image_size=<it> would.
    const std::vector<int64_t>& shape = trained.sample_shape;
    if (data_options.image_size == 0 && shape.size() == 3 && shape[1] == shape[2]) {
      data_options.image_size = static_cast<int>(shape[1]);
      log::info("predict: images are brought to " + std::to_string(shape[1]) + " x " + std::to_string(shape[2]) +
                ", the size the checkpoint was trained on");
    }
    predict_set = data::load_images_to_predict(data_options, trained.class_names);
    if (shape.size() == 3 && predict_set->sample_shape() != shape) {
      const auto text = [](const std::vector<int64_t>& s) {
        std::string out;
        for (const int64_t size : s) out += (out.empty() ? "" : " x ") + std::to_string(size);
        return out;
      };
      throw Error("data.root",
                  "the images to predict are " + text(predict_set->sample_shape()) +
                      " (channels x height x width), but the checkpoint was trained on " + text(shape),
                  shape[1] == shape[2]
                      ? "Set data.image_size=" + std::to_string(shape[1]) + " (the model's input size)" +
                            (predict_set->sample_shape()[0] != shape[0]
                                 ? ", and data.channels=" + std::to_string(shape[0]) + "."
                                 : std::string("."))
                      : "Give data.transforms.eval=[{resize: [" + std::to_string(shape[1]) + ", " +
                            std::to_string(shape[2]) +
                            "]}] (the model's input size; data.image_size is a square's "
                            "side)" +
                            (predict_set->sample_shape()[0] != shape[0]
                                 ? ", and data.channels=" + std::to_string(shape[0]) + "."
                                 : std::string(".")));
    }
    // The model is built for the checkpoint's classes and the images' size.
    auto empty = std::make_shared<const data::TensorDataset>();
    train_set = predict_set;
    val_set = empty;
    test_set = empty;
  } else {
    data::DataSplits splits = data::load_datasets(data_options);
    train_set = std::move(splits.train);
    val_set = std::move(splits.val);
    test_set = std::move(splits.test);
    predict_set = test_set;
  }
  const int workers = data::resolve_num_workers(data_options.num_workers, device, train_set->reads_files());
  log::info("data: " +
            (predict_only ? std::to_string(predict_set->size()) + " samples to predict"
             // The evaluated split read alone (the checkpoint says what the model takes).
             : data_options.evaluated_split == "test" ? std::to_string(test_set->size()) + " test samples"
             : data_options.evaluated_split == "val"
                 ? std::to_string(val_set->size()) + " validation samples"
                 : std::to_string(train_set->size()) + " train / " + std::to_string(val_set->size()) + " val / " +
                       std::to_string(test_set->size()) + " test samples") +
            ", batch " + std::to_string(data_options.batch_size) + "; loader: " +
            (workers == 0 ? std::string("batches made on the training thread")
                          : std::to_string(workers) + " worker thread(s)") +
            (!data_options.pin_memory ? ""
             : device.is_cuda()       ? ", pinned memory, non-blocking copies"
                                : " (data.pin_memory pins batches for copies to a GPU: nothing to do on the CPU)"));

  models::InputSpec spec;
  spec.sample_shape = train_set->sample_shape();
  class_names = train_set->class_names();
  regression = train_set->regression();
  fit_monitors_to_task();
  spec.num_classes = !class_names.empty()           ? static_cast<int64_t>(class_names.size())
                     : train_set->num_classes() > 0 ? train_set->num_classes()
                                                    : data_options.num_classes;
  if (regression) {
    spec.num_classes = 1;
    spec.num_classes_key = "data.task=regression (one output)";
  } else if (class_names.empty() && train_set->num_classes() > 0 && data_options.num_classes == 0) {
    spec.num_classes_key = data_options.name == "csv" ? "the labels of data.target's column (the largest + 1)"
                                                      : "the targets of data.targets (the largest + 1)";
  }
  if (class_names.empty() && !regression && options.ckpt_path && is_main) {
    // Labels without names (tensors, a table's numeric column) for a model trained on named classes:
    // they are read as the checkpoint's class indices, which the log shows, so a user can tell.
    const std::vector<std::string>& trained = checkpoint_summary().class_names;
    if (!trained.empty()) {
      std::string mapping;
      for (size_t i = 0; i < trained.size() && i < 10; ++i) {
        mapping += (i == 0 ? "" : ", ") + std::to_string(i) + " = " + trained[i];
      }
      if (trained.size() > 10) mapping += ", ...";
      log::info(
          "data: its labels have no names; the checkpoint's model was trained on named classes, so label i "
          "is its class i: " +
          mapping);
    }
  }
  if (!class_names.empty()) {
    spec.num_classes_key = predict_only                          ? "the checkpoint's classes"
                           : data_options.name == "image_folder" ? "the class folders of data.root"
                           : data_options.name == "csv"          ? "the class names in data.target's column"
                                                                 : "data.num_classes";
    if (!predict_only) check_classes_match_checkpoint();
    // Kept with the training run, in label order, one per line (checkpoints carry them too); an
    // evaluation's run directory does not need them (and must stay removable when it fails).
    if (is_main && command == "fit") {
      std::string text;
      for (const std::string& name : class_names) text += formats::escape_line(name) + "\n";
      write_file_durably(run_dir + "/class_names.txt", text, "class names file");
    }
  }
  spec.channels_key = data_options.name == "image_folder" ? "data.channels" : "data=" + data_options.name;
  input_spec = spec;
  model = models::ModelRegistry::global().create(view.sub("model"), spec);
  // A TorchScript file holds the model's code: one edited since the checkpoint was written runs
  // other code with its weights (a test or predict would score another model without a word).
  if (const std::string now = model->source_fingerprint(); is_main && !now.empty() && options.ckpt_path) {
    const std::string& then = checkpoint_summary().model_file;
    if (!then.empty() && then != now) {
      log::warning("model.path " + view.get_or<std::string>("model.path", "?") +
                   ": the TorchScript file changed since the run that wrote the checkpoint (" + then + " then, " + now +
                   " now); its code decides the forward pass, so this runs the new code with the "
                   "checkpoint's weights. Point model.path at the file that run trained to use that model");
    }
  }
  if (param_dtype != at::kFloat) cast_floating_tensors(*model, param_dtype);  // integer buffers stay integers
  // A pipeline's process takes only its stage's pieces to the device (setup_pipeline): a model
  // larger than one device still starts.
  const bool pipelined = group && pipeline_strategy(view);
  if (!pipelined) model->to(device);
  parameters = models::unique_parameters(*model);                        // a tied weight once, as Python lists it
  if (!group || group->is_main()) summary_text = model_summary(*model);  // before any weights are freed
  if (pipelined) setup_pipeline();                                       // parameters: the stage's
  optimizer = make_optimizer(options.optimizer, parameters, device);
  if (command == "fit" || command == "tune_batch_size") {  // an evaluation takes no optimizer step
    log::info(std::string("optimizer ") + optimizer_name(options.optimizer.kind) + ": " +
              optimizer_step_text(engine::optimizer_step(options.optimizer, device, param_dtype), options.optimizer,
                                  device, param_dtype));
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
  // predict writes predictions.csv and no metrics: no metrics.csv or TensorBoard files.
  if (options.enable_loggers && is_main && !predict_only)
    loggers = make_loggers(view, options.default_root_dir.value_or(run_dir));
  if (options.enable_callbacks) callbacks = make_callbacks(view);
}

void Trainer::Impl::fit_monitors_to_task() {
  const auto check = [&](const std::string& key, std::string& monitor, bool& mode_max) {
    if (!regression && options::is_regression_metric(monitor)) {
      throw Error(key, "is " + monitor + ", which only a regression logs (data.task=regression)",
                  "Watch val/acc or val/loss (or set data.task=regression for a table's numeric target).");
    }
    const std::string loss = regression ? options::regression_monitor_for(monitor) : std::string();
    if (loss.empty()) return false;
    if (command == "fit") {  // what a training run watches; an evaluation watches nothing
      log::info(key + ": data.task=regression logs no " + monitor + "; watching " + loss +
                " (mode min) instead (to choose, set it to val/rmse or val/mae with mode=min, or val/r2 with "
                "mode=max)");
    }
    monitor = loss;
    mode_max = false;
    return true;
  };
  if (options.checkpoint.enabled) {
    check("callbacks.model_checkpoint.monitor", options.checkpoint.monitor, options.checkpoint.mode_max);
  }
  if (!options.enable_callbacks) return;
  config::Node* callbacks = config.find("callbacks");
  config::Node* stopping = callbacks != nullptr ? callbacks->find("early_stopping") : nullptr;
  if (stopping == nullptr || !stopping->is_map()) return;
  const config::Node* monitor = stopping->find("monitor");
  if (monitor == nullptr || !monitor->is_string()) return;
  std::string name = monitor->as_string();
  bool mode_max = true;
  if (check("callbacks.early_stopping.monitor", name, mode_max)) {
    stopping->set("monitor", config::Node::string(name));
    stopping->set("mode", config::Node::string("min"));
  }
}

const formats::CheckpointSummary& Trainer::Impl::checkpoint_summary() const {
  if (checkpoint_summary_read) return *checkpoint_summary_read;
  checkpoint_summary_read.emplace();
  if (!options.ckpt_path) return *checkpoint_summary_read;
  std::string path;
  try {
    path = resolve_ckpt_path(*options.ckpt_path);
  } catch (const Error&) {
    return *checkpoint_summary_read;  // no checkpoint yet (ckpt_path=last before the first save)
  }
  if (posix::exists(path)) checkpoint_summary_read = formats::read_checkpoint_summary(path).summary;
  return *checkpoint_summary_read;
}

void Trainer::Impl::check_classes_match_checkpoint() const {
  // No checkpoint yet (ckpt_path=last before the first save): nothing to compare.
  const std::vector<std::string>& trained = checkpoint_summary().class_names;
  if (trained.empty() || trained == class_names) return;
  const std::string path = resolve_ckpt_path(*options.ckpt_path);
  auto listed = [](const std::vector<std::string>& names) {
    std::string text;
    for (size_t i = 0; i < names.size() && i < 12; ++i) text += (i == 0 ? "" : ", ") + names[i];
    return text + (names.size() > 12 ? ", ... (" + std::to_string(names.size()) + ")" : std::string());
  };
  throw Error("data.root",
              "the checkpoint " + path + " was trained on the classes [" + listed(trained) + "], but " +
                  data_options.root + " now holds [" + listed(class_names) + "]: its labels would mean other classes",
              "Point data.root at the folder the checkpoint was trained on (its class folders unchanged), or train "
              "a new model on this one.");
}

// A model trained on a table (data=csv) takes rows encoded with its checkpoint's column statistics
// and categories, and its labels are the classes of the table's target column (sorted): tensors,
// shards or images given to it instead gave numbers without meaning, without a word; and a
// checkpoint of other data has no encoding to turn a table's rows into its inputs.
void Trainer::Impl::check_data_kind_matches_checkpoint() const {
  if (!options.ckpt_path) return;
  const std::string& encoding = checkpoint_summary().data_encoding;
  const std::string trained = encoding.find("\"trainer.csv\"") != std::string::npos           ? "csv"
                              : encoding.find("\"webdataset_shards\"") != std::string::npos   ? "webdataset"
                              : encoding.find("\"tensor_inputs_dtype\"") != std::string::npos ? "tensors"
                                                                                              : "";
  if (trained.empty() || (trained == "csv") == (data_options.name == "csv")) return;
  const std::string path = resolve_ckpt_path(*options.ckpt_path);
  if (trained == "csv") {
    throw Error("data.name",
                "the checkpoint " + path +
                    " was trained on data=csv: its model takes table rows encoded with the checkpoint's column "
                    "statistics and categories, and its labels are the classes of the table's target column; data=" +
                    data_options.name + " gives it neither, so its numbers would mean nothing; nothing was run",
                "Give it a table with the same columns: data=csv data.test_path=<table> (or data.path for "
                "validate), or train a model on data=" +
                    data_options.name + ".");
  }
  throw Error("data.name",
              "the checkpoint " + path + " was trained on data=" + trained +
                  ", not on a table: it holds no encoding (column statistics, categories, classes) to turn data=csv's "
                  "rows into its inputs; nothing was run",
              "Evaluate it on data=" + trained + " (the data its run was trained on), or train a model on data=csv.");
}

void Trainer::Impl::configure_precision() {
  if (falls_back_to_bf16(options, device, is_main)) {
    options.precision = Precision::kBf16Mixed;
    if (!options.grad_scaler.enabled) options.grad_scaler_enabled = false;
    record_in_config("precision", "bf16-mixed");
    record_in_config("trainer.precision", "bf16-mixed");
  }
  warn_about_idle_grad_scaler(options, is_main);
  const PrecisionDtypes dtypes = precision_dtypes(options, device, is_main);
  param_dtype = dtypes.param;
  autocast = dtypes.autocast;
  autocast_dtype = dtypes.autocast_dtype;
}

void Trainer::Impl::record_in_config(const std::string& path, const std::string& value) {
  config::Node* node = config::select(config, path);
  if (node == nullptr) return;
  *node = config::Node::string(value);
  config_yaml = config::to_yaml(config);
}

data::Batch Trainer::Impl::zero_batch(const models::InputSpec& spec, int64_t samples) const {
  std::vector<int64_t> shape{samples};
  shape.insert(shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
  return {at::zeros(shape, at::TensorOptions().dtype(at::kFloat).device(device)),
          at::zeros({samples}, at::TensorOptions().dtype(regression ? at::kFloat : at::kLong).device(device))};
}

void Trainer::Impl::probe_precision(const models::InputSpec& spec, const std::string& model_name) {
  if (options.precision == Precision::k32True || options.precision == Precision::k64True) return;
  const data::Batch probe = zero_batch(spec, 2);
  // A pipeline moves its pieces between devices as it probes: its stages keep their own buffers.
  std::optional<models::BufferSnapshot> buffers_kept;
  if (!pipeline) buffers_kept.emplace(*model);
  const bool was_training = model->is_training();
  model->eval();
  std::string failure;
  try {
    if (pipeline) {  // piece by piece: the device holds its stage and one other piece at a time
      pipeline->probe_step(model_inputs(probe),
                           [&](const at::Tensor& outputs) { return loss_of(outputs, probe.targets); });
    } else {
      at::Tensor logits;
      forward_loss(probe, logits).backward();
    }
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

void Trainer::Impl::setup_throughput() {
  const data::Batch probe = zero_batch(input_spec, 1);
  std::optional<models::BufferSnapshot> buffers_kept;
  if (!pipeline) buffers_kept.emplace(*model);
  const ForwardFlops forward = count_forward_flops(*model, [&] {
    if (pipeline) {
      pipeline->forward_whole(model_inputs(probe));
      return;
    }
    at::Tensor logits;
    forward_loss(probe, logits);
  });
  // Devices, for the MFU's peak: a pipeline's world_size counts pipelines.
  throughput =
      make_flops_throughput(forward, device, options.precision, group ? group->world_size() : world_size, is_main);
}

c10::DeviceIndex Trainer::Impl::local_cuda_index() const {
  return static_cast<c10::DeviceIndex>(group ? group->local_rank() % std::max<int64_t>(1, torch::cuda::device_count())
                                             : 0);
}

void Trainer::Impl::setup_distributed() {
  is_main = group->is_main();
  world_size = group->world_size();
  data_rank = group->rank();
  if (!is_main) options.enable_progress_bar = false;
  options.checkpoint.dirpath = group->share_string("checkpoint_dir", options.checkpoint.dirpath);
  if (pipeline) {
    world_size = group->world_size() / pipeline->stages();  // pipelines, each reading its share
    data_rank = group->rank() / pipeline->stages();
    // Training is where the memory matters; validate and test run through the stages too, and
    // load only the stages' own tensors either way.
    if (command == "fit") {
      setup_throughput();  // counts the whole model's FLOPs by running it
      pipeline->release_others();
    }
    // Every stage skips the steps where any stage's gradients were not finite.
    if (scaler)
      scaler->share_found_inf([this](at::Tensor& found) { group->allreduce_sum(found, "pipeline inf check"); });
    if (world_size > 1) {
      std::vector<int> ranks;
      ranks.reserve(static_cast<size_t>(world_size));
      for (int r = 0; r < world_size; ++r) ranks.push_back(r * pipeline->stages() + pipeline->stage());
      stage_replicas = group->subgroup("pipeline-stage-" + std::to_string(pipeline->stage()), ranks);
      // The replicas of a stage start from its first pipeline's weights (each process holds only
      // its own stage's on the device; one pipeline's stages need no agreement).
      broadcast_module_state(*stage_replicas, parameters, pipeline->buffers());
      reducer = std::make_unique<GradReducer>(*stage_replicas, parameters, bucket_cap_mb, [] {
        return GradReducer::LocalFlags{};  // stopping is agreed over the whole job (pipeline_flags)
      });
      log::info("pipeline: " + std::to_string(world_size) + " data-parallel replicas of " +
                std::to_string(pipeline->stages()) + " stages; each stage's gradients averaged over its " +
                std::to_string(world_size) + " replicas in " + std::to_string(reducer->bucket_count()) + " bucket(s)");
    }
    if (options.sync_batchnorm) {
      log::info("sync_batchnorm: one pipeline, nothing to synchronise: batch norm is plain batch norm");
    }
    return;
  }
  broadcast_module_state(*group, parameters, model->buffers());
  reducer = std::make_unique<GradReducer>(*group, parameters, bucket_cap_mb, [this] {
    return GradReducer::LocalFlags{stop_signal_received() != 0, out_of_time()};
  });
  log::info("data parallel: " + std::to_string(world_size) + " ranks, " + std::to_string(reducer->bucket_count()) +
            " gradient bucket(s) of up to " + fixed(bucket_cap_mb, 1) + " MB");
  if (options.sync_batchnorm) synchronise_batch_norms();
}

void Trainer::Impl::synchronise_batch_norms() {
  synchronise_batch_norms_over(*model, config::ConfigView(config).get_or<std::string>("model.name", "?"), *group);
}

void Trainer::Impl::throw_out_of_memory(const std::string& command, const std::string& cause) const {
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

void Trainer::Impl::report_profile(double fit_seconds) const {
  std::string text = "profiler (simple): time per phase of fit, host wall clock\n" + profiler.table(fit_seconds);
  if (reducer) text += reducer->describe_timing() + "\n";
  log::info(text);
  write_file_durably(run_dir + "/fit-profiler.txt", text, "profiler table");
}

data::BatchLoader Trainer::Impl::make_loader(const std::shared_ptr<const data::Dataset>& dataset, bool train,
                                             int64_t batch_size) const {
  data::LoaderOptions lo;
  lo.batch_size = batch_size > 0 ? batch_size : data_options.batch_size;
  lo.num_workers = data_options.num_workers;
  lo.pin_memory = data_options.pin_memory && device.is_cuda();
  lo.device = device;
  lo.mean = data_options.mean;
  lo.std = data_options.std;
  lo.crop_padding = train ? data_options.random_crop_padding : 0;
  lo.flip = train && data_options.horizontal_flip;
  // Every stage of a pipeline reads the same batches (the first uses the inputs, the last the targets).
  const int rank = group ? data_rank : 0;
  lo.seed = group ? data::mix_seed(options.seed, static_cast<uint64_t>(rank)) : options.seed;
  // Training pads every rank to the same number of steps (DistributedSampler); evaluation reads
  // each sample exactly once over the ranks, so its metrics match one process's.
  // A stream (data=webdataset) deals its samples to the ranks itself and reads its share in its
  // own order: the loader takes its positions in turn.
  if (std::shared_ptr<const data::Dataset> share = dataset->rank_share(rank, world_size, train)) {
    return data::BatchLoader(share, data::EpochSampler(share->size(), /*shuffle=*/false, options.seed), lo);
  }
  data::EpochSampler sampler =
      train ? data::EpochSampler(dataset->size(), options.shuffle_train, options.seed, rank, world_size)
            : data::EpochSampler::uneven(dataset->size(), rank, world_size);
  return data::BatchLoader(dataset, sampler, lo);
}

void Trainer::Impl::warn_no_validation() const {
  if (!is_main) return;
  std::string why = val_set->size() == 0
                        ? (data_options.name == "webdataset" ? "the validation split is empty (data.val_shards is null)"
                                                             : "the validation split is empty (data.val_fraction)")
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

void Trainer::Impl::run_trial_steps(int64_t batch_size) {
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

int64_t Trainer::Impl::scale_batch_size(ScaleMode mode) {
  if (group) {
    throw Error("batch size search",
                "cannot run in a data-parallel job (" + std::to_string(group->world_size()) + " ranks)",
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

void Trainer::Impl::auto_scale_before_fit() {
  if (!tuner.auto_scale) return;
  if (options.fast_dev_run > 0) {
    log::warning("trainer.auto_scale_batch_size: skipped under fast_dev_run (as Lightning does)");
    return;
  }
  const std::string earlier = run_dir + "/tune_batch_size.yaml";
  if (options.ckpt_path && posix::exists(earlier)) {
    const config::YamlDocument document = config::load_yaml_file(earlier);
    data_options.batch_size = config::ConfigView(document.root).get<int64_t>("batch_size");
    record_batch_size_found(data_options.batch_size);
    log::info("resuming: batch size " + std::to_string(data_options.batch_size) + " from the earlier search (" +
              earlier + ")");
    return;
  }
  const int64_t found = scale_batch_size(*tuner.auto_scale);
  log::info("fit runs with the batch size found: data.batch_size=" + std::to_string(found));
}

}  // namespace trainer::engine
