#include "trainer/models/model_registry.h"

#include <utility>

#include "trainer/models/cnn.h"
#include "trainer/models/mlp.h"
#include "trainer/models/option_reading.h"
#include "trainer/models/resnet.h"
#include "trainer/models/torchscript_model.h"
#include "trainer/util/error.h"

namespace trainer::models {

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

std::shared_ptr<Model> ModelRegistry::create(const config::ConfigView& model_config, const InputSpec& spec) const {
  const std::string name = model_config.get<std::string>("name");
  const ModelFactory factory = get(name, option_where(model_config, "name"));
  std::shared_ptr<Model> model = factory(model_config, spec);
  if (!model) {
    throw Error(option_where(model_config, "name"), "the factory of model '" + name + "' returned no model",
                "Make the factory return the model it builds");
  }
  return model;
}

}  // namespace trainer::models
