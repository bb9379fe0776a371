// The training metrics' running sums, kept on the device and read back only when a line is
// logged, an epoch ends or a checkpoint is due; under data parallel a reading is the sum over the
// ranks (one all-reduce).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "trainer/engine/distributed/process_group.h"
#include "trainer/engine/metric_sums.h"

namespace trainer::engine {

// Running sums kept on the device and read back only when a line is logged, an epoch ends or a
// checkpoint is due. A classification step costs five small ops (the loss sum and the argmax
// accuracy), a regression step a few more (the error sums for mae, rmse and r2). A non-finite loss
// needs no counter of its own: it makes the double-precision loss sum non-finite for good. Log
// intervals are differences of two readings, so one meter serves the interval and the epoch.
struct DeviceMeter {
  at::Tensor loss_sum;  // sum of loss x batch size, double
  at::Tensor correct;   // correctly classified samples
  // A regression's sums (double, in the learnt scale): |error|, error^2, target, target^2.
  at::Tensor errors;
  int64_t samples = 0;
  int64_t batches = 0;
  ProcessGroup* group = nullptr;  // data parallel: readings are sums over every rank
  bool regression = false;
  double target_std = 1.0;  // a regression's scale: mae and rmse are reported in the target's units

  // `target_std` set: the outputs regress targets learnt as (value - mean) / target_std.
  void reset(const at::Device& device, ProcessGroup* ranks = nullptr,
             std::optional<double> regression_target_std = std::nullopt);
  // A few small device ops, no host sync. `outputs` are the logits, or a regression's [N] values.
  void add(const at::Tensor& loss, const at::Tensor& outputs, const at::Tensor& targets);
  // The sums (summed over the ranks), and how to read metrics from them.
  struct Reading : MetricSums {
    bool regression = false;
    double target_std = 1.0;
    bool finite() const { return std::isfinite(loss_sum); }
    double loss() const { return samples == 0 ? 0.0 : loss_sum / static_cast<double>(samples); }
    double accuracy() const { return samples == 0 ? 0.0 : correct / static_cast<double>(samples); }
    double mae() const { return samples == 0 ? 0.0 : abs_error / static_cast<double>(samples) * target_std; }
    double rmse() const {
      return samples == 0 ? 0.0 : std::sqrt(squared_error / static_cast<double>(samples)) * target_std;
    }
    // 1 - SSE / SST, as scikit-learn's r2_score (a constant target: 1 when predicted exactly, else 0).
    double r2() const;
    // The metrics beside the loss, by name: acc, or mae, rmse and r2.
    std::vector<std::pair<std::string, double>> metrics() const;
    // What was added between `earlier` and this reading.
    Reading since(const Reading& earlier) const;
  };
  // Continues from `totals` (sums a checkpoint kept, over every rank): `holder` keeps them, every
  // other rank starts from zero, so that readings (sums over the ranks) go on from them.
  void resume_from(const Reading& totals, bool holder);
  // One host transfer for every value (after one all-reduce when data parallel: every rank calls
  // read() at the same points of the loop).
  Reading read() const;
};

}  // namespace trainer::engine
