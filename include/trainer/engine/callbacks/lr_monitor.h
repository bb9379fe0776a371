// Lightning's LearningRateMonitor: logs each parameter group's learning rate as `lr-<Optimizer>`
// (`lr-Adam`, `lr-SGD/pg1` for further groups) at every epoch start or every logging step; with
// logging_interval null (or absent), at the scheduler's own interval, as Lightning does.
#pragma once

#include <string>

#include "trainer/engine/callbacks/callback.h"

namespace trainer::engine {

class LearningRateMonitor final : public Callback {
 public:
  // interval: "epoch", "step", or "" (null: follow the scheduler).
  LearningRateMonitor(const std::string& interval, const std::string& where);

  void on_fit_start(FitContext& context) override;
  void on_train_epoch_start(FitContext& context) override;
  void on_log_step(FitContext& context) override;

 private:
  bool follow_scheduler_ = false;
  bool per_step_ = false;
};

}  // namespace trainer::engine
