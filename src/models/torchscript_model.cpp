#include "trainer/models/torchscript_model.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/serialization/import.h>

#include "trainer/models/option_reading.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::models {
namespace {

const char* const kSaveHint =
    "Save the model from Python with torch.jit.script(model).save(path) and set model.path to "
    "that file";

// c10::Error's what() carries a C++ backtrace users do not need.
std::string torch_message(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    return c10_error->what_without_backtrace();
  }
  return error.what();
}

// POSIX rather than std::filesystem: the 2.11 wheel's libtorch.so exports its own (unversioned)
// std::filesystem functions, which a binary linked against it binds to instead of libstdc++'s.
bool is_regular_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string absolute_path(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  std::vector<char> buffer(4096);
  if (::getcwd(buffer.data(), buffer.size()) == nullptr) return path;
  return std::string(buffer.data()) + "/" + path;
}

torch::jit::Module load_scripted(const std::string& path) {
  if (!is_regular_file(path)) {
    const std::string absolute = absolute_path(path);
    throw Error(path,
                "no TorchScript file at '" + path + "'" + (absolute != path ? " (" + absolute + ")" : std::string()),
                kSaveHint);
  }
  try {
    return torch::jit::load(path, at::Device(at::kCPU));
  } catch (const std::exception& e) {
    throw Error(path, "cannot load this file as a TorchScript module: " + torch_message(e),
                std::string(kSaveHint) +
                    ". A file written by a newer PyTorch than this LibTorch may not load: save "
                    "it with the PyTorch version the trainer was built against");
  }
}

// Registers `scripted`'s own parameters and buffers on `mirror` (same tensors, so same storage
// and autograd identity) and recurses into submodules through plain Modules of the same names.
void mirror_into(const torch::jit::Module& scripted, torch::nn::Module& mirror) {
  for (const auto& parameter : scripted.named_parameters(/*recurse=*/false)) {
    mirror.register_parameter(parameter.name, parameter.value, parameter.value.requires_grad());
  }
  for (const auto& buffer : scripted.named_buffers(/*recurse=*/false)) {
    mirror.register_buffer(buffer.name, buffer.value);
  }
  for (const auto& child : scripted.named_children()) {
    auto child_mirror = std::make_shared<torch::nn::Module>("ScriptedSubmodule");
    mirror_into(child.value, *child_mirror);
    mirror.register_module(child.name, child_mirror);
  }
}

// FNV-1a (64 bits) of the file's bytes and its size: stable across builds and machines, enough
// to notice an edited or re-saved model file (not a defence against a crafted collision).
std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t hash = 0xcbf29ce484222325ULL;
  uint64_t size = 0;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    for (size_t i = 0; i < n; ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 0x100000001b3ULL;
    }
    size += n;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "fnv1a64 %016llx, %llu bytes", static_cast<unsigned long long>(hash),
                static_cast<unsigned long long>(size));
  return text;
}

}  // namespace

TorchScriptOptions TorchScriptOptions::from_config(const config::ConfigView& model_config, const InputSpec& /*spec*/) {
  TorchScriptOptions options;
  const options::OptionReader r(model_config, "torchscript");
  r.get<std::string>("name");
  options.path = r.get<std::string>("path");
  return options;
}

TorchScriptModel::TorchScriptModel(const TorchScriptOptions& options)
    : TorchScriptModel(load_scripted(options.path), options.path) {
  fingerprint_ = file_fingerprint(options.path);
}

TorchScriptModel::TorchScriptModel(torch::jit::Module scripted, std::string source)
    : Model("TorchScript"), scripted_(std::move(scripted)), source_(std::move(source)) {
  mirror_parameters();
  // A module saved after .eval() would otherwise start in eval mode while is_training() says
  // otherwise.
  train(is_training());
}

void TorchScriptModel::mirror_parameters() {
  // Python saves each parameter's requires_grad, and a frozen part must stay frozen. A module
  // with no trainable parameter at all (built in C++, or frozen wholesale before saving) is
  // made trainable: training it is why it was loaded.
  bool any_trainable = false;
  int64_t count = 0;
  for (const at::Tensor& parameter : scripted_.parameters()) {
    any_trainable = any_trainable || parameter.requires_grad();
    ++count;
  }
  if (!any_trainable && count > 0) {
    log::warning("TorchScript model " + source_ + ": none of its " + std::to_string(count) +
                 " parameters requires grad; training all of them");
    for (at::Tensor parameter : scripted_.parameters()) parameter.set_requires_grad(true);
  }
  mirror_into(scripted_, *this);
}

at::Tensor TorchScriptModel::forward(const at::Tensor& inputs) {
  c10::IValue output = scripted_.forward({inputs});
  if (!output.isTensor()) {
    throw Error(source_,
                "the scripted module's forward returned " + output.tagKind() +
                    ", but the trainer needs one Tensor of logits [batch, num_classes]",
                "Make forward return only the logits");
  }
  return std::move(output).toTensor();
}

void TorchScriptModel::train(bool on) {
  torch::nn::Module::train(on);
  // Like jit::Module::train, but a module built in C++ without a `training` attribute is skipped
  // rather than failing an internal assert (scripting from Python always adds it).
  for (torch::jit::Module module : scripted_.modules()) {
    if (module.hasattr("training")) module.setattr("training", on);
  }
}

std::string TorchScriptModel::describe() const {
  const auto type_name = scripted_.type()->name();
  return "torchscript " + (type_name ? type_name->qualifiedName() : std::string("module")) + " from " + source_ + ": " +
         with_thousands_separators(parameter_count(*this)) + " parameters";
}

std::vector<PipelineUnit> TorchScriptModel::pipeline_units() {
  const auto type_name = scripted_.type()->name();
  const std::string type = type_name ? type_name->qualifiedName() : std::string("module");
  // "__torch__.torch.nn.modules.container.Sequential", or with a mangled name part in between
  // ("...container.___torch_mangle_3.Sequential"); not a user's own class called Sequential.
  const std::string prefix = "__torch__.torch.nn.modules.container.";
  const bool sequential =
      type.rfind(prefix, 0) == 0 && type.size() >= prefix.size() + 10 &&
      type.compare(type.size() - 10, 10, "Sequential") == 0 &&
      (type.size() == prefix.size() + 10 || type.compare(prefix.size(), 16, "___torch_mangle_") == 0);
  if (!sequential) {
    throw Error("trainer.strategy=pipeline",
                "the TorchScript module " + source_ + " (" + type +
                    ") cannot be cut into stages: only a scripted torch.nn.Sequential says that its children run "
                    "one after another",
                "Script the model as an nn.Sequential of its pieces (torch.jit.script(nn.Sequential(...)).save(path)), "
                "or train it with trainer.strategy=ddp.");
  }
  std::vector<PipelineUnit> units;
  const auto mirrors = named_children();
  for (const auto& child : scripted_.named_children()) {
    torch::jit::Module piece = child.value;
    units.push_back({child.name, {{child.name, mirrors[child.name]}}, [piece](const at::Tensor& x) mutable {
                       return piece.forward({x}).toTensor();
                     }});
  }
  return units;
}

void TorchScriptModel::check_output_shape(const InputSpec& spec) {
  std::vector<int64_t> batch_shape{2};
  batch_shape.insert(batch_shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
  const bool was_training = is_training();
  at::Tensor output;
  {
    at::NoGradGuard no_grad;
    train(false);
    try {
      // On the parameters' device and dtype, so the check also works after to(device).
      const std::vector<at::Tensor> parameters = this->parameters();
      output =
          forward(parameters.empty() ? at::zeros(batch_shape) : at::zeros(batch_shape, parameters.front().options()));
    } catch (const Error&) {
      train(was_training);
      throw;
    } catch (const std::exception& e) {
      train(was_training);
      throw Error(
          source_,
          "the scripted module fails on a batch of shape " + shape_string(batch_shape) + ": " + torch_message(e),
          "Script a model that takes the data's samples of shape " + shape_string(spec.sample_shape));
    }
    train(was_training);
  }
  const std::vector<int64_t> expected{2, spec.num_classes};
  if (output.sizes().vec() != expected) {
    throw Error(source_,
                "the scripted module returns shape " + shape_string(output.sizes().vec()) + " for a batch of shape " +
                    shape_string(batch_shape) + ", expected " + shape_string(expected) + " (logits for " +
                    std::to_string(spec.num_classes) + " classes)",
                "Script a model whose output has one logit per class of the data");
  }
}

std::shared_ptr<Model> make_torchscript(const config::ConfigView& model_config, const InputSpec& spec) {
  const TorchScriptOptions options = TorchScriptOptions::from_config(model_config, spec);
  std::shared_ptr<TorchScriptModel> model;
  try {
    model = std::make_shared<TorchScriptModel>(options);
  } catch (const Error& e) {
    // Point at the config key that named the file.
    throw Error(option_where(model_config, "path"), e.problem(), e.fix());
  }
  {
    const BufferSnapshot buffers_kept(*model);
    model->check_output_shape(spec);
  }
  return model;
}

}  // namespace trainer::models
