#include "trainer/engine/phase_profiler.h"

#include <algorithm>
#include <cstdio>

namespace trainer::engine {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kData: return "waiting for data (loader, host-to-device copy)";
    case Phase::kForward: return "forward + loss";
    case Phase::kBackward: return "backward";
    case Phase::kAllReduce: return "gradient all-reduce (wait after backward)";
    case Phase::kOptimizer: return "optimizer step (unscale, clip, step, zero_grad)";
    case Phase::kLogging: return "logging";
    case Phase::kValidation: return "validation";
    case Phase::kCheckpoint: return "checkpoint (snapshot)";
  }
  return "?";
}

std::string PhaseProfiler::table(double fit_seconds) const {
  std::string out = "| phase | count | mean | total | share of fit |\n|---|---:|---:|---:|---:|\n";
  char row[256];
  double accounted = 0;
  const double whole = std::max(fit_seconds, 1e-12);
  for (int i = 0; i < kPhaseCount; ++i) {
    const Entry& e = entries_[static_cast<size_t>(i)];
    if (e.count == 0) continue;
    accounted += e.total;
    std::snprintf(row, sizeof row, "| %s | %lld | %.3f ms | %.3f s | %.1f %% |\n", phase_name(static_cast<Phase>(i)),
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
