#include "trainer/engine/precision/grad_scaler.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "trainer/engine/torch_compat.h"

namespace trainer::engine {

GradScaler::GradScaler(Options options, at::Device device)
    : options_(options),
      device_(device),
      fused_(options.allow_fused && compat::fused_amp_ops_available(device.type())) {
  if (!(options_.init_scale > 0.0) || !std::isfinite(options_.init_scale)) {
    throw std::invalid_argument("init_scale must be a finite number above 0, got " +
                                std::to_string(options_.init_scale));
  }
  if (!(options_.growth_factor > 1.0)) {
    throw std::invalid_argument("growth_factor must be above 1, got " + std::to_string(options_.growth_factor));
  }
  if (!(options_.backoff_factor > 0.0 && options_.backoff_factor < 1.0)) {
    throw std::invalid_argument("backoff_factor must lie in (0, 1), got " + std::to_string(options_.backoff_factor));
  }
  if (options_.growth_interval < 1) {
    throw std::invalid_argument("growth_interval must be at least 1, got " + std::to_string(options_.growth_interval));
  }
  const auto on_device = at::TensorOptions().device(device_);
  scale_ = at::full({}, options_.init_scale, on_device.dtype(at::kFloat));
  growth_tracker_ = at::zeros({}, on_device.dtype(at::kInt));
  found_inf_ = at::zeros({}, on_device.dtype(at::kFloat));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const {
  if (!options_.enabled) return loss;
  return loss * scale_;
}

void GradScaler::unscale_(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  if (stage_ == Stage::kUnscaled) throw std::logic_error("GradScaler::unscale_ was already called for this step");
  if (stage_ == Stage::kStepped) throw std::logic_error("GradScaler::unscale_ called after step() and before update()");
  // Gradients grouped by dtype: the fused kernel takes one dtype per call (all on one device here).
  std::map<at::ScalarType, std::vector<at::Tensor>> grads;
  for (auto& group : optimizer.param_groups()) {
    for (auto& parameter : group.params()) {
      const at::Tensor& grad = parameter.grad();
      if (!grad.defined()) continue;
      if (grad.scalar_type() == at::kHalf) {
        // As PyTorch: float16 gradients lose too much when scaled and unscaled in place.
        throw std::invalid_argument(
            "GradScaler cannot unscale float16 gradients: keep the weights in float32 "
            "(precision=16-mixed, not 16-true)");
      }
      grads[grad.scalar_type()].push_back(grad);
    }
  }
  found_inf_.zero_();
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  if (fused_) {
    for (auto& [dtype, list] : grads) at::_amp_foreach_non_finite_check_and_unscale_(list, found_inf_, inv_scale);
  } else {
    // Same result with plain ops: each gradient checked before it is multiplied (as the kernel does).
    std::vector<at::Tensor> finite;
    for (auto& [dtype, list] : grads) {
      for (auto& grad : list) {
        finite.push_back(at::isfinite(grad).all());
        grad.mul_(inv_scale);
      }
    }
    if (!finite.empty()) found_inf_.copy_(at::stack(finite).all().logical_not());
  }
  stage_ = Stage::kUnscaled;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  if (stage_ == Stage::kStepped) throw std::logic_error("GradScaler::step called twice without update()");
  if (stage_ == Stage::kReady) unscale_(optimizer);
  // The host read that skipping inherently needs (free on CPU; on CUDA it waits for the
  // unscale and clipping work queued before it).
  if (share_found_inf_) share_found_inf_(found_inf_);
  found_inf_host_ = found_inf_.item<float>() != 0.0f;
  stage_ = Stage::kStepped;
  if (found_inf_host_) {
    ++skipped_steps_;
    return false;
  }
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  if (stage_ != Stage::kStepped) throw std::logic_error("GradScaler::update called without step()");
  stage_ = Stage::kReady;
  if (fused_) {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor, options_.backoff_factor,
                           options_.growth_interval);
    return;
  }
  // CPU with LibTorch < 2.3: the kernel's arithmetic on host values (float scale, double factors).
  float scale = scale_.item<float>();
  int32_t tracker = growth_tracker_.item<int32_t>();
  if (found_inf_host_) {
    scale = static_cast<float>(scale * options_.backoff_factor);
    tracker = 0;
  } else if (tracker + 1 == options_.growth_interval) {
    const float grown = static_cast<float>(scale * options_.growth_factor);
    if (std::isfinite(grown)) scale = grown;
    tracker = 0;
  } else {
    ++tracker;
  }
  scale_.fill_(scale);
  growth_tracker_.fill_(tracker);
}

double GradScaler::current_scale() const { return scale_.item<float>(); }

GradScalerState GradScaler::state() const {
  return {static_cast<double>(scale_.item<float>()), static_cast<int64_t>(growth_tracker_.item<int32_t>())};
}

void GradScaler::load_state(const GradScalerState& state) {
  scale_.fill_(state.scale);
  growth_tracker_.fill_(state.growth_tracker);
  stage_ = Stage::kReady;
}

}  // namespace trainer::engine
