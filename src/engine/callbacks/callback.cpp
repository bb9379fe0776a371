#include "trainer/engine/callbacks/callback.h"

#include "trainer/engine/callbacks/device_stats_monitor.h"
#include "trainer/engine/callbacks/early_stopping.h"
#include "trainer/engine/callbacks/lr_monitor.h"
#include "trainer/options/option_reader.h"

namespace trainer::engine {

config::Registry<CallbackFactory>& callback_registry() {
  // Never destroyed: a user's static registrations may run before or after ours.
  static auto* registry = [] {
    auto* created = new config::Registry<CallbackFactory>("callback", "TRAINER_REGISTER_CALLBACK");
    created->add("early_stopping", [](const config::ConfigView& section) {
      return std::unique_ptr<Callback>(std::make_unique<EarlyStopping>(EarlyStoppingOptions::from_config(section)));
    });
    created->add("lr_monitor", [](const config::ConfigView& section) {
      const options::OptionReader r(section);
      return std::unique_ptr<Callback>(
          std::make_unique<LearningRateMonitor>(r.choice("logging_interval"), r.where("logging_interval")));
    });
    created->add("device_stats_monitor", [](const config::ConfigView& section) {
      return std::unique_ptr<Callback>(std::make_unique<DeviceStatsMonitor>(DeviceStatsOptions::from_config(section)));
    });
    return created;
  }();
  return *registry;
}

std::vector<NamedCallback> make_callbacks(const config::ConfigView& root) {
  std::vector<NamedCallback> callbacks;
  if (!root.has("callbacks") || root.node("callbacks").is_null()) return callbacks;
  config::ConfigView section = root.sub("callbacks");
  for (const std::string& name : section.keys()) {
    if (name == "model_checkpoint" || section.node(name).is_null()) continue;
    CallbackFactory factory = callback_registry().get(name, "callbacks." + name);
    callbacks.push_back({name, factory(section.sub(name))});
  }
  return callbacks;
}

}  // namespace trainer::engine
