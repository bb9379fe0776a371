// An MLflow tracking server's REST API (2.0), spoken with libcurl.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "trainer/tracking/mlflow_store.h"

namespace trainer::tracking {

class MlflowRestStore final : public MlflowStore {
 public:
  MlflowRestStore(std::string base_url, double timeout_seconds);

  std::string experiment_id(const std::string& name, const std::string& artifact_location) override;
  std::string create_run(const std::string& experiment_id, const std::string& run_name, int64_t start_ms,
                         const MlflowTags& tags) override;
  void log_batch(const std::string& run_id, const std::vector<MlflowMetric>& metrics, const MlflowTags& params,
                 const MlflowTags& tags) override;
  void update_run(const std::string& run_id, MlflowRunStatus status, std::optional<int64_t> end_ms) override;
  std::string uri() const override { return base_url_; }

 private:
  // One call: POST `body` (or GET when `body` is null) to /api/2.0/mlflow/<endpoint>. Returns the
  // answer's JSON; throws MlflowError with the server's error_code and message.
  nlohmann::json call(const std::string& endpoint, const nlohmann::json* body, long* http_status = nullptr);

  std::string base_url_;
  double timeout_seconds_;
};

}  // namespace trainer::tracking
