// Models by name: `model.name` in the config picks a factory registered here. The built-ins (mlp,
// cnn, resnet, torchscript) are added inside global() on first use; users add their own from their
// binary with TRAINER_REGISTER_MODEL("mymodel", factory) so that `model=mymodel` works.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "trainer/config/config_view.h"
#include "trainer/config/registry.h"
#include "trainer/models/model.h"

namespace trainer::models {

// Builds a model from its config node (the `model` section) and the data's shape. Throws
// trainer::Error naming the config path on bad options.
using ModelFactory =
    std::function<std::shared_ptr<Model>(const config::ConfigView& model_config, const InputSpec& spec)>;

// config::Registry (the one registry template) plus create(), which reads `name` and checks the
// factory's result.
class ModelRegistry : public config::Registry<ModelFactory> {
 public:
  ModelRegistry() : Registry("model", "TRAINER_REGISTER_MODEL") {}

  // The process-wide registry, with the built-in models already added.
  static ModelRegistry& global();

  // Reads `name` from `model_config` and calls that factory. An unknown name throws
  // trainer::Error listing the known names with a did-you-mean suggestion.
  std::shared_ptr<Model> create(const config::ConfigView& model_config, const InputSpec& spec) const;
};

// The built-ins, also usable without the registry.
void register_builtin_models(ModelRegistry& registry);

}  // namespace trainer::models

// At namespace scope in a user's binary (not in a static library, whose unreferenced objects the
// linker drops): TRAINER_REGISTER_MODEL("mymodel", [](const auto& cfg, const auto& spec) {...});
#define TRAINER_REGISTER_MODEL(name, ...) \
  TRAINER_REGISTRY_ADD(::trainer::models::ModelRegistry::global(), name, __VA_ARGS__)
