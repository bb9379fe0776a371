#include "trainer/engine/device_meter.h"

#include <torch/utils.h>

namespace trainer::engine {

void DeviceMeter::reset(const at::Device& device, ProcessGroup* ranks, std::optional<double> regression_target_std) {
  const auto doubles = at::TensorOptions().dtype(at::kDouble).device(device);
  loss_sum = at::zeros({}, doubles);
  correct = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device));
  errors = at::zeros({4}, doubles);
  samples = 0;
  batches = 0;
  group = ranks;
  regression = regression_target_std.has_value();
  target_std = regression_target_std.value_or(1.0);
}

void DeviceMeter::add(const at::Tensor& loss, const at::Tensor& outputs, const at::Tensor& targets) {
  const int64_t n = targets.size(0);
  torch::NoGradGuard no_grad;
  loss_sum.add_(loss, static_cast<double>(n));
  if (regression) {
    const at::Tensor y = targets.to(at::kDouble);
    const at::Tensor error = outputs.reshape({-1}).to(at::kDouble) - y;
    errors.add_(at::stack({error.abs().sum(), error.square().sum(), y.sum(), y.square().sum()}));
  } else {
    correct.add_(outputs.argmax(1).eq(targets).sum());
  }
  samples += n;
  ++batches;
}

void DeviceMeter::resume_from(const Reading& totals, bool holder) {
  if (!holder) return;
  loss_sum.fill_(totals.loss_sum);
  correct.fill_(static_cast<int64_t>(totals.correct));
  errors.copy_(at::tensor({totals.abs_error, totals.squared_error, totals.target_sum, totals.target_squares},
                          at::TensorOptions().dtype(at::kDouble)));
  samples = totals.samples;
  batches = totals.batches;
}

DeviceMeter::Reading DeviceMeter::read() const {
  Reading reading;
  reading.regression = regression;
  reading.target_std = target_std;
  if (group == nullptr && samples == 0) return reading;
  at::Tensor all = at::cat(
      {at::stack({loss_sum, correct.to(at::kDouble)}), errors,
       at::tensor({static_cast<double>(samples), static_cast<double>(batches)}, at::TensorOptions().dtype(at::kDouble))
           .to(loss_sum.device())});
  if (group != nullptr) group->allreduce_sum(all, "metric reduction");
  all = all.cpu();
  const double* v = all.data_ptr<double>();
  reading.loss_sum = v[0];
  reading.correct = v[1];
  reading.abs_error = v[2];
  reading.squared_error = v[3];
  reading.target_sum = v[4];
  reading.target_squares = v[5];
  reading.samples = static_cast<int64_t>(v[6]);
  reading.batches = static_cast<int64_t>(v[7]);
  return reading;
}

double DeviceMeter::Reading::r2() const {
  if (samples == 0) return 0.0;
  const double n = static_cast<double>(samples);
  const double total = target_squares - target_sum * target_sum / n;
  if (!(total > 1e-12 * std::max(1.0, target_squares))) return squared_error == 0.0 ? 1.0 : 0.0;
  return 1.0 - squared_error / total;
}

std::vector<std::pair<std::string, double>> DeviceMeter::Reading::metrics() const {
  if (regression) return {{"mae", mae()}, {"rmse", rmse()}, {"r2", r2()}};
  return {{"acc", accuracy()}};
}

DeviceMeter::Reading DeviceMeter::Reading::since(const Reading& earlier) const {
  Reading d = *this;
  d.loss_sum -= earlier.loss_sum;
  d.correct -= earlier.correct;
  d.abs_error -= earlier.abs_error;
  d.squared_error -= earlier.squared_error;
  d.target_sum -= earlier.target_sum;
  d.target_squares -= earlier.target_squares;
  d.samples -= earlier.samples;
  d.batches -= earlier.batches;
  return d;
}

}  // namespace trainer::engine
