#include "trainer/engine/profiling/flops_throughput.h"

#include <cstdio>

#include "trainer/engine/profiling/flop_counter.h"

namespace trainer::engine {

double FlopsThroughput::flops_per_sec(int64_t samples, double seconds) const {
  return seconds > 0 ? flops_per_sample * static_cast<double>(samples) / seconds : 0.0;
}

void FlopsThroughput::add_to(MetricRow& row, int64_t samples, double seconds) const {
  if (flops_per_sample <= 0) return;
  const double achieved = flops_per_sec(samples, seconds);
  row.push_back({"flops_per_sec", achieved});
  if (peak_flops > 0) row.push_back({"mfu", achieved / peak_flops});
}

std::string FlopsThroughput::text(int64_t samples, double seconds) const {
  if (flops_per_sample <= 0) return "";
  const double achieved = flops_per_sec(samples, seconds);
  std::string out = " " + flops_text(achieved, "/s");
  if (peak_flops > 0) {
    char mfu[32];
    std::snprintf(mfu, sizeof mfu, " MFU %.1f %%", 100.0 * achieved / peak_flops);
    out += mfu;
  }
  return out;
}

}  // namespace trainer::engine
