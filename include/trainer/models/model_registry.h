// Models by name: `model.name` in the config picks a factory registered here. The built-ins (mlp,
// cnn, resnet, torchscript) are added inside global() on first use; users add their own from their
// binary with TRAINER_REGISTER_MODEL("mymodel", factory) so that `model=mymodel` works.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/models/model.h"

namespace trainer::models {

// Builds a model from its config node (the `model` section) and the data's shape. Throws
// trainer::Error naming the config path on bad options.
using ModelFactory = std::function<std::shared_ptr<Model>(const config::ConfigView& model_config,
                                                          const InputSpec& spec)>;

class ModelRegistry {
 public:
  // The process-wide registry, with the built-in models already added.
  static ModelRegistry& global();

  // Throws trainer::Error when `name` is taken or empty, or `factory` is empty.
  void add(const std::string& name, ModelFactory factory);

  // Reads `name` from `model_config` and calls that factory. An unknown name throws
  // trainer::Error listing the known names with a did-you-mean suggestion.
  std::shared_ptr<Model> create(const config::ConfigView& model_config,
                                const InputSpec& spec) const;

  bool contains(const std::string& name) const;
  // Sorted.
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mutex_;  // users may register from static initialisers of several files
  std::map<std::string, ModelFactory> factories_;
};

// The built-ins, also usable without the registry.
void register_builtin_models(ModelRegistry& registry);

}  // namespace trainer::models

#define TRAINER_MODELS_CONCAT_INNER(a, b) a##b
#define TRAINER_MODELS_CONCAT(a, b) TRAINER_MODELS_CONCAT_INNER(a, b)

// At namespace scope in a user's binary (not in a static library, whose unreferenced objects the
// linker drops): TRAINER_REGISTER_MODEL("mymodel", [](const auto& cfg, const auto& spec) {...});
#define TRAINER_REGISTER_MODEL(name, factory)                                        \
  [[maybe_unused]] static const bool TRAINER_MODELS_CONCAT(trainer_model_registered_, \
                                                           __LINE__) =               \
      (::trainer::models::ModelRegistry::global().add((name), (factory)), true)
