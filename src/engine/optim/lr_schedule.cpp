#include "trainer/engine/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

constexpr double kPi = 3.14159265358979323846;

double cosine(double start, double end, double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  return end + (start - end) * (1.0 + std::cos(kPi * fraction)) / 2.0;
}

// PyTorch's CosineAnnealingLR: past T_max the rate rises again along the same cosine (its period
// is 2 T_max); it is not held at eta_min.
double periodic_cosine(double start, double end, double fraction) {
  return end + (start - end) * (1.0 + std::cos(kPi * fraction)) / 2.0;
}

}  // namespace

LrSchedule::LrSchedule(SchedulerOptions options, double base_lr, int64_t total_steps)
    : options_(std::move(options)), base_lr_(base_lr), total_steps_(std::max<int64_t>(1, total_steps)) {}

double LrSchedule::lr_at(int64_t count) const {
  const double t = static_cast<double>(count);
  const ScheduleKind n = options_.kind;
  if (n == ScheduleKind::kStep) {
    return base_lr_ *
           std::pow(options_.gamma, std::floor(t / static_cast<double>(std::max<int64_t>(1, options_.step_size))));
  }
  if (n == ScheduleKind::kCosine) {
    double horizon = options_.t_max > 0 ? options_.t_max : static_cast<double>(total_steps_);
    return periodic_cosine(base_lr_, options_.eta_min, t / horizon);
  }
  if (n == ScheduleKind::kWarmupCosine) {
    const double warmup = static_cast<double>(options_.warmup_steps);
    if (t < warmup) return base_lr_ * (t + 1.0) / warmup;
    double rest = std::max(1.0, static_cast<double>(total_steps_) - warmup);
    return cosine(base_lr_, options_.eta_min, (t - warmup) / rest);
  }
  if (n == ScheduleKind::kOneCycle) {
    // PyTorch's OneCycleLR with cosine annealing (two phases).
    const double initial = options_.max_lr / options_.div_factor;
    const double final_lr = initial / options_.final_div_factor;
    const double up = options_.pct_start * static_cast<double>(total_steps_) - 1.0;
    const double down = static_cast<double>(total_steps_) - 1.0;
    if (t <= up) return cosine(initial, options_.max_lr, up > 0 ? t / up : 1.0);
    return cosine(options_.max_lr, final_lr, (t - up) / std::max(1.0, down - up));
  }
  return base_lr_;
}

std::optional<double> LrSchedule::momentum_at(int64_t count) const {
  if (options_.kind != ScheduleKind::kOneCycle || !options_.cycle_momentum) return std::nullopt;
  // OneCycleLR's momentum: the rate's phases, from max_momentum to base_momentum and back.
  const double t = static_cast<double>(count);
  const double up = options_.pct_start * static_cast<double>(total_steps_) - 1.0;
  const double down = static_cast<double>(total_steps_) - 1.0;
  if (t <= up) return cosine(options_.max_momentum, options_.base_momentum, up > 0 ? t / up : 1.0);
  return cosine(options_.base_momentum, options_.max_momentum, (t - up) / std::max(1.0, down - up));
}

}  // namespace trainer::engine
