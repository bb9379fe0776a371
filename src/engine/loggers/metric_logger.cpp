#include "trainer/engine/loggers/metric_logger.h"

#include "trainer/engine/loggers/metrics_csv.h"
#include "trainer/engine/loggers/mlflow_logger.h"
#include "trainer/engine/loggers/tensorboard_logger.h"
#include "trainer/options/option_reader.h"

namespace trainer::engine {

config::Registry<LoggerFactory>& logger_registry() {
  // Never destroyed: a user's static registrations may run before or after ours.
  static auto* registry = [] {
    auto* created = new config::Registry<LoggerFactory>("logger", "TRAINER_REGISTER_LOGGER");
    created->add("csv", [](const config::ConfigView& section, const std::string& run_dir) {
      const options::OptionReader r(section);
      const std::string dir = r.get_or<std::string>("save_dir", run_dir);
      const std::string name = r.get<std::string>("name");
      return std::unique_ptr<MetricLogger>(std::make_unique<MetricsCsv>(dir + "/" + name, run_dir));
    });
    created->add("tensorboard", make_tensorboard_logger);
    created->add("mlflow", make_mlflow_logger);
    return created;
  }();
  return *registry;
}

std::vector<NamedLogger> make_loggers(const config::ConfigView& root, const std::string& run_dir) {
  std::vector<NamedLogger> loggers;
  if (!root.has("logger") || root.node("logger").is_null()) return loggers;
  config::ConfigView section = root.sub("logger");
  for (const std::string& name : section.keys()) {
    if (section.node(name).is_null()) continue;  // `logger.tensorboard: null` switches one off
    LoggerFactory factory = logger_registry().get(name, "logger." + name);
    loggers.push_back({name, factory(section.sub(name), run_dir)});
    loggers.back().logger->log_hyperparams(root);
  }
  return loggers;
}

}  // namespace trainer::engine
