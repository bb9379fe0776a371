#include "trainer/tracking/mlflow_run.h"

#include <algorithm>
#include <chrono>

namespace trainer::tracking {

using namespace std::chrono_literals;

MlflowRun::MlflowRun(MlflowRunOptions options)
    : options_(std::move(options)),
      store_(open_mlflow_store(options_.tracking_uri, "logger.mlflow.tracking_uri", options_.call_timeout_seconds)) {
  if (!options_.warn) options_.warn = [](const std::string&) {};
}

MlflowRun::~MlflowRun() {
  try {
    finish(MlflowRunStatus::kKilled, 5);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor reports through the warning already
  }
}

void MlflowRun::start() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { loop(); });
}

void MlflowRun::log_metrics(const std::vector<std::pair<std::string, double>>& values, int64_t step) {
  start();
  const int64_t now = now_ms();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    for (const auto& [key, value] : values) {
      if (queue_.size() >= options_.queue_limit) {
        ++dropped_;
        continue;
      }
      queue_.push_back({key, value, now, step});
    }
  }
  wake_.notify_one();
}

int64_t MlflowRun::dropped() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

bool MlflowRun::ensure_run() {
  if (!run_id_.empty()) return true;
  if (!options_.run_id.empty()) {
    store_->update_run(options_.run_id, MlflowRunStatus::kRunning, std::nullopt);
    run_id_ = options_.run_id;
  } else {
    experiment_id_ = store_->experiment_id(options_.experiment_name, options_.artifact_location);
    run_id_ = store_->create_run(experiment_id_, options_.run_name, now_ms(), options_.tags);
  }
  if (options_.on_run) options_.on_run(run_id_, experiment_id_);
  return true;
}

void MlflowRun::loop() {
  auto backoff = 1.0;
  size_t params_sent = 0;
  auto last_send = std::chrono::steady_clock::now();
  bool run_refused = false;
  for (;;) {
    std::vector<MlflowMetric> batch;
    std::optional<MlflowRunStatus> finishing;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return abandon_ || finish_status_.has_value() || !queue_.empty() || (run_id_.empty() && !run_refused) ||
               (!run_id_.empty() && params_sent < options_.params.size());
      });
      if (abandon_) break;
      // Metrics wait up to send_interval_seconds to share one request (a loop that logs every step
      // would otherwise send a request a step, and a server on the same machine would take the
      // loop's cores to answer them), unless a batch is full or the run ends.
      if (!run_id_.empty() && params_sent >= options_.params.size() && !finish_status_ &&
          queue_.size() < kMaxBatchMetrics) {
        wake_.wait_until(lock,
                         last_send + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                         std::chrono::duration<double>(options_.send_interval_seconds)),
                         [&] { return abandon_ || finish_status_.has_value() || queue_.size() >= kMaxBatchMetrics; });
        if (abandon_) break;
      }
      finishing = finish_status_;
      const size_t take = std::min(queue_.size(), kMaxBatchMetrics);
      batch.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
    }
    try {
      if (run_refused) {
        // The store refused to make the run: nothing can be logged; drop what comes.
        const std::lock_guard<std::mutex> lock(mutex_);
        dropped_ += static_cast<int64_t>(queue_.size());
        queue_.clear();
        if (finishing) break;
        continue;
      }
      ensure_run();
      if (params_sent < options_.params.size()) {
        const size_t end = std::min(options_.params.size(), params_sent + kMaxBatchParams);
        const MlflowTags params(options_.params.begin() + static_cast<std::ptrdiff_t>(params_sent),
                                options_.params.begin() + static_cast<std::ptrdiff_t>(end));
        store_->log_batch(run_id_, {}, params, {});
        params_sent = end;
        continue;
      }
      if (!batch.empty()) {
        store_->log_batch(run_id_, batch, {}, {});
        last_send = std::chrono::steady_clock::now();
        const std::lock_guard<std::mutex> lock(mutex_);
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(batch.size()));
      } else if (finishing) {
        store_->update_run(run_id_, *finishing, now_ms());
        break;
      }
      if (warned_unreachable_) {
        options_.warn("MLflow: " + store_->uri() + " answers again; the queued metrics are being sent");
        warned_unreachable_ = false;
        const std::lock_guard<std::mutex> lock(mutex_);
        unreachable_ = false;
      }
      backoff = 1.0;
    } catch (const MlflowError& error) {
      if (!error.retryable()) {
        options_.warn(std::string("MLflow: ") + error.what());
        const std::lock_guard<std::mutex> lock(mutex_);
        if (run_id_.empty()) {
          run_refused = true;  // the experiment or run was refused: nothing will be logged
        } else if (params_sent < options_.params.size()) {
          params_sent = options_.params.size();  // refused params: go on with the metrics
        } else if (!batch.empty()) {
          dropped_ += static_cast<int64_t>(batch.size());
          queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(batch.size()));
        } else if (finishing) {
          break;
        }
        continue;
      }
      if (!warned_unreachable_) {
        options_.warn(
            std::string("MLflow: ") + error.what() +
            "; training goes on, metrics are queued and sent once the store takes them (retrying with backoff)");
        warned_unreachable_ = true;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      unreachable_ = true;
      wake_.wait_for(lock, std::chrono::duration<double>(backoff), [&] { return abandon_; });
      if (abandon_) break;
      backoff = std::min(backoff * 2, 30.0);
    } catch (const std::exception& error) {
      options_.warn(std::string("MLflow: ") + error.what());
      break;
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  done_.notify_all();
}

void MlflowRun::finish(MlflowRunStatus status, double wait_seconds) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
  }
  start();
  bool ended = false;
  size_t unsent = 0;
  int64_t dropped = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finish_status_ = status;
    wake_.notify_all();
    // A server that is not answering gets a short last chance, not the whole wait: the job's end
    // is not held up for a tracker that is down.
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      ended = done_.wait_for(lock, 100ms, [&] { return stopped_; });
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (ended || waited >= wait_seconds || (unreachable_ && waited >= std::min(wait_seconds, 3.0))) break;
    }
    if (!ended) abandon_ = true;
    unsent = queue_.size();
    dropped = dropped_;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!ended) {
    options_.warn("MLflow: " + store_->uri() + " did not take the run's last " + std::to_string(unsent) +
                  " metric value(s) in time; the run stays RUNNING there (or was never made)");
  }
  if (dropped > 0) {
    options_.warn("MLflow: " + std::to_string(dropped) +
                  " metric value(s) were dropped (the queue was full, or the store refused them: see the "
                  "warnings above)");
  }
}

}  // namespace trainer::tracking
