#include "trainer/engine/optim/fused_adam.h"

#include <type_traits>
#include <unordered_map>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include "trainer/engine/torch_compat.h"

namespace trainer::engine {

#if TRAINER_TORCH_AT_LEAST(2, 0)
namespace {

// One optimizer class for both: Base is torch::optim::Adam or AdamW, whose options and parameter
// state types differ only in name. `decoupled` picks the AdamW kernel (weight decay applied to the
// weights, not added to the gradient).
template <class Base, class Options, class State>
class FusedAdam final : public Base {
 public:
  FusedAdam(std::vector<at::Tensor> parameters, const Options& options) : Base(std::move(parameters), options) {}

  at::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    at::Tensor loss;
    if (closure != nullptr) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    for (auto& group : this->param_groups()) {
      const auto& options = static_cast<const Options&>(group.options());
      std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
      for (auto& p : group.params()) {
        if (!p.grad().defined()) continue;
        State& state = state_of(p);
        params.push_back(p);
        grads.push_back(p.grad());
        exp_avgs.push_back(state.exp_avg());
        exp_avg_sqs.push_back(state.exp_avg_sq());
        steps.push_back(step_tensor(p, state.step()));  // counts host_step + 1 after the add below
        state.step(state.step() + 1);
      }
      if (params.empty()) continue;
      at::_foreach_add_(steps, 1);
      const auto [beta1, beta2] = options.betas();
      if constexpr (std::is_same_v<Base, torch::optim::AdamW>) {
        at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, {}, steps, options.lr(), beta1, beta2,
                          options.weight_decay(), options.eps(), /*amsgrad=*/false, /*maximize=*/false);
      } else {
        at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, {}, steps, options.lr(), beta1, beta2,
                         options.weight_decay(), options.eps(), /*amsgrad=*/false, /*maximize=*/false);
      }
    }
    return loss;
  }

 private:
  // LibTorch's own state object for p, created as its Adam::step creates it.
  State& state_of(const at::Tensor& p) {
    auto& states = this->state();
    auto found = states.find(p.unsafeGetTensorImpl());
    if (found == states.end()) {
      auto state = std::make_unique<State>();
      state->step(0);
      state->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
      state->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
      found = states.emplace(p.unsafeGetTensorImpl(), std::move(state)).first;
    }
    return static_cast<State&>(*found->second);
  }

  // The kernel takes each step count as a float32 tensor on the device. It is kept there and
  // rewritten from the host count only when that changed behind our back (a checkpoint was loaded).
  // The caller adds 1 to every returned tensor before the kernel reads it, so the count recorded
  // here is host_step + 1.
  at::Tensor step_tensor(const at::Tensor& p, int64_t host_step) {
    StepCount& count = step_values_[p.unsafeGetTensorImpl()];
    if (!count.tensor.defined()) {
      count.tensor = at::zeros({}, at::TensorOptions().dtype(at::kFloat).device(p.device()));
      count.value = 0;
    }
    if (count.value != host_step) count.tensor.fill_(static_cast<double>(host_step));
    count.value = host_step + 1;
    return count.tensor;
  }

  struct StepCount {
    at::Tensor tensor;
    int64_t value = 0;
  };
  std::unordered_map<void*, StepCount> step_values_;
};

}  // namespace

// CUDA kernels since 1.13's _fused_adam_ (AdamW 2.0); CPU kernels since 2.4.
bool fused_adam_available(const c10::Device& device) {
  return device.is_cuda() || (device.is_cpu() && TRAINER_TORCH_AT_LEAST(2, 4));
}

std::unique_ptr<torch::optim::Optimizer> make_fused_adam(const std::string& name, std::vector<at::Tensor> parameters,
                                                         double lr, double beta1, double beta2, double eps,
                                                         double weight_decay, const c10::Device& device) {
  if (!fused_adam_available(device)) return nullptr;
  if (name == "adam") {
    return std::make_unique<FusedAdam<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>>(
        std::move(parameters),
        torch::optim::AdamOptions(lr).betas(std::make_tuple(beta1, beta2)).eps(eps).weight_decay(weight_decay));
  }
  if (name == "adamw") {
    return std::make_unique<FusedAdam<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>>(
        std::move(parameters),
        torch::optim::AdamWOptions(lr).betas(std::make_tuple(beta1, beta2)).eps(eps).weight_decay(weight_decay));
  }
  return nullptr;
}

#else  // LibTorch 1.13: CPU only (Debian's build), where no fused kernel applies.

bool fused_adam_available(const c10::Device&) { return false; }

std::unique_ptr<torch::optim::Optimizer> make_fused_adam(const std::string&, std::vector<at::Tensor>, double, double,
                                                         double, double, double, const c10::Device&) {
  return nullptr;
}

#endif

}  // namespace trainer::engine
