// Learning-rate schedules as pure functions of a step or epoch count, so a resumed run only needs
// the count to continue exactly: step, cosine, warmup_cosine, onecycle (PyTorch's formulas).
#pragma once

#include <cstdint>
#include <optional>

#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

class LrSchedule {
 public:
  // total_steps: how many times the schedule will advance in this run (optimizer steps for
  // interval=step, epochs for interval=epoch): the horizon of onecycle, warmup_cosine and t_max<=0.
  LrSchedule(SchedulerOptions options, double base_lr, int64_t total_steps);

  bool per_step() const { return options_.per_step; }
  bool active() const { return options_.kind != ScheduleKind::kNone; }
  // The learning rate after `count` scheduler steps (epochs or optimizer steps).
  double lr_at(int64_t count) const;
  // The momentum (SGD's momentum, Adam's beta1) after `count` steps when the schedule sets it
  // (onecycle with cycle_momentum), else none.
  std::optional<double> momentum_at(int64_t count) const;

 private:
  SchedulerOptions options_;
  double base_lr_;
  int64_t total_steps_;
};

}  // namespace trainer::engine
