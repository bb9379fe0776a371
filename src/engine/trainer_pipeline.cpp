// trainer.strategy=pipeline in the trainer: cutting the model at setup, the processes' agreement
// on stopping, and the measured idle shares at the end of fit. The schedule itself runs in
// PipelineStage (distributed/pipeline_stage.h).
#include <dirent.h>

#include <ATen/ATen.h>

#include "trainer/engine/optim/model_state_bytes.h"
#include "trainer/engine/posix_files.h"
#include "trainer/engine/profiling/memory_stats.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

#include "trainer_impl.h"

namespace trainer::engine {

void Trainer::Impl::setup_pipeline() {
  const config::ConfigView view(config);
  const int processes = group->world_size();
  const PipelineOptions pipeline_options = PipelineOptions::from_config(view, processes);
  const int stage = group->rank() % pipeline_options.stages;
  const int first_rank = group->rank() - stage;
  PipelineStage::Precision precision{device.type(), autocast_dtype, autocast};
  pipeline = std::make_unique<PipelineStage>(*model, view.get_or<std::string>("model.name", "?"), pipeline_options,
                                             *group, stage, first_rank, precision, device);
  at::Tensor one_sample = zero_batch(input_spec, 1).inputs;
  if (param_dtype != at::kFloat) one_sample = one_sample.to(param_dtype);
  std::string measured;
  if (pipeline_options.balance_time && pipeline_options.split_points.empty()) {
    const int64_t micro = std::max<int64_t>(1, data_options.batch_size / pipeline_options.microbatches);
    // Fixed inputs, not random ones: the measurement must not move the random generator.
    at::Tensor inputs = zero_batch(input_spec, micro).inputs;
    if (param_dtype != at::kFloat) inputs = inputs.to(param_dtype);
    inputs = at::arange(inputs.numel(), inputs.options()).sin().reshape(inputs.sizes());
    measured = pipeline->balance_by_time(inputs);
  }
  pipeline->place();
  pipeline->probe_shapes(one_sample);
  if (!device.is_cpu() && pipeline_options.transport == PipelineOptions::Transport::kSharedMemory) {
    throw Error("trainer.pipeline.transport=shared_memory",
                std::string("the stages run on ") + c10::DeviceTypeName(device.type(), true) +
                    " devices, whose activations shared memory on the host cannot carry",
                "Use transport=auto (or process_group): stages on CUDA talk through NCCL.");
  }
  std::string transport = "through the " + group->backend_name() + " process group";
  if (device.is_cpu() && pipeline_options.transport != PipelineOptions::Transport::kProcessGroup) {
    const int64_t largest =
        (data_options.batch_size + pipeline_options.microbatches - 1) / pipeline_options.microbatches;
    transport = pipeline->connect_links(std::max<int64_t>(1, largest));
  }
  parameters = pipeline->parameters();
  std::string stages;
  for (int s = 0; s < pipeline_options.stages; ++s) stages += "\n  " + pipeline->describe(s);
  log::info("pipeline: " + std::to_string(pipeline_options.stages) + " stages, " +
            pipeline_schedule_name(pipeline_options.schedule) + " schedule, " +
            std::to_string(pipeline_options.microbatches) + " micro-batches of " +
            std::to_string(data_options.batch_size / pipeline_options.microbatches) +
            (data_options.batch_size / pipeline_options.microbatches == 1 ? " sample" : " samples") + " per batch" +
            (!pipeline_options.split_points.empty() ? ""
             : measured.empty()                     ? " (stages balanced by parameter count)"
                                                    : " (stages balanced by forward + backward time, measured on one "
                                                      "micro-batch: " +
                                      measured + ")") +
            stages + "\n  this process: stage " + std::to_string(stage) + "'s pieces on " + device.str() +
            ", the other stages' on the host until released" + "\n  activations and gradients: " + transport);
}

std::pair<bool, bool> Trainer::Impl::pipeline_flags() {
  at::Tensor flags = at::tensor({stop_signal_received() != 0 ? 1.0 : 0.0, out_of_time() ? 1.0 : 0.0},
                                at::TensorOptions().dtype(at::kDouble));
  if (device.is_cuda()) flags = flags.to(device);
  group->allreduce_sum(flags, "pipeline stop check");
  flags = flags.cpu();
  return {flags[0].item<double>() > 0, flags[1].item<double>() > 0};
}

void Trainer::Impl::report_pipeline_idle() {
  const int stages = pipeline->stages();
  // Per stage of the first pipeline: its forward and backward seconds, its schedules' wall
  // seconds, the bytes of its parameters, gradients and optimizer state, and its peak resident
  // memory in MiB.
  enum Row { kForward, kBackward, kSchedule, kParameters, kGradients, kOptimizer, kPeak, kRows };
  at::Tensor times = at::zeros({kRows, stages}, at::TensorOptions().dtype(at::kDouble));
  if (data_rank == 0) {
    const ModelStateBytes held = model_state_bytes(model->parameters(), *optimizer);  // released: empty
    const int s = pipeline->stage();
    times[kForward][s] = pipeline->forward_seconds();
    times[kBackward][s] = pipeline->backward_seconds();
    times[kSchedule][s] = pipeline->schedule_seconds();
    times[kParameters][s] = static_cast<double>(held.parameters);
    times[kGradients][s] = static_cast<double>(held.gradients);
    times[kOptimizer][s] = static_cast<double>(held.optimizer);
    times[kPeak][s] = host_peak_rss_mb();
  }
  if (device.is_cuda()) times = times.to(device);
  group->allreduce_sum(times, "pipeline idle report");
  times = times.cpu();
  const int64_t batches = pipeline->batches_timed();
  if (!is_main) return;
  auto value = [&](Row row, int s) { return times[row][s].item<double>(); };
  int64_t whole = 0;
  for (int s = 0; s < stages; ++s) whole += pipeline->parameter_count(s);
  std::string held =
      "pipeline: what each stage holds (the whole model: " + models::with_thousands_separators(whole) + " parameters):";
  for (int s = 0; s < stages; ++s) {
    ModelStateBytes bytes;
    bytes.parameters = static_cast<int64_t>(value(kParameters, s));
    bytes.gradients = static_cast<int64_t>(value(kGradients, s));
    bytes.optimizer = static_cast<int64_t>(value(kOptimizer, s));
    held += "\n  stage " + std::to_string(s) + ": " + models::with_thousands_separators(pipeline->parameter_count(s)) +
            " parameters; " + describe(bytes) + "; peak resident memory " + fixed(value(kPeak, s), 1) + " MiB";
  }
  log::info(held);
  if (batches == 0) return;
  // Every stage starts a batch together (after the previous step's agreement); the batch's
  // schedule spans until the last stage finishes its part. A stage idles for the rest of it.
  double span = 0;
  for (int s = 0; s < stages; ++s) span = std::max(span, value(kSchedule, s));
  const int m = static_cast<int>(std::min<int64_t>(pipeline->options().microbatches, data_options.batch_size));
  // The idle the schedule itself implies for these stages' measured times (each forward and
  // backward at its stage's mean, communication free): what is measured beyond it is the cost of
  // moving activations and gradients, and of stage times that vary from one micro-batch to the next.
  std::vector<double> forward(static_cast<size_t>(stages)), backward(static_cast<size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    forward[static_cast<size_t>(s)] = value(kForward, s) / static_cast<double>(batches * m);
    backward[static_cast<size_t>(s)] = value(kBackward, s) / static_cast<double>(batches * m);
  }
  const PipelineSimulation alone = simulate_pipeline(pipeline->options().schedule, m, forward, backward);
  std::string implied;
  for (int s = 0; s < stages; ++s) {
    implied += (s == 0 ? "" : s + 1 == stages ? " and " : ", ") + fixed(100.0 * alone.idle_share(s), 1) + " %";
  }
  std::string text = "pipeline (" + std::string(pipeline_schedule_name(pipeline->options().schedule)) + ", " +
                     std::to_string(m) + " micro-batches, " + fixed(1000.0 * span / static_cast<double>(batches), 2) +
                     " ms a batch): share of each stage's schedule spent idle (equal stages would idle " +
                     fixed(100.0 * pipeline_bubble_theory(stages, m), 1) +
                     " %; these stages' forward and backward times would idle " + implied + "):";
  for (int s = 0; s < stages; ++s) {
    const double busy = value(kForward, s) + value(kBackward, s);
    const auto per_batch = [&](double seconds) { return fixed(1000.0 * seconds / static_cast<double>(batches), 2); };
    text += " stage " + std::to_string(s) + " " + fixed(span > 0 ? 100.0 * (1.0 - busy / span) : 0.0, 1) + " % (busy " +
            per_batch(busy) + " ms a batch: forward " + per_batch(value(kForward, s)) + ", backward " +
            per_batch(value(kBackward, s)) + ")";
    if (s + 1 < stages) text += ",";
  }
  log::info(text);
}

void Trainer::Impl::report_model_state() {
  if (!is_main) return;
  log::info("model state: " + describe(model_state_bytes(parameters, *optimizer)) + "; peak resident memory " +
            fixed(host_peak_rss_mb(), 1) + " MiB");
}

SkipTensor Trainer::Impl::released_tensors() const {
  if (!pipeline) return {};
  return [stage = pipeline.get()](const at::Tensor& tensor) { return stage->released(tensor); };
}

namespace {

// <file>.stage<s>-step<N>: not *.ckpt, so nothing takes a part for a checkpoint of its own.
std::string part_prefix(const std::string& main_path, int stage) {
  return main_path + ".stage" + std::to_string(stage) + "-step";
}

// Deletes this stage's parts of `main_path` but `keep` (every part when `keep` is empty).
void remove_parts(const std::string& main_path, int stage, const std::string& keep) {
  const std::string directory = posix::parent(main_path);
  const std::string prefix = part_prefix(main_path, stage).substr(directory.size() + 1);
  DIR* listing = ::opendir(directory.c_str());
  if (listing == nullptr) return;
  std::vector<std::string> doomed;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.rfind(prefix, 0) == 0 && directory + "/" + name != keep) doomed.push_back(directory + "/" + name);
  }
  ::closedir(listing);
  for (const std::string& path : doomed) posix::remove_file(path);
}

}  // namespace

void Trainer::Impl::save_pipeline(LoopState& state, const std::vector<std::string>& paths,
                                  const std::vector<std::string>& dropped) {
  PhaseProfiler::Scope timed(profiler, Phase::kCheckpoint);
  // Only the first pipeline's stages write: the replicas hold the same weights.
  const bool writes = data_rank == 0;
  if (writes) pipeline->gather_to_first();
  const int stage = pipeline->stage();
  const std::string step = std::to_string(state.global_step);
  if (writes && stage > 0) {
    std::vector<std::string> parts;
    parts.reserve(paths.size());
    for (const std::string& path : paths) parts.push_back(part_prefix(path, stage) + step);
    save_whole(state, std::move(parts), {});
    checkpoint_writer.wait();
  }
  group->barrier("pipeline checkpoint: every stage's part written");
  if (is_main) {
    save_whole(state, paths, dropped);
    checkpoint_writer.wait();
  }
  if (writes && stage == 0) pipeline->release_others();  // the gathered weights are written
  group->barrier("pipeline checkpoint: the main file written");
  if (writes && stage > 0) {
    for (const std::string& path : paths) remove_parts(path, stage, part_prefix(path, stage) + step);
    for (const std::string& path : dropped) remove_parts(path, stage, "");
  }
}

std::string Trainer::Impl::pipeline_resume_path(const std::string& main_path) const {
  if (pipeline->stage() == 0) return main_path;
  const formats::CheckpointFile main = formats::read_checkpoint_summary(main_path);
  std::string part = part_prefix(main_path, pipeline->stage()) + std::to_string(main.summary.global_step);
  if (!posix::exists(part)) {
    throw Error("ckpt_path",
                main_path + " has no part for pipeline stage " + std::to_string(pipeline->stage()) + " (" + part +
                    " is missing)",
                "Resume with the pipeline that wrote it (the same trainer.pipeline settings and trainer.devices); "
                "a checkpoint of one process or of another pipeline cannot resume a pipeline's stages.");
  }
  return part;
}

}  // namespace trainer::engine
