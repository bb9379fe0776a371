// Which training steps trainer.profiler=pytorch records: torch.profiler.schedule's semantics
// (as Lightning's PyTorchProfiler uses them) for one cycle. The first `skip_first` steps are
// ignored, the next `wait` steps run without the profiler, the next `warmup` steps run with it
// prepared but discarding events, the next `active` steps are recorded; then it is off for good.
// Plain C++ so the schedule can be checked without LibTorch.
#pragma once

#include <cstdint>

namespace trainer::engine {

enum class TraceAction { kNone, kWarmup, kRecord };

struct TraceSchedule {
  int64_t skip_first = 0;
  int64_t wait = 1;
  int64_t warmup = 1;
  int64_t active = 3;

  // What to do during step `step` (0-based, counted from fit's first training batch).
  TraceAction action_at(int64_t step) const {
    const int64_t from = step - skip_first - wait;
    if (from < 0) return TraceAction::kNone;
    if (from < warmup) return TraceAction::kWarmup;
    if (from < warmup + active) return TraceAction::kRecord;
    return TraceAction::kNone;
  }
  int64_t first_recorded() const { return skip_first + wait + warmup; }
  int64_t last_recorded() const { return first_recorded() + active - 1; }
};

}  // namespace trainer::engine
