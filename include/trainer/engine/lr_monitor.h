// Lightning's LearningRateMonitor: logs each parameter group's learning rate as `lr-<Optimizer>`
// (`lr-Adam`, `lr-SGD/pg1` for further groups) at every epoch start or every logging step.
#pragma once

#include <string>

#include "trainer/engine/callback.h"

namespace trainer::engine {

class LearningRateMonitor final : public Callback {
 public:
  // interval: "epoch" or "step" (null in Lightning means both follow the scheduler; we take epoch).
  LearningRateMonitor(const std::string& interval, const std::string& where);

  void on_train_epoch_start(FitContext& context) override;
  void on_log_step(FitContext& context) override;

 private:
  bool per_step_ = false;
};

}  // namespace trainer::engine
