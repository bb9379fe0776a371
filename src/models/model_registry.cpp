#include "trainer/models/model_registry.h"

#include <utility>

#include "trainer/config/did_you_mean.h"
#include "trainer/models/cnn.h"
#include "trainer/models/mlp.h"
#include "trainer/models/option_reading.h"
#include "trainer/models/resnet.h"
#include "trainer/models/torchscript_model.h"
#include "trainer/util/error.h"

namespace trainer::models {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

void register_builtin_models(ModelRegistry& registry) {
  registry.add("mlp", make_mlp);
  registry.add("cnn", make_cnn);
  registry.add("resnet", make_resnet);
  registry.add("torchscript", make_torchscript);
}

ModelRegistry& ModelRegistry::global() {
  // Built-ins are added here rather than by static registrars: the linker drops unreferenced
  // objects of a static library, and their registrars with them.
  static ModelRegistry* registry = [] {
    // Never destroyed, so a user's static objects may still use it while statics are torn down.
    auto* created = new ModelRegistry();
    register_builtin_models(*created);
    return created;
  }();
  return *registry;
}

void ModelRegistry::add(const std::string& name, ModelFactory factory) {
  if (name.empty()) {
    throw Error("ModelRegistry::add", "a model name must not be empty", "Give the model a name");
  }
  if (!factory) {
    throw Error("ModelRegistry::add", "the factory for model '" + name + "' is empty",
                "Pass a function that builds the model");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!factories_.emplace(name, std::move(factory)).second) {
    throw Error("ModelRegistry::add", "a model named '" + name + "' is already registered",
                "Register your model under another name");
  }
}

std::shared_ptr<Model> ModelRegistry::create(const config::ConfigView& model_config,
                                             const InputSpec& spec) const {
  const std::string name = model_config.get<std::string>("name");
  ModelFactory factory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = factories_.find(name);
    if (found != factories_.end()) factory = found->second;
  }
  if (!factory) {
    const std::vector<std::string> known = names();
    const std::string suggestion = config::did_you_mean(name, known);
    throw Error(option_where(model_config, "name"), "unknown model '" + name + "'",
                (suggestion.empty() ? std::string() : suggestion + " ") + "Known models: " +
                    joined(known) + ". Your own models need TRAINER_REGISTER_MODEL in your binary");
  }
  std::shared_ptr<Model> model = factory(model_config, spec);
  if (!model) {
    throw Error(option_where(model_config, "name"),
                "the factory of model '" + name + "' returned no model",
                "Make the factory return the model it builds");
  }
  return model;
}

bool ModelRegistry::contains(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return factories_.count(name) > 0;
}

std::vector<std::string> ModelRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& entry : factories_) out.push_back(entry.first);
  return out;
}

}  // namespace trainer::models
