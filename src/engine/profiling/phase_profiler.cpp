#include "trainer/engine/profiling/phase_profiler.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include <ATen/record_function.h>

#if defined(TRAINER_WITH_CUDA)
// Header-only NVTX 3: without a tool (Nsight Systems) attached, a push/pop is a call through a
// no-op function pointer. Only CUDA builds see it; the CPU build has no CUDA headers.
#include <nvtx3/nvToolsExt.h>
#endif

namespace trainer::engine {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kData:
      return "waiting for data (loader)";
    case Phase::kCopy:
      return "host-to-device copy";
    case Phase::kForward:
      return "forward + loss";
    case Phase::kBackward:
      return "backward";
    case Phase::kAllReduce:
      return "gradient all-reduce (wait after backward)";
    case Phase::kOptimizer:
      return "optimizer step (unscale, clip, step, zero_grad)";
    case Phase::kLogging:
      return "logging";
    case Phase::kValidation:
      return "validation";
    case Phase::kCheckpoint:
      return "checkpoint (snapshot)";
  }
  return "?";
}

const char* phase_range_name(Phase phase) {
  switch (phase) {
    case Phase::kData:
      return "data";
    case Phase::kCopy:
      return "h2d_copy";
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kAllReduce:
      return "all_reduce_wait";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kLogging:
      return "logging";
    case Phase::kValidation:
      return "validation";
    case Phase::kCheckpoint:
      return "checkpoint";
  }
  return "?";
}

PhaseProfiler::PhaseProfiler() = default;
PhaseProfiler::PhaseProfiler(bool table) : table_(table) { update(); }
PhaseProfiler::~PhaseProfiler() = default;
PhaseProfiler::PhaseProfiler(PhaseProfiler&&) noexcept = default;
PhaseProfiler& PhaseProfiler::operator=(PhaseProfiler&&) noexcept = default;

void PhaseProfiler::set_ranges(bool on) {
  ranges_ = on;
  update();
}

bool PhaseProfiler::begin(Phase phase) {
  if (!on_ || depth_ == kMaxDepth) return false;
  Frame& frame = frames_[depth_++];
  frame.phase = phase;
  frame.nested = 0;
  frame.timed = table_;
  frame.nvtx = false;
  if (ranges_) {
    frame.range = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
    if (frame.range->isActive()) frame.range->before(phase_range_name(phase));
#if defined(TRAINER_WITH_CUDA)
    nvtxRangePushA(phase_range_name(phase));
    frame.nvtx = true;
#endif
  }
  if (frame.timed) frame.start = Clock::now();
  return true;
}

void PhaseProfiler::end() {
  Frame& frame = frames_[--depth_];
  if (frame.timed) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - frame.start).count();
    auto& entry = entries_[static_cast<size_t>(frame.phase)];
    ++entry.count;
    entry.total += std::max(0.0, elapsed - frame.nested);
    if (depth_ > 0) frames_[depth_ - 1].nested += elapsed;
  }
  frame.range.reset();  // ends the range (RecordFunction's destructor runs the end callbacks)
#if defined(TRAINER_WITH_CUDA)
  if (frame.nvtx) nvtxRangePop();
#endif
}

std::string PhaseProfiler::table(double fit_seconds) const {
  std::string out = "| phase | count | mean | total | share of fit |\n|---|---:|---:|---:|---:|\n";
  char row[512];
  double accounted = 0;
  const double whole = std::max(fit_seconds, 1e-12);
  for (int i = 0; i < kPhaseCount; ++i) {
    const Entry& e = entries_[static_cast<size_t>(i)];
    const std::string name = e.label.empty() ? phase_name(static_cast<Phase>(i)) : e.label;
    if (e.count == 0) {
      if (!e.note.empty()) out += "| " + name + ": " + e.note + " | | | | |\n";
      continue;
    }
    accounted += e.total;
    std::snprintf(row, sizeof row, "| %s | %lld | %.3f ms | %.3f s | %.1f %% |\n", name.c_str(),
                  static_cast<long long>(e.count), 1e3 * e.total / static_cast<double>(e.count), e.total,
                  100.0 * e.total / whole);
    out += row;
  }
  const double other = std::max(0.0, fit_seconds - accounted);
  std::snprintf(row, sizeof row, "| other (progress bar, callbacks, loop) | | | %.3f s | %.1f %% |\n", other,
                100.0 * other / whole);
  out += row;
  std::snprintf(row, sizeof row, "| fit | | | %.3f s | 100 %% |\n", fit_seconds);
  out += row;
  return out;
}

}  // namespace trainer::engine
