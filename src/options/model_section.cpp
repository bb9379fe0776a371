#include "trainer/options/sections.h"

namespace trainer::options {

namespace {

Option num_classes() {
  return integer("num_classes", "null").at_least(1).or_null().means("output classes (null: the data's)");
}
Option in_channels() {
  return integer("in_channels", "null").at_least(1).or_null().means("input channels (null: the data's)");
}

}  // namespace

// The built-in models (configs/model/). A model registered by a program built on trainer has no
// declaration here, and its section is not checked.
std::vector<Section> model_sections() {
  Section mlp{"model", "mlp", true, "model=mlp: a multilayer perceptron on flattened samples", {}};
  mlp.options = {
      text("name", "mlp").means("the registered model"),
      integer("input_size", "null").at_least(1).or_null().means("inputs per sample (null: the data's sample size)"),
      integers("hidden_sizes", "[256, 128]").at_least(1).means("hidden layer widths"),
      num_classes(),
      number("dropout", "0.2").at_least(0).below(1).means("dropout probability after each hidden layer"),
  };
  Section cnn{"model", "cnn", true, "model=cnn: conv + batch norm + ReLU + max pool blocks and a linear head", {}};
  cnn.options = {
      text("name", "cnn").means("the registered model"),
      in_channels(),
      integers("channels", "[32, 64]").at_least(1).means("channels of each conv block"),
      integer("hidden_size", "128").at_least(1).means("width of the hidden linear layer"),
      num_classes(),
      number("dropout", "0.25").at_least(0).below(1).means("dropout probability before the head"),
  };
  Section resnet{"model", "resnet", true, "model=resnet: ResNet with a small-image stem", {}};
  resnet.options = {
      text("name", "resnet").means("the registered model"),
      choice("depth", "18", {"18", "34", "50", "101", "152"}).means("layers (50 and deeper use bottleneck blocks)"),
      in_channels(),
      integer("width", "64").at_least(1).means("channels of the first stage"),
      num_classes(),
  };
  Section torchscript{
      "model", "torchscript", true, "model=torchscript: a module saved with torch.jit.script(m).save(path)", {}};
  torchscript.options = {
      text("name", "torchscript").means("the registered model"),
      text("path", "???").a_path().means("the saved TorchScript file"),
  };
  torchscript.options.back().mandatory = true;
  Section registered{"model", "*", false, "model=<a registered model>: the model reads its own keys", {}};
  registered.options = {text("name", "???").means("the registered model")};
  return {mlp, cnn, resnet, torchscript, registered};
}

}  // namespace trainer::options
