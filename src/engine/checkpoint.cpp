#include "trainer/engine/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <mutex>

#include "trainer/engine/posix_files.h"
#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

constexpr int64_t kFormatVersion = 1;

void write_int(torch::serialize::OutputArchive& archive, const std::string& key, int64_t value) {
  archive.write(key, c10::IValue(value));
}

int64_t read_int(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  if (!archive.try_read(key, value)) return 0;
  return value.toInt();
}

}  // namespace

std::string serialize_checkpoint(models::Model& model, torch::optim::Optimizer& optimizer, const LoopState& state,
                                 const std::string& config_yaml) {
  torch::serialize::OutputArchive root;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  root.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  root.write("optimizer", optimizer_archive);

  write_int(root, "format_version", kFormatVersion);
  write_int(root, "epoch", state.epoch);
  write_int(root, "global_step", state.global_step);
  write_int(root, "batch_in_epoch", state.batch_in_epoch);
  write_int(root, "scheduler_count", state.scheduler_count);
  c10::List<std::string> callback_names;
  c10::List<std::string> callback_states;
  for (const auto& [name, text] : state.callback_states) {
    callback_names.push_back(name);
    callback_states.push_back(text);
  }
  root.write("callback_names", c10::IValue(callback_names));
  root.write("callback_states", c10::IValue(callback_states));
  c10::List<double> scores;
  c10::List<std::string> paths;
  for (const TopKEntry& entry : state.top_k) {
    scores.push_back(entry.score);
    paths.push_back(entry.path);
  }
  root.write("top_k_scores", c10::IValue(scores));
  root.write("top_k_paths", c10::IValue(paths));
  root.write("config", c10::IValue(config_yaml));
  root.write("precision", c10::IValue(state.precision));
  if (state.grad_scaler) {
    root.write("grad_scaler_scale", c10::IValue(state.grad_scaler->scale));
    write_int(root, "grad_scaler_growth_tracker", state.grad_scaler->growth_tracker);
  }
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    root.write("rng_cpu", generator.get_state(), /*is_buffer=*/true);
  }

  std::string bytes;
  root.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  return bytes;
}

LoopState load_checkpoint(const std::string& path, models::Model& model,
                          torch::optim::Optimizer* optimizer, bool restore_rng) {
  if (!posix::exists(path)) {
    throw Error(path, "checkpoint not found",
                "Give ckpt_path=last or best (looked up in the run's checkpoints/), or a path to a .ckpt file.");
  }
  torch::serialize::InputArchive root;
  try {
    root.load_from(path);
  } catch (const std::exception& error) {
    throw Error(path, std::string("not a readable checkpoint: ") + error.what(),
                "Point ckpt_path at a file written by trainer.");
  }
  if (read_int(root, "format_version") != kFormatVersion) {
    throw Error(path, "not a trainer checkpoint (no format_version 1)",
                "Point ckpt_path at a file written by trainer.");
  }
  torch::serialize::InputArchive model_archive;
  root.read("model", model_archive);
  try {
    model.load(model_archive);
  } catch (const std::exception& error) {
    throw Error(path, std::string("the checkpoint does not fit this model: ") + error.what(),
                "Use the same model config (and, for the 64-true, 16-true and bf16-true weights, the same "
                "precision) as the run that wrote it.");
  }
  if (optimizer != nullptr) {
    torch::serialize::InputArchive optimizer_archive;
    root.read("optimizer", optimizer_archive);
    optimizer->load(optimizer_archive);
  }
  LoopState state;
  state.epoch = read_int(root, "epoch");
  state.global_step = read_int(root, "global_step");
  state.batch_in_epoch = read_int(root, "batch_in_epoch");
  state.scheduler_count = read_int(root, "scheduler_count");
  c10::IValue names;
  c10::IValue texts;
  if (root.try_read("callback_names", names) && root.try_read("callback_states", texts)) {
    auto name_list = names.toList();
    auto text_list = texts.toList();
    for (size_t i = 0; i < name_list.size() && i < text_list.size(); ++i) {
      state.callback_states.emplace_back(name_list.get(i).toStringRef(), text_list.get(i).toStringRef());
    }
  }
  c10::IValue precision;
  // Checkpoints from before mixed precision wrote "32".
  if (root.try_read("precision", precision) && precision.isString() && precision.toStringRef() != "32") {
    state.precision = precision.toStringRef();
  }
  c10::IValue scale;
  if (root.try_read("grad_scaler_scale", scale)) {
    state.grad_scaler = GradScalerState{scale.toDouble(), read_int(root, "grad_scaler_growth_tracker")};
  }
  c10::IValue scores;
  c10::IValue paths;
  if (root.try_read("top_k_scores", scores) && root.try_read("top_k_paths", paths)) {
    auto score_list = scores.toDoubleList();
    auto path_list = paths.toList();
    for (size_t i = 0; i < score_list.size() && i < path_list.size(); ++i) {
      state.top_k.push_back({score_list.get(i), path_list.get(i).toStringRef()});
    }
  }
  if (restore_rng) {
    at::Tensor rng;
    if (root.try_read("rng_cpu", rng)) {
      auto generator = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(rng);
    }
  }
  return state;
}

}  // namespace trainer::engine
