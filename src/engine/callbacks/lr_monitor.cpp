#include "trainer/engine/callbacks/lr_monitor.h"

#include "trainer/util/error.h"

namespace trainer::engine {

LearningRateMonitor::LearningRateMonitor(const std::string& interval, const std::string& where) {
  if (interval != "epoch" && interval != "step" && !interval.empty()) {
    throw Error(where, "logging_interval must be epoch, step or null, not '" + interval + "'",
                "Use logging_interval: epoch (once per epoch), step (every log_every_n_steps) or null (as the "
                "scheduler steps).");
  }
  follow_scheduler_ = interval.empty();
  per_step_ = interval == "step";
}

void LearningRateMonitor::on_fit_start(FitContext& context) {
  if (follow_scheduler_) per_step_ = context.lr_changes_per_step();
}

void LearningRateMonitor::on_train_epoch_start(FitContext& context) {
  if (!per_step_) context.log(context.learning_rates());
}

void LearningRateMonitor::on_log_step(FitContext& context) {
  if (per_step_) context.log(context.learning_rates());
}

}  // namespace trainer::engine
