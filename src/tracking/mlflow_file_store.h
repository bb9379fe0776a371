// MLflow's file store (mlruns/): see mlflow_file_store.cpp for the layout.
#pragma once

#include "trainer/tracking/mlflow_store.h"

namespace trainer::tracking {

class MlflowFileStore final : public MlflowStore {
 public:
  // `root`: the mlruns directory (relative: to the working directory now); `uri` as given.
  MlflowFileStore(std::string root, std::string uri);

  std::string experiment_id(const std::string& name, const std::string& artifact_location) override;
  std::string create_run(const std::string& experiment_id, const std::string& run_name, int64_t start_ms,
                         const MlflowTags& tags) override;
  void log_batch(const std::string& run_id, const std::vector<MlflowMetric>& metrics, const MlflowTags& params,
                 const MlflowTags& tags) override;
  void update_run(const std::string& run_id, MlflowRunStatus status, std::optional<int64_t> end_ms) override;
  std::string uri() const override { return uri_; }

 private:
  std::string run_dir(const std::string& run_id) const;

  std::string root_;
  std::string uri_;
};

}  // namespace trainer::tracking
