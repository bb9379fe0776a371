// One MLflow run fed from a training loop without ever slowing it: metrics are queued (bounded;
// when full, dropped and counted) and a background thread makes the experiment and the run, logs
// the params and tags, then the metrics in batches (at most one request a second while the run
// goes, unless 1000 values are waiting), retrying an unreachable or failing server with
// backoff (1 s doubling to 30 s). A server that never answers costs the loop nothing but a warning.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "trainer/tracking/mlflow_store.h"

namespace trainer::tracking {

struct MlflowRunOptions {
  std::string tracking_uri;
  std::string experiment_name = "lightning_logs";
  std::string run_name;
  std::string artifact_location;
  std::string run_id;  // an existing run to log to (made RUNNING again), or empty: a new run
  MlflowTags tags;
  MlflowTags params;
  size_t queue_limit = 100000;  // metric values waiting to be sent
  double call_timeout_seconds = 10;
  // Metrics logged within this long of the last request go out together in the next one.
  double send_interval_seconds = 1;
  // Called on the logging thread with the run's id once it exists (to record it for a resume).
  std::function<void(const std::string& run_id, const std::string& experiment_id)> on_run;
  std::function<void(const std::string& message)> warn;
};

class MlflowRun {
 public:
  // Opens the store (throws trainer::Error for a URI trainer cannot log to); sends nothing yet.
  explicit MlflowRun(MlflowRunOptions options);
  ~MlflowRun();  // finish(kKilled, 5 s) if finish() was not called
  MlflowRun(const MlflowRun&) = delete;
  MlflowRun& operator=(const MlflowRun&) = delete;

  // Starts the thread (the first call of any method below does).
  void start();
  // Queues the values (never blocks on the network).
  void log_metrics(const std::vector<std::pair<std::string, double>>& values, int64_t step);
  // Sends what is queued, sets the run's status and end time, and stops the thread; waits at most
  // `wait_seconds` for that (3 s when the store is unreachable just then), then says in a warning
  // what was not sent. Later calls do nothing.
  void finish(MlflowRunStatus status, double wait_seconds);

  int64_t dropped() const;

 private:
  void loop();
  bool ensure_run();  // the run exists (made now if not); false while the store is unreachable

  MlflowRunOptions options_;
  std::unique_ptr<MlflowStore> store_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<MlflowMetric> queue_;
  int64_t dropped_ = 0;
  std::optional<MlflowRunStatus> finish_status_;
  bool abandon_ = false, stopped_ = false, started_ = false, finished_ = false;
  std::string run_id_, experiment_id_;
  bool warned_unreachable_ = false;  // the logging thread's own
  bool unreachable_ = false;         // the last call could not reach the store (guarded by mutex_)
};

}  // namespace trainer::tracking
