#include "trainer/engine/export_command.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/checkpoint/checkpoint.h"
#include "trainer/engine/posix_files.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/formats/safetensors_writer.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

constexpr int64_t kCheckpointFormatVersion = 1;  // as written by save_checkpoint

std::string safetensors_dtype(at::ScalarType type, const std::string& name) {
  switch (type) {
    case at::kDouble:
      return "F64";
    case at::kFloat:
      return "F32";
    case at::kHalf:
      return "F16";
    case at::kBFloat16:
      return "BF16";
    case at::kLong:
      return "I64";
    case at::kInt:
      return "I32";
    case at::kShort:
      return "I16";
    case at::kChar:
      return "I8";
    case at::kByte:
      return "U8";
    case at::kBool:
      return "BOOL";
    default:
      throw Error("tensor '" + name + "'",
                  std::string("dtype ") + c10::toString(type) + " has no safetensors equivalent",
                  "Export models whose weights are floating point, integer or bool tensors.");
  }
}

std::string checkpoint_dir(const config::ConfigView& view, const std::string& run_dir) {
  // As TrainerOptions: callbacks.model_checkpoint.dirpath, else <run dir>/checkpoints.
  return view.get_or<std::string>("callbacks.model_checkpoint.dirpath", run_dir + "/checkpoints");
}

torch::jit::Module load_archive(const std::string& path) {
  const formats::CheckpointFile file = formats::read_checkpoint_file(path);  // sizes and checksums
  torch::jit::Module root;
  read_checkpoint_archive(path, [&] {
    std::istringstream payload{std::string(file.payload())};
    root = torch::jit::load(payload, at::Device(at::kCPU));
  });
  if (!root.hasattr("format_version") || !root.attr("format_version").isInt() ||
      root.attr("format_version").toInt() != kCheckpointFormatVersion || !root.hasattr("model")) {
    throw Error(path, "not a trainer checkpoint (no format_version 1 and model)",
                "Point ckpt_path at a file written by trainer.");
  }
  return root;
}

int64_t read_int(const torch::jit::Module& root, const std::string& key) {
  if (!root.hasattr(key)) return 0;
  c10::IValue value = root.attr(key);
  return value.isInt() ? value.toInt() : 0;
}

// <run dir>/<checkpoint name>.safetensors: the export's own directory, never the training run's.
std::string default_output(const std::string& checkpoint, const std::string& run_dir) {
  const std::string extension = ".ckpt";
  std::string name = checkpoint.substr(checkpoint.find_last_of('/') + 1);
  if (name.size() > extension.size() &&
      name.compare(name.size() - extension.size(), extension.size(), extension) == 0) {
    name.resize(name.size() - extension.size());
  }
  return run_dir + "/" + name + ".safetensors";
}

// The file an export writes for `export_path`: the one a symbolic link names (the link stays a
// link), refused when it is not a regular file (a device such as /dev/stdout, a directory, a FIFO)
// or when it holds a trainer checkpoint (another run's, or a copy: written over, it could never be
// resumed or evaluated again).
std::string export_target(const std::string& export_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(export_path, ec);  // through links
  if (!fs::exists(status)) {
    // A new file, or a link to one not there yet: the link's target is written.
    fs::path target = export_path;
    for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
      const fs::path next = fs::read_symlink(target, ec);
      if (ec) break;
      target = next.is_absolute() ? next : target.parent_path() / next;
    }
    return target.lexically_normal().string();
  }
  if (!fs::is_regular_file(status)) {
    throw Error("export_path=" + export_path,
                std::string("is ") +
                    (fs::is_directory(status)        ? "a directory"
                     : fs::is_character_file(status) ? "a character device"
                     : fs::is_block_file(status)     ? "a block device"
                     : fs::is_fifo(status)           ? "a FIFO or pipe"
                                                     : "not a regular file") +
                    ": the export writes a .safetensors file (atomically: a temporary file renamed into place); "
                    "nothing was written",
                "Set export_path to a file path, e.g. export_path=model.safetensors.");
  }
  const fs::path target = fs::canonical(export_path, ec);
  std::ifstream in(target, std::ios::binary);
  char head[15] = {};
  in.read(head, sizeof(head));
  if (target.extension() == ".ckpt" ||
      std::string(head, static_cast<size_t>(in.gcount())).rfind("TRAINER-CKPT", 0) == 0) {
    throw Error("export_path=" + export_path,
                "holds a trainer checkpoint" +
                    (fs::is_symlink(export_path, ec) ? " (" + target.string() + ")" : std::string()) +
                    ": the export would write over it, and it could never be resumed or evaluated again; nothing "
                    "was written",
                "Set export_path to a .safetensors file.");
  }
  return fs::is_symlink(export_path, ec) ? target.string() : export_path;
}

// A config section as JSON, for the export's metadata (Python's json.loads reads it back).
nlohmann::ordered_json config_json(const config::Node& node) {
  switch (node.type()) {
    case config::NodeType::kNull:
      return nullptr;
    case config::NodeType::kBool:
      return node.as_bool();
    case config::NodeType::kInt:
      if (node.is_big_int()) return node.int_text();
      return node.as_int();
    case config::NodeType::kFloat:
      if (!std::isfinite(node.as_float())) return node.as_float() > 0 ? "inf" : node.as_float() < 0 ? "-inf" : "nan";
      return node.as_float();
    case config::NodeType::kString:
      return node.as_string();
    case config::NodeType::kMissing:
      return "???";
    case config::NodeType::kList: {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const config::Node& item : node.items()) list.push_back(config_json(item));
      return list;
    }
    case config::NodeType::kMap: {
      nlohmann::ordered_json map = nlohmann::ordered_json::object();
      for (const config::Node::Entry& entry : node.entries()) map[entry.key] = config_json(entry.value);
      return map;
    }
  }
  return nullptr;
}

std::string json_text(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// What a Python program needs to rebuild the model and feed it as training did
// (python/trainer_export.py): the model and data sections of the run that wrote the checkpoint
// (its stored config; the evaluation's own for a checkpoint from before configs were stored), one
// sample's shape and the class count.
void add_model_metadata(std::map<std::string, std::string>& metadata, const std::string& checkpoint,
                        const formats::CheckpointFile& file, const config::Node& job_config) {
  config::Node stored;
  if (!file.config_yaml.empty()) stored = config::load_yaml_string(file.config_yaml, checkpoint).root;
  const config::Node& config = file.config_yaml.empty() ? job_config : stored;
  for (const char* section : {"model", "data"}) {
    if (const config::Node* node = config.find(section); node != nullptr && node->is_map()) {
      metadata[std::string("trainer_") + section] = json_text(config_json(*node));
    }
  }
  if (!file.summary.sample_shape.empty()) metadata["trainer_sample_shape"] = json_text(file.summary.sample_shape);
  if (file.summary.num_classes > 0) metadata["trainer_num_classes"] = std::to_string(file.summary.num_classes);
}

}  // namespace

std::string export_checkpoint(const config::Node& job_config, const std::string& run_dir) {
  config::ConfigView view(job_config);
  const options::OptionReader top(view);
  top.choice("format");  // safetensors, the one format written; the declaration refuses others
  const std::string wanted = top.get<std::optional<std::string>>("ckpt_path").value_or("");
  if (wanted.empty()) {
    throw Error("ckpt_path", "trainer export needs a checkpoint to export",
                "Give ckpt_path=last or best (with hydra.run.dir=<the training run's directory>), or "
                "ckpt_path=<path to a .ckpt file>.");
  }
  const std::string checkpoint = formats::resolve_checkpoint_name(wanted, checkpoint_dir(view, run_dir));
  const std::string output =
      top.get<std::optional<std::string>>("export_path").value_or(default_output(checkpoint, run_dir));
  if (output == checkpoint) {
    throw Error("export_path", "the export would overwrite the checkpoint " + checkpoint,
                "Set export_path to a .safetensors file.");
  }
  const std::string target = export_target(output);

  torch::jit::Module root = load_archive(checkpoint);
  const formats::CheckpointFile stored = formats::read_checkpoint_summary(checkpoint);
  const formats::CheckpointSummary& summary = stored.summary;
  const std::vector<std::string>& class_names = summary.class_names;
  c10::IValue model_value = root.attr("model");
  if (!model_value.isModule()) {
    throw Error(checkpoint, "the checkpoint's model entry is not a module",
                "Point ckpt_path at a file written by trainer.");
  }
  torch::jit::Module model = model_value.toModule();

  // Keep the contiguous CPU copies alive until the file is written.
  std::vector<at::Tensor> storage;
  std::vector<formats::SafetensorsTensor> tensors;
  size_t total_bytes = 0;
  auto add = [&](const std::string& name, const at::Tensor& value) {
    if (!value.defined()) return;
    at::Tensor tensor = value.detach().to(at::kCPU).contiguous();
    formats::SafetensorsTensor entry;
    entry.name = name;
    entry.dtype = safetensors_dtype(tensor.scalar_type(), name);
    entry.shape = tensor.sizes().vec();
    entry.data = tensor.data_ptr();
    entry.bytes = tensor.numel() * tensor.element_size();
    total_bytes += entry.bytes;
    tensors.push_back(std::move(entry));
    storage.push_back(std::move(tensor));
  };
  for (const auto& parameter : model.named_parameters(/*recurse=*/true)) add(parameter.name, parameter.value);
  for (const auto& buffer : model.named_buffers(/*recurse=*/true)) add(buffer.name, buffer.value);
  if (tensors.empty()) {
    throw Error(checkpoint, "the checkpoint's model holds no parameters or buffers",
                "Point ckpt_path at a checkpoint of a model with weights.");
  }

  const int64_t epoch = read_int(root, "epoch");
  const int64_t global_step = read_int(root, "global_step");
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"trainer_epoch", std::to_string(epoch)},
      {"trainer_global_step", std::to_string(global_step)},
  };
  // The class names in label order, so a prediction maps back to a name without the data.
  if (!class_names.empty()) metadata["trainer_class_names"] = formats::json_string_array(class_names);
  // How a table's rows become inputs (data=csv: columns, categories, mean and std), so a deployed
  // model can encode new rows as training did.
  if (!summary.data_encoding.empty()) metadata["trainer_data_encoding"] = summary.data_encoding;
  add_model_metadata(metadata, checkpoint, stored, job_config);
  if (!posix::make_directories(posix::parent(target))) {
    throw Error(output, "cannot create the export's directory", "Check the directory's permissions.");
  }
  formats::write_safetensors(target, tensors, metadata);

  char size[32];
  std::snprintf(size, sizeof(size), "%.2f MB", static_cast<double>(total_bytes) / 1e6);
  log::info("export: wrote " + std::to_string(tensors.size()) + " tensors (" + size + ") of " + checkpoint + " (" +
            formats::checkpoint_position(epoch, read_int(root, "batch_in_epoch"), global_step) + ") to " + output);
  return output;
}

}  // namespace trainer::engine
