#include "trainer/engine/device_meter.h"

#include <torch/utils.h>

namespace trainer::engine {

void DeviceMeter::reset(const at::Device& device, ProcessGroup* ranks) {
  loss_sum = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(device));
  correct = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device));
  samples = 0;
  batches = 0;
  group = ranks;
}

void DeviceMeter::add(const at::Tensor& loss, const at::Tensor& logits, const at::Tensor& targets) {
  const int64_t n = targets.size(0);
  torch::NoGradGuard no_grad;
  loss_sum.add_(loss, static_cast<double>(n));
  correct.add_(logits.argmax(1).eq(targets).sum());
  samples += n;
  ++batches;
}

DeviceMeter::Reading DeviceMeter::read() const {
  if (group != nullptr) {
    at::Tensor all =
        at::stack({loss_sum, correct.to(at::kDouble), at::full_like(loss_sum, static_cast<double>(samples)),
                   at::full_like(loss_sum, static_cast<double>(batches))});
    group->allreduce_sum(all, "metric reduction");
    all = all.cpu();
    const double* values = all.data_ptr<double>();
    return {values[0], values[1], static_cast<int64_t>(values[2]), static_cast<int64_t>(values[3])};
  }
  if (samples == 0) return {};
  at::Tensor all = at::stack({loss_sum, correct.to(at::kDouble)}).cpu();
  const double* values = all.data_ptr<double>();
  return {values[0], values[1], samples, batches};
}

}  // namespace trainer::engine
