// Where MLflow runs are recorded: a tracking server's REST API (http://, https://) or the file
// store layout (`mlruns/`) that MLflow's own client and UI read (file:, or a plain path). Both
// take the same calls: find or make an experiment, make a run, log batches of metrics, params and
// tags, set the run's status. Torch-free: the launcher makes a sweep's parent run with it, the
// engine's mlflow logger everything else (docs/logging.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainer/util/error.h"

namespace trainer::tracking {

struct MlflowMetric {
  std::string key;
  double value = 0;
  int64_t timestamp_ms = 0;
  int64_t step = 0;
};

using MlflowTags = std::vector<std::pair<std::string, std::string>>;

// MLflow's RunStatus names: RUNNING, FINISHED, FAILED, KILLED.
enum class MlflowRunStatus { kRunning, kFinished, kFailed, kKilled };
const char* status_name(MlflowRunStatus status);

// A call the store refused or could not take. `retryable`: the server was unreachable, timed out
// or answered 5xx/429 (worth trying again later); otherwise it refused the request itself.
class MlflowError : public Error {
 public:
  MlflowError(std::string where, std::string problem, std::string fix, bool retryable)
      : Error(std::move(where), std::move(problem), std::move(fix)), retryable_(retryable) {}
  bool retryable() const { return retryable_; }

 private:
  bool retryable_;
};

// MLflow's per-call limits (log-batch): 1000 metrics, 100 params, 100 tags.
inline constexpr size_t kMaxBatchMetrics = 1000;
inline constexpr size_t kMaxBatchParams = 100;
inline constexpr size_t kMaxBatchTags = 100;
// A param value longer than this many characters is cut (MLflow 2.x and 3.x refuse longer ones).
inline constexpr size_t kMaxParamValue = 6000;
// Param, tag and metric names longer than this are refused by MLflow.
inline constexpr size_t kMaxKeyLength = 250;

// `value` cut to kMaxParamValue characters (UTF-8 code points, never inside one), ending "..."
// when cut; invalid UTF-8 bytes become U+FFFD.
std::string cut_param_value(const std::string& value);

class MlflowStore {
 public:
  virtual ~MlflowStore() = default;
  // The experiment of that name, made (with `artifact_location`, when not empty) when there is none.
  virtual std::string experiment_id(const std::string& name, const std::string& artifact_location) = 0;
  // A new RUNNING run; returns its id.
  virtual std::string create_run(const std::string& experiment_id, const std::string& run_name, int64_t start_ms,
                                 const MlflowTags& tags) = 0;
  // Within the limits above.
  virtual void log_batch(const std::string& run_id, const std::vector<MlflowMetric>& metrics, const MlflowTags& params,
                         const MlflowTags& tags) = 0;
  // `end_ms` for a run that ended (nullopt: RUNNING again, a resumed run).
  virtual void update_run(const std::string& run_id, MlflowRunStatus status, std::optional<int64_t> end_ms) = 0;
  // The tracking URI, for messages.
  virtual std::string uri() const = 0;
};

// The directory a file store at `tracking_uri` writes (file:<path>, file://<path> or a plain path,
// relative to the working directory): the URI without its scheme. Not for http(s) URIs.
std::string file_store_path(const std::string& tracking_uri);

// http:// or https:// -> the REST store; file:<path>, file://<path> or a plain path -> the file
// store rooted there (relative to the working directory). `timeout_seconds` bounds each REST call.
// Throws trainer::Error naming `where` for a URI of another scheme (databricks, sqlite, ...).
std::unique_ptr<MlflowStore> open_mlflow_store(const std::string& tracking_uri, const std::string& where,
                                               double timeout_seconds = 10);

// Milliseconds since 1970, MLflow's timestamps.
int64_t now_ms();

// The small records trainer keeps beside runs (<run dir>/mlflow_run.yaml, a sweep's
// .sweep/mlflow_parent.yaml): `key: value` lines, values as written (ids and URIs, no quoting).
std::string run_record(const MlflowTags& fields);
// A field of such a record ("" when absent).
std::string run_record_field(const std::string& text, const std::string& key);

}  // namespace trainer::tracking
