#include "trainer/engine/checkpoint/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "trainer/config/config_diff.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/posix_files.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

constexpr int64_t kFormatVersion = 1;

void write_int(torch::serialize::OutputArchive& archive, const std::string& key, int64_t value) {
  archive.write(key, c10::IValue(value));
}

// The sums as one list of doubles (the counts are exact below 2^53).
void write_sums(torch::serialize::OutputArchive& archive, const std::string& key, const MetricSums& sums) {
  c10::List<double> values({sums.loss_sum, sums.correct, sums.abs_error, sums.squared_error, sums.target_sum,
                            sums.target_squares, static_cast<double>(sums.samples), static_cast<double>(sums.batches)});
  archive.write(key, c10::IValue(values));
}

// Zero when absent (a checkpoint from before they were kept).
MetricSums read_sums(torch::serialize::InputArchive& archive, const std::string& key) {
  MetricSums sums;
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isDoubleList()) return sums;
  const c10::List<double> v = value.toDoubleList();
  if (v.size() != 8) return sums;
  sums.loss_sum = v.get(0);
  sums.correct = v.get(1);
  sums.abs_error = v.get(2);
  sums.squared_error = v.get(3);
  sums.target_sum = v.get(4);
  sums.target_squares = v.get(5);
  sums.samples = static_cast<int64_t>(v.get(6));
  sums.batches = static_cast<int64_t>(v.get(7));
  return sums;
}

int64_t read_int(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  if (!archive.try_read(key, value)) return 0;
  return value.toInt();
}

struct StoredTensor {
  std::vector<int64_t> shape;
  at::ScalarType dtype = at::kFloat;
};

std::string describe(const StoredTensor& tensor) {
  return std::string(c10::toString(tensor.dtype)) + " " + models::shape_string(tensor.shape);
}

// Every tensor of a saved module, by its dotted name (as named_parameters / named_buffers name it).
void collect_tensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                     std::map<std::string, StoredTensor>& out) {
  for (const std::string& key : archive.keys()) {
    torch::serialize::InputArchive child;
    if (archive.try_read(key, child)) {
      collect_tensors(child, prefix + key + ".", out);
      continue;
    }
    at::Tensor tensor;
    if (archive.try_read(key, tensor) && tensor.defined()) {
      out[prefix + key] = {tensor.sizes().vec(), tensor.scalar_type()};
    }
  }
}

// A relative path of the checkpoint's run that the evaluation made absolute (it reads relative
// paths in the directory the training run started in, docs/evaluation.md): the same file, no
// difference to name.
bool made_absolute(const std::string& before, const std::string& after) {
  if (before.empty() || before.front() == '/' || after.empty() || after.front() != '/') return false;
  const std::string relative = std::filesystem::path(before).lexically_normal().string();
  return after.size() > relative.size() &&
         after.compare(after.size() - relative.size(), relative.size(), relative) == 0 &&
         after[after.size() - relative.size() - 1] == '/';
}

// The config keys that differ between the checkpoint's run and this one, ordered by `rank` (lower
// first; a negative rank leaves the key out), at most five: " Config keys that differ ...: ...".
std::string differing_keys(const std::string& stored_yaml, const std::string& current_yaml,
                           const std::function<int(const std::string&)>& rank) {
  if (stored_yaml.empty() || current_yaml.empty()) return {};
  std::vector<config::ValueDifference> differences;
  try {
    differences = config::config_differences(config::load_yaml_string(stored_yaml, "<checkpoint config>").root,
                                             config::load_yaml_string(current_yaml, "<job config>").root);
  } catch (const std::exception&) {
    return {};
  }
  const auto order = [&](const std::string& key) {
    const int r = rank(key);
    return r < 0 ? std::numeric_limits<int>::max() : r;
  };
  std::stable_sort(differences.begin(), differences.end(),
                   [&](const auto& a, const auto& b) { return order(a.key) < order(b.key); });
  std::string text;
  int shown = 0;
  for (const config::ValueDifference& d : differences) {
    if (rank(d.key) < 0 || made_absolute(d.before, d.after)) continue;
    if (shown == 5) break;
    text += std::string(shown++ == 0 ? "" : "; ") + d.key + ": " + d.before + " in the checkpoint's run, " + d.after +
            " now";
  }
  return text.empty() ? text : " Config keys that differ from the run that wrote it: " + text + ".";
}

// Those that shape the model first: the likely reason a checkpoint does not fit.
std::string likely_keys(const std::string& stored_yaml, const std::string& current_yaml) {
  return differing_keys(stored_yaml, current_yaml, [](const std::string& key) {
    if (key.rfind("model.", 0) == 0) return 0;
    if (key == "precision" || key.rfind("data.", 0) == 0) return 1;
    return -1;
  });
}

// Those that shape the optimizer's state: the layout (a pipeline stage keeps its own parameters'
// state) and the optimizer.
std::string optimizer_keys(const std::string& stored_yaml, const std::string& current_yaml) {
  return differing_keys(stored_yaml, current_yaml, [](const std::string& key) {
    if (key == "trainer.strategy" || key == "trainer.devices" || key.rfind("trainer.pipeline.", 0) == 0) return 0;
    if (key.rfind("optimizer.", 0) == 0) return 1;
    return -1;
  });
}

// Lightning's strict loading: every tensor of the model must be in the checkpoint with the same
// shape and dtype, and the checkpoint may hold no tensor the model lacks. LibTorch's Module::load
// would otherwise replace a parameter of another shape without a word. Returns whether an integer
// buffer was stored as a floating-point one (a counter such as num_batches_tracked, which
// checkpoints of the "true" precisions held in the weights' dtype before cast_floating_tensors):
// accepted, and converted on load.
bool check_tensor_shapes_and_dtypes(const std::string& path, models::Model& model,
                                    torch::serialize::InputArchive& archive, const std::string& stored_config,
                                    const std::string& current_config, const SkipTensor& skip) {
  std::map<std::string, StoredTensor> stored;
  collect_tensors(archive, "", stored);
  std::vector<std::string> problems;
  std::map<std::string, bool> seen;
  bool converts = false;
  auto check = [&](const std::string& name, const at::Tensor& tensor, bool is_buffer) {
    if (!tensor.defined()) return;
    seen[name] = true;
    if (skip && skip(tensor)) return;
    const auto found = stored.find(name);
    const StoredTensor mine{tensor.sizes().vec(), tensor.scalar_type()};
    if (found == stored.end()) {
      problems.push_back(name + ": missing from the checkpoint (model " + describe(mine) + ")");
    } else if (is_buffer && found->second.shape == mine.shape && !at::isFloatingType(mine.dtype) &&
               at::isFloatingType(found->second.dtype)) {
      converts = true;
    } else if (found->second.shape != mine.shape || found->second.dtype != mine.dtype) {
      problems.push_back(name + ": checkpoint " + describe(found->second) + " vs model " + describe(mine));
    }
  };
  for (const auto& parameter : model.named_parameters(/*recurse=*/true))
    check(parameter.key(), parameter.value(), false);
  for (const auto& buffer : model.named_buffers(/*recurse=*/true)) check(buffer.key(), buffer.value(), true);
  for (const auto& [name, tensor] : stored) {
    if (seen.count(name) == 0)
      problems.push_back(name + ": in the checkpoint (" + describe(tensor) + "), not in the model");
  }
  if (problems.empty()) return converts;
  std::string listed;
  for (size_t i = 0; i < problems.size() && i < 4; ++i) listed += (i == 0 ? "" : "; ") + problems[i];
  if (problems.size() > 4) listed += "; and " + std::to_string(problems.size() - 4) + " more";
  throw Error(path,
              "the checkpoint does not fit this model (" + std::to_string(problems.size()) +
                  " of its tensors differ): " + listed + "." + likely_keys(stored_config, current_config),
              "Evaluate or resume with the model config (and, for 64-true, 16-true and bf16-true, the precision) of "
              "the run that wrote it: validate/test/export take it from the checkpoint unless an override changes "
              "it.");
}

void check_finite(const std::string& path, models::Model& model) {
  std::vector<std::string> bad;
  auto check = [&](const std::string& name, const at::Tensor& tensor) {
    if (tensor.defined() && tensor.is_floating_point() && !at::isfinite(tensor).all().item<bool>()) {
      bad.push_back(name);
    }
  };
  for (const auto& parameter : model.named_parameters(/*recurse=*/true)) check(parameter.key(), parameter.value());
  for (const auto& buffer : model.named_buffers(/*recurse=*/true)) check(buffer.key(), buffer.value());
  if (bad.empty()) return;
  std::string listed;
  for (size_t i = 0; i < bad.size() && i < 4; ++i) listed += (i == 0 ? "" : ", ") + bad[i];
  if (bad.size() > 4) listed += " and " + std::to_string(bad.size() - 4) + " more";
  const std::optional<std::string> intact = formats::newest_intact_checkpoint(posix::parent(path), path);
  throw Error(
      path,
      "the checkpoint holds non-finite weights (NaN or inf) in " + listed + ": the run that wrote it had diverged",
      "Use an earlier checkpoint" + (intact ? " (" + *intact + " is the newest other one)" : std::string()) +
          ", and lower optimizer.lr or set trainer.gradient_clip_val for the next run.");
}

// Named texts (callbacks' and loggers' states) as two lists, `<prefix>_names` and `<prefix>_states`.
void write_named_texts(torch::serialize::OutputArchive& root, const std::string& prefix,
                       const std::vector<std::pair<std::string, std::string>>& entries) {
  c10::List<std::string> names;
  c10::List<std::string> texts;
  for (const auto& [name, text] : entries) {
    names.push_back(name);
    texts.push_back(text);
  }
  root.write(prefix + "_names", c10::IValue(names));
  root.write(prefix + "_states", c10::IValue(texts));
}

// Absent in a checkpoint of an older trainer: none.
std::vector<std::pair<std::string, std::string>> read_named_texts(torch::serialize::InputArchive& root,
                                                                  const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> entries;
  c10::IValue names;
  c10::IValue texts;
  if (root.try_read(prefix + "_names", names) && root.try_read(prefix + "_states", texts)) {
    auto name_list = names.toList();
    auto text_list = texts.toList();
    for (size_t i = 0; i < name_list.size() && i < text_list.size(); ++i) {
      entries.emplace_back(name_list.get(i).toStringRef(), text_list.get(i).toStringRef());
    }
  }
  return entries;
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
  write_sums(root, "epoch_sums", state.epoch_sums);
  write_sums(root, "logged_sums", state.logged_sums);
  write_int(root, "skipped_in_epoch", state.skipped_in_epoch);
  root.write("fit_seconds", c10::IValue(state.fit_seconds));
  write_named_texts(root, "callback", state.callback_states);
  write_named_texts(root, "logger", state.logger_states);
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
  if (state.rank_rng_states.defined()) root.write("rng_cpu_ranks", state.rank_rng_states, /*is_buffer=*/true);
  if (state.rank_cuda_rng_states.defined()) {
    root.write("rng_cuda_ranks", state.rank_cuda_rng_states, /*is_buffer=*/true);
  }

  std::string bytes = formats::begin_checkpoint_file();
  root.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  formats::CheckpointSummary summary;
  summary.epoch = state.epoch;
  summary.batch_in_epoch = state.batch_in_epoch;
  summary.global_step = state.global_step;
  summary.precision = state.precision;
  for (const TopKEntry& entry : state.top_k) summary.best.emplace_back(entry.score, entry.path);
  summary.class_names = state.class_names;
  summary.data_encoding = state.data_encoding;
  summary.sample_shape = state.sample_shape;
  summary.num_classes = state.num_classes;
  summary.model_file = model.source_fingerprint();
  formats::finish_checkpoint_file(bytes, summary, config_yaml);
  return bytes;
}

void read_checkpoint_archive(const std::string& path, const std::function<void()>& load) {
  try {
    load();
  } catch (const c10::Error& error) {  // its message without LibTorch's C++ backtrace
    throw Error(path, std::string("not a readable checkpoint: ") + error.what_without_backtrace(),
                "Point ckpt_path at a file written by trainer.");
  } catch (const std::exception& error) {
    throw Error(path, std::string("not a readable checkpoint: ") + error.what(),
                "Point ckpt_path at a file written by trainer.");
  }
}

namespace {

// Module::load, but for the tensors `skip` leaves out, each read from its module's nested archive;
// with `convert`, each tensor read in the model's dtype (an integer buffer stored as a float).
void load_tensors(torch::serialize::InputArchive& archive, models::Model& model, const SkipTensor& skip, bool convert) {
  if (!skip && !convert) {
    model.load(archive);
    return;
  }
  torch::NoGradGuard no_grad;
  auto read = [&](const std::string& name, at::Tensor tensor, bool is_buffer) {
    if (!tensor.defined() || (skip && skip(tensor))) return;
    torch::serialize::InputArchive* level = &archive;
    std::vector<torch::serialize::InputArchive> children;  // the path's archives, kept alive
    children.reserve(static_cast<size_t>(std::count(name.begin(), name.end(), '.')));
    size_t begin = 0;
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', begin)) {
      children.emplace_back();
      level->read(name.substr(begin, dot - begin), children.back());
      level = &children.back();
      begin = dot + 1;
    }
    at::Tensor stored;
    level->read(name.substr(begin), stored, is_buffer);
    tensor.set_data(stored.to(tensor.device(), tensor.scalar_type()));  // stays where the model is
  };
  for (const auto& parameter : model.named_parameters(/*recurse=*/true))
    read(parameter.key(), parameter.value(), false);
  for (const auto& buffer : model.named_buffers(/*recurse=*/true)) read(buffer.key(), buffer.value(), true);
}

}  // namespace

LoopState load_checkpoint(const std::string& path, models::Model& model, torch::optim::Optimizer* optimizer,
                          bool restore_rng, const std::string& current_config_yaml, const SkipTensor& skip) {
  const formats::CheckpointFile file = formats::read_checkpoint_file(path);  // sizes and checksums
  torch::serialize::InputArchive root;
  // Onto the model's device. LibTorch would otherwise restore each tensor to the device it was
  // saved from (cuda:0 for a GPU run's checkpoint: another rank's GPU, or none on a CPU-only
  // machine) and then move the model's parameters there. A pipeline stage evaluating from the
  // whole model's file reads it into host memory and copies only its own tensors to its device.
  c10::Device device(c10::kCPU);
  if (!(skip && optimizer == nullptr)) {
    for (const at::Tensor& tensor : model.parameters()) {
      device = tensor.device();
      break;
    }
  }
  read_checkpoint_archive(path, [&] {
    const std::string_view payload = file.payload();
    root.load_from(payload.data(), payload.size(), device);
  });
  if (read_int(root, "format_version") != kFormatVersion) {
    throw Error(path, "not a trainer checkpoint (no format_version 1)",
                "Point ckpt_path at a file written by trainer.");
  }
  torch::serialize::InputArchive model_archive;
  root.read("model", model_archive);
  const bool convert =
      check_tensor_shapes_and_dtypes(path, model, model_archive, file.config_yaml, current_config_yaml, skip);
  try {
    load_tensors(model_archive, model, skip, convert);
  } catch (const c10::Error& error) {
    throw Error(path, std::string("the checkpoint does not fit this model: ") + error.what_without_backtrace(),
                "Use the same model config as the run that wrote it.");
  } catch (const std::exception& error) {
    throw Error(path, std::string("the checkpoint does not fit this model: ") + error.what(),
                "Use the same model config (and, for the 64-true, 16-true and bf16-true weights, the same "
                "precision) as the run that wrote it.");
  }
  check_finite(path, model);
  if (optimizer != nullptr) {
    torch::serialize::InputArchive optimizer_archive;
    root.read("optimizer", optimizer_archive);
    try {
      optimizer->load(optimizer_archive);
    } catch (const std::exception& error) {
      const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
      throw Error(path,
                  std::string("its optimizer state does not fit this run's optimizer (") +
                      (c10_error != nullptr ? c10_error->what_without_backtrace() : error.what()) +
                      "): the run that wrote it had another layout or optimizer." +
                      optimizer_keys(file.config_yaml, current_config_yaml),
                  "Resume with the layout and optimizer of the run that wrote it: a pipeline's checkpoint keeps "
                  "each stage's optimizer state apart, so it resumes only with the same trainer.strategy=pipeline, "
                  "trainer.devices and trainer.pipeline settings; one process and data parallel resume each "
                  "other's.");
    }
  }
  LoopState state;
  state.epoch = read_int(root, "epoch");
  state.global_step = read_int(root, "global_step");
  state.batch_in_epoch = read_int(root, "batch_in_epoch");
  state.scheduler_count = read_int(root, "scheduler_count");
  state.epoch_sums = read_sums(root, "epoch_sums");
  state.logged_sums = read_sums(root, "logged_sums");
  state.skipped_in_epoch = read_int(root, "skipped_in_epoch");
  if (c10::IValue seconds; root.try_read("fit_seconds", seconds) && seconds.isDouble()) {
    state.fit_seconds = seconds.toDouble();  // 0 in checkpoints from before it was kept
  }
  state.callback_states = read_named_texts(root, "callback");
  state.logger_states = read_named_texts(root, "logger");
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
  at::Tensor ranks;
  if (root.try_read("rng_cpu_ranks", ranks)) state.rank_rng_states = ranks.cpu();
  at::Tensor cuda_ranks;
  if (root.try_read("rng_cuda_ranks", cuda_ranks)) state.rank_cuda_rng_states = cuda_ranks.cpu();
  if (restore_rng) {
    at::Tensor rng;
    if (root.try_read("rng_cpu", rng)) {
      auto generator = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(rng.cpu());  // the archive may have been mapped to a GPU
    }
  }
  return state;
}

}  // namespace trainer::engine
