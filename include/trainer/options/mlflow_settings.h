// logger.mlflow read once, for the two places that act on it: the engine's mlflow logger (the
// job's run) and the launcher (a sweep's parent run, the run name and parent tag it hands the job).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "trainer/config/config_view.h"

namespace trainer::options {

struct MlflowSettings {
  std::string tracking_uri;  // resolved: the key, else $MLFLOW_TRACKING_URI, else "file:" + save_dir
  std::string experiment_name;
  std::string run_name;  // empty: the caller names the run
  std::string prefix;
  std::string artifact_location;
  std::string run_id;
  std::vector<std::pair<std::string, std::string>> tags;  // values as Python's str() gives them
};

// `section` is the logger.mlflow view. Throws trainer::Error naming the key.
MlflowSettings read_mlflow_settings(const config::ConfigView& section);

}  // namespace trainer::options
