// logger.mlflow: the job's MLflow run (a tracking server or an mlruns/ file store): the flattened
// config as params, every logged metric, the run's end status. Sent from a background thread
// (tracking/mlflow_run.h), so a slow or absent server never slows the loop.
#pragma once

#include <memory>
#include <string>

#include "trainer/engine/loggers/metric_logger.h"

namespace trainer::engine {

std::unique_ptr<MetricLogger> make_mlflow_logger(const config::ConfigView& section, const std::string& run_dir);

// The record of a job's run, <run_dir>/mlflow_run.yaml (trainer.default_root_dir's when set, made
// if absent): tracking_uri, experiment_id and run_id, so that a resumed fit (ckpt_path) logs to
// the same run.
inline constexpr const char* kMlflowRunRecord = "mlflow_run.yaml";

}  // namespace trainer::engine
