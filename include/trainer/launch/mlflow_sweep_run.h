// MLflow's view of a sweep (docs/logging.md): one parent run for the sweep, each job's run its
// child (the tag mlflow.parentRunId). The launcher side makes the parent, the first job to need
// it, under a lock, so it works under every launcher; its record is <sweep>/.sweep/mlflow_parent.yaml.
#pragma once

#include <string>

#include "trainer/config/node.h"
#include "trainer/tracking/mlflow_store.h"

namespace trainer::launch {

// For a job whose resolved config has logger.mlflow: a null run_name becomes the job's name
// ("<sweep dir name>/<job>" in a sweep, else the run directory relative to where trainer runs) and,
// in a sweep,
// the job's run is tagged as the sweep run's child (made now when there is none; an unreachable
// server is a warning, and the job's run is then made on its own).
void prepare_mlflow_job(config::Node& resolved_job, const config::Node& hydra, const std::string& run_dir);

// At a sweep's end, its parent run (if one was made) ends with `status` (FINISHED, FAILED when a job
// failed, KILLED when the sweep was interrupted). Never throws; a server that does not answer is a
// warning.
void end_mlflow_sweep_run(const std::string& sweep_dir, tracking::MlflowRunStatus status);

}  // namespace trainer::launch
