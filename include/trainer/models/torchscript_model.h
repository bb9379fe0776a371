// `model=torchscript`: trains a module saved from Python with torch.jit.script(m).save(path).
// The scripted module's parameters and buffers are registered on this wrapper under the names
// Python's state_dict uses ("layer1.0.conv1.weight"), sharing storage, so an optimizer over
// parameters(), to(device) and checkpoints act on the scripted module itself; train()/eval()
// reach the scripted module too. (Tensor attributes that are neither parameters nor buffers are
// not moved by to(device), as in Python.)
#pragma once

#include <string>

#include <torch/csrc/jit/api/module.h>

#include "trainer/config/config_view.h"
#include "trainer/models/model.h"

namespace trainer::models {

struct TorchScriptOptions {
  std::string path;  // relative paths are relative to the working directory

  // Keys: path (mandatory).
  static TorchScriptOptions from_config(const config::ConfigView& model_config, const InputSpec& spec);
};

class TorchScriptModel : public Model {
 public:
  // Loads options.path onto the CPU. Throws trainer::Error naming the path when the file is
  // missing or is not a TorchScript archive this LibTorch can read.
  explicit TorchScriptModel(const TorchScriptOptions& options);
  // Wraps an already loaded (or built) module; `source` only appears in messages.
  explicit TorchScriptModel(torch::jit::Module scripted, std::string source = "<in memory>");

  // Calls the scripted module's forward; it must return one Tensor.
  at::Tensor forward(const at::Tensor& inputs) override;
  // Also sets the scripted module's (and its submodules') `training` flag.
  void train(bool on = true) override;
  std::string describe() const override;
  // A scripted torch.nn.Sequential: one piece per child ("0", "1", ...), run in order. Any other
  // module throws trainer::Error (its forward may not run its children one after another).
  std::vector<PipelineUnit> pipeline_units() override;

  // Runs a zero batch of 2 samples (eval mode, no grad) and checks the logits' shape, so a model
  // saved for other data fails at start-up with a clear message rather than in the loss. The
  // factory calls it; the train/eval mode is restored.
  void check_output_shape(const InputSpec& spec);

  torch::jit::Module& scripted() { return scripted_; }
  const std::string& source() const { return source_; }
  std::string source_fingerprint() const override { return fingerprint_; }

 private:
  void mirror_parameters();

  torch::jit::Module scripted_;
  std::string source_;
  std::string fingerprint_;  // of the file loaded; empty for a module given in memory
};

std::shared_ptr<Model> make_torchscript(const config::ConfigView& model_config, const InputSpec& spec);

}  // namespace trainer::models
