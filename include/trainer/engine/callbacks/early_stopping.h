// Lightning's EarlyStopping: stop when the monitored metric has not improved by more than
// `min_delta` for `patience` checks, is not finite (`check_finite`), reaches
// `stopping_threshold`, or passes `divergence_threshold`. Checked at epoch ends where the metric
// exists; a monitored val/* metric is checked only in epochs that validate.
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "trainer/engine/callbacks/callback.h"

namespace trainer::engine {

struct EarlyStoppingOptions {
  std::string monitor = "val/loss";
  bool mode_max = false;
  int64_t patience = 3;
  double min_delta = 0.0;
  bool check_finite = true;
  std::optional<double> stopping_threshold;
  std::optional<double> divergence_threshold;

  static EarlyStoppingOptions from_config(const config::ConfigView& section);
};

class EarlyStopping final : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options);

  void on_epoch_end(FitContext& context, const std::map<std::string, double>& metrics, bool validated) override;
  // Validations inside an epoch are checked as they happen, as Lightning does.
  void on_validation_end(FitContext& context, const std::map<std::string, double>& metrics) override;
  std::string state() const override;
  void load_state(const std::string& text) override;

  double best() const { return best_; }
  int64_t wait() const { return wait_; }

 private:
  // The reason to stop after seeing `current`, or "" to go on; updates best/wait.
  std::string evaluate(double current);

  EarlyStoppingOptions options_;
  double best_;
  int64_t wait_ = 0;
};

}  // namespace trainer::engine
