// Callbacks: `callbacks.<name>` entries in the config (early_stopping, lr_monitor, or one a user
// registers; model_checkpoint is part of the loop itself). Hooks run at logging steps and epoch
// ends only, with metrics already on the host, so a callback never adds a device sync.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/config/registry.h"
#include "trainer/engine/loggers/metric_logger.h"

namespace trainer::engine {

// What the loop shows a callback, and what a callback may ask of it.
class FitContext {
 public:
  virtual ~FitContext() = default;
  virtual int64_t epoch() const = 0;        // the epoch in progress
  virtual int64_t global_step() const = 0;  // optimizer steps taken
  virtual int64_t min_epochs() const = 0;
  // (name, learning rate) per optimizer parameter group, e.g. ("lr-Adam", 1e-3).
  virtual std::vector<std::pair<std::string, double>> learning_rates() const = 0;
  // Whether the learning-rate scheduler steps after every optimizer step (interval: step).
  virtual bool lr_changes_per_step() const { return false; }
  // The CUDA device index this process trains on; -1 on the CPU.
  virtual int cuda_device() const { return -1; }
  // Sends metrics to every logger at the current epoch and step.
  virtual void log(const MetricRow& metrics) = 0;
  // Ends fit after this epoch (or right after a validation inside the epoch); `reason` is logged.
  virtual void request_stop(const std::string& reason) = 0;
};

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_fit_start(FitContext&) {}
  virtual void on_train_epoch_start(FitContext&) {}
  // Every `trainer.log_every_n_steps` optimizer steps.
  virtual void on_log_step(FitContext&) {}
  // After the epoch's training and validation, with everything logged for it (train/loss_epoch,
  // val/acc, ...). `validated` says whether validation ran this epoch.
  virtual void on_epoch_end(FitContext&, const std::map<std::string, double>& metrics, bool validated) {
    (void)metrics;
    (void)validated;
  }
  // After a validation inside an epoch (trainer.val_check_interval below one epoch), with its
  // val/* metrics. The validation at an epoch's end is reported through on_epoch_end instead.
  virtual void on_validation_end(FitContext&, const std::map<std::string, double>& metrics) { (void)metrics; }
  // Saved in checkpoints under the callback's config name and handed back on resume.
  virtual std::string state() const { return ""; }
  virtual void load_state(const std::string&) {}
};

// Builds a callback from its config section (`callbacks.<name>`).
using CallbackFactory = std::function<std::unique_ptr<Callback>(const config::ConfigView& section)>;

// The process-wide registry, with early_stopping, lr_monitor and device_stats_monitor added.
config::Registry<CallbackFactory>& callback_registry();

struct NamedCallback {
  std::string name;
  std::unique_ptr<Callback> callback;
};

// One callback per entry of the `callbacks` section except model_checkpoint (null entries are
// off). Unknown names throw trainer::Error naming `callbacks.<name>`.
std::vector<NamedCallback> make_callbacks(const config::ConfigView& root);

}  // namespace trainer::engine

// At namespace scope in a user's program: TRAINER_REGISTER_CALLBACK("mine", [](auto& cfg) {...});
#define TRAINER_REGISTER_CALLBACK(name, ...) \
  TRAINER_REGISTRY_ADD(::trainer::engine::callback_registry(), name, __VA_ARGS__)
