#include "trainer/options/mlflow_settings.h"

#include <cstdlib>

#include "trainer/config/python_str.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"

namespace trainer::options {

MlflowSettings read_mlflow_settings(const config::ConfigView& section) {
  const OptionReader r(section, {}, std::string("logger.mlflow"));
  (void)r.choice("_target_");  // checked: only the MLFlowLogger's names
  MlflowSettings s;
  s.experiment_name = r.get<std::string>("experiment_name");
  if (s.experiment_name.empty()) {
    throw Error(r.where("experiment_name"), "is empty; MLflow refuses an experiment without a name",
                "Name one (logger.mlflow.experiment_name=my_experiment) or leave the default, lightning_logs.");
  }
  s.run_name = r.get<std::optional<std::string>>("run_name").value_or("");
  s.prefix = r.get<std::string>("prefix");
  s.artifact_location = r.get<std::optional<std::string>>("artifact_location").value_or("");
  s.run_id = r.get<std::optional<std::string>>("run_id").value_or("");
  const std::string save_dir = r.get<std::string>("save_dir");
  if (const auto uri = r.get<std::optional<std::string>>("tracking_uri"); uri && !uri->empty()) {
    s.tracking_uri = *uri;
  } else if (const char* env = std::getenv("MLFLOW_TRACKING_URI"); env != nullptr && *env != '\0') {
    s.tracking_uri = env;
  } else {
    s.tracking_uri = "file:" + save_dir;
  }
  if (r.given("tags")) {
    // Entries, not paths: a tag's name may hold dots (mlflow.parentRunId).
    for (const auto& entry : section.node("tags").entries()) {
      s.tags.emplace_back(entry.key, config::python_str(entry.value));
    }
  }
  return s;
}

}  // namespace trainer::options
