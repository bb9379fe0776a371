// Where metrics go: `logger.<name>` entries in the config (csv, tensorboard, or one a user
// registers). The loop hands every logging event to each logger; values are already on the host
// (read at log intervals and epoch ends only).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/config/registry.h"

namespace trainer::engine {

using MetricRow = std::vector<std::pair<std::string, double>>;

enum class RunEnd { kFinished, kFailed, kInterrupted };

class MetricLogger {
 public:
  virtual ~MetricLogger() = default;
  // One logging event. `epoch` is -1 outside the fit loop (validate/test commands).
  virtual void log_metrics(const MetricRow& metrics, int64_t epoch, int64_t step) = 0;
  // Called at epoch ends and before checkpoints: make what was logged durable.
  virtual void flush() {}
  // Fit starts: afresh (`resumed_step` empty) or from a checkpoint taken at that optimizer step,
  // which kept `saved_state`: what checkpoint_state() returned then (empty when the checkpoint holds
  // none for this logger's name: written without it, or by an older trainer). A logger whose file
  // outlives a run says here what becomes of an earlier attempt's rows.
  virtual void on_fit_start(std::optional<int64_t> resumed_step, const std::string& saved_state) {
    (void)resumed_step;
    (void)saved_state;
  }
  // What a checkpoint keeps of this logger, asked right after flush() as the snapshot is taken.
  virtual std::string checkpoint_state() const { return {}; }
  // The job's resolved config, once, right after the logger is made (Lightning's log_hyperparams).
  virtual void log_hyperparams(const config::ConfigView& root) { (void)root; }
  // The command ended (Lightning's finalize): finished, failed, or stopped by a signal. Never throws.
  virtual void finalize(RunEnd end) { (void)end; }
};

// A logger and its name in the config (`logger.<name>`), under which a checkpoint keeps its state.
struct NamedLogger {
  std::string name;
  std::unique_ptr<MetricLogger> logger;
};

// Builds a logger from its config section (`logger.<name>`) and the run directory.
using LoggerFactory =
    std::function<std::unique_ptr<MetricLogger>(const config::ConfigView& section, const std::string& run_dir)>;

// The process-wide registry, with csv, tensorboard and mlflow added.
config::Registry<LoggerFactory>& logger_registry();

// One logger per entry of the `logger` section (null or missing: none), each handed the root
// config (log_hyperparams). Unknown names throw trainer::Error naming `logger.<name>`.
std::vector<NamedLogger> make_loggers(const config::ConfigView& root, const std::string& run_dir);

}  // namespace trainer::engine

// At namespace scope in a user's program: TRAINER_REGISTER_LOGGER("mine", [](auto& cfg, auto& dir) {...});
#define TRAINER_REGISTER_LOGGER(name, ...) TRAINER_REGISTRY_ADD(::trainer::engine::logger_registry(), name, __VA_ARGS__)
