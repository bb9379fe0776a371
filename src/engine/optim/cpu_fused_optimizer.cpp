#include "trainer/engine/optim/cpu_fused_optimizer.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>

#include <ATen/ATen.h>
#include <ATen/Config.h>
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/archive.h>

#include "cpu_optimizer_kernels.h"

namespace trainer::engine {

namespace {

namespace co = cpu_optim;

// The rule ATen's DispatchStub picks its kernels by: ATEN_CPU_CAPABILITY when set, else AVX2
// (or AVX-512, which fuses the same operations) when the CPU has AVX2 and FMA.
bool fma_like_aten() {
#if defined(__x86_64__) || defined(_M_X64)
  __builtin_cpu_init();  // this runs among the static initialisers
  // ATen compares the value as written: "DEFAULT" or "default " is an invalid value it warns
  // about and ignores, keeping the CPU's kernels.
  const char* forced = std::getenv("ATEN_CPU_CAPABILITY");
  if (forced != nullptr && std::string(forced) == "default") return false;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

const bool kFma = fma_like_aten();

// ATen's square root is IEEE's (correctly rounded, what the loops compute) unless ATen takes it
// from MKL's vector library, whose results differ in the last bit for about 1 value in 70.
constexpr bool kAtenSqrtIsIeee = !AT_MKL_ENABLED();

// Splits [0, n) over ATen's intra-op threads, in chunks of at least 256 Ki values. ATen's own
// grain (32 Ki) split the mlp's 200 Ki-value weight over two threads: the step itself took 0.11
// instead of about 0.2 ms, but the forward and backward passes after it were about 1 ms slower
// (the OpenMP threads it woke competing with OpenBLAS's on two cores), and the training step as a
// whole 0.4 ms slower than with the pass on one thread (BENCHMARKS.md, "Optimizer step on the CPU").
template <class F>
void in_parallel(int64_t n, const F& f) {
  constexpr int64_t kGrain = int64_t{1} << 18;
  if (n < 2 * kGrain) {
    f(0, n);
    return;
  }
  at::parallel_for(0, n, kGrain, f);
}

template <class T>
void adam_step(const co::AdamScalars& s, at::Tensor& p, const at::Tensor& g, at::Tensor& m, at::Tensor& v) {
  T* pp = p.data_ptr<T>();
  const T* gp = g.data_ptr<T>();
  T* mp = m.data_ptr<T>();
  T* vp = v.data_ptr<T>();
  in_parallel(p.numel(), [&](int64_t begin, int64_t end) {
    if (kFma) {
      co::avx2::adam_step(pp, gp, mp, vp, begin, end, s);
    } else {
      co::generic::adam_step(pp, gp, mp, vp, begin, end, s);
    }
  });
}

// The same in three passes, the square roots being ATen's (`root` is scratch of p's size).
template <class T>
void adam_step_aten_sqrt(const co::AdamScalars& s, at::Tensor& p, const at::Tensor& g, at::Tensor& m, at::Tensor& v,
                         at::Tensor& root) {
  T* pp = p.data_ptr<T>();
  const T* gp = g.data_ptr<T>();
  T* mp = m.data_ptr<T>();
  T* vp = v.data_ptr<T>();
  in_parallel(p.numel(), [&](int64_t begin, int64_t end) {
    if (kFma) {
      co::avx2::adam_moments(pp, gp, mp, vp, begin, end, s);
    } else {
      co::generic::adam_moments(pp, gp, mp, vp, begin, end, s);
    }
  });
  at::sqrt_out(root, v);
  const T* rp = root.data_ptr<T>();
  in_parallel(p.numel(), [&](int64_t begin, int64_t end) {
    if (kFma) {
      co::avx2::adam_apply(pp, mp, rp, begin, end, s);
    } else {
      co::generic::adam_apply(pp, mp, rp, begin, end, s);
    }
  });
}

template <class T>
void sgd_step(const co::SgdScalars& s, at::Tensor& p, const at::Tensor& g, T* buffer) {
  T* pp = p.data_ptr<T>();
  const T* gp = g.data_ptr<T>();
  in_parallel(p.numel(), [&](int64_t begin, int64_t end) {
    if (kFma) {
      co::avx2::sgd_step(pp, gp, buffer, begin, end, s);
    } else {
      co::generic::sgd_step(pp, gp, buffer, begin, end, s);
    }
  });
}

bool loop_dtype(c10::ScalarType dtype) { return dtype == at::kFloat || dtype == at::kDouble; }

// Whether the loops can take p's step: a dense CPU tensor of float32/float64, contiguous, with a
// gradient of the same kind (LibTorch's step takes the rest).
bool loop_can_step(const at::Tensor& p) {
  const at::Tensor& g = p.grad();
  return p.device().is_cpu() && loop_dtype(p.scalar_type()) && p.is_contiguous() && !p.is_sparse() &&
         g.layout() == at::kStrided && g.device().is_cpu() && g.scalar_type() == p.scalar_type() && g.is_contiguous() &&
         g.sizes() == p.sizes();
}

// The state map's key for p: a string in LibTorch 1.13, the TensorImpl's address from 2.x.
template <class Map>
typename Map::key_type state_key(const at::Tensor& p) {
  if constexpr (std::is_same_v<typename Map::key_type, std::string>) {
    std::ostringstream text;  // what 1.13's c10::guts::to_string writes
    text << static_cast<const void*>(p.unsafeGetTensorImpl());
    return text.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

// LibTorch's optimizer `Base` with its step replaced. The state of each parameter is looked up
// once (a string key in 1.13 costs a formatted string per parameter) and kept by position until
// load() replaces the map.
template <class Base>
class CpuFused : public Base {
 public:
  using Base::Base;

  void load(torch::serialize::InputArchive& archive) override {
    Base::load(archive);
    states_.clear();
  }

 protected:
  // Whether every parameter with a gradient, and its state where it has one, can take the loops'
  // step (else LibTorch's step runs). `state_fits(p, state)` checks (and may make contiguous) the
  // state's tensors; `group_fits(options)` the group's settings.
  template <class State, class GroupFits, class StateFits>
  bool loops_can_step(const GroupFits& group_fits, const StateFits& state_fits) {
    size_t index = 0;
    for (auto& group : this->param_groups()) {
      if (!group_fits(group.options())) return false;
      for (const auto& p : group.params()) {
        const size_t at = index++;
        if (!p.grad().defined()) continue;
        if (!loop_can_step(p)) return false;
        State* state = state_at<State>(at, p);
        if (state != nullptr && !state_fits(p, *state)) return false;
      }
    }
    return true;
  }

  // A state tensor the loops can update in place: p's dtype and size (made contiguous if it is not).
  static bool fits(const at::Tensor& p, at::Tensor& tensor) {
    if (!tensor.defined() || tensor.scalar_type() != p.scalar_type() || tensor.sizes() != p.sizes() ||
        !tensor.device().is_cpu() || tensor.layout() != at::kStrided) {
      return false;
    }
    if (!tensor.is_contiguous()) tensor = tensor.contiguous();
    return true;
  }

  // The state of the index-th parameter, or null when it has none yet.
  template <class State>
  State* state_at(size_t index, const at::Tensor& p) {
    if (states_.size() <= index) states_.resize(index + 1, nullptr);
    if (states_[index] == nullptr) {
      auto& map = this->state();
      auto found = map.find(state_key<std::decay_t<decltype(map)>>(p));
      if (found == map.end()) return nullptr;
      states_[index] = found->second.get();
    }
    return static_cast<State*>(states_[index]);
  }

  template <class State>
  State& add_state(size_t index, const at::Tensor& p, std::unique_ptr<State> state) {
    auto& map = this->state();
    State& added = *state;
    map[state_key<std::decay_t<decltype(map)>>(p)] = std::move(state);
    if (states_.size() <= index) states_.resize(index + 1, nullptr);
    states_[index] = &added;
    return added;
  }

 private:
  std::vector<torch::optim::OptimizerParamState*> states_;
};

template <class Base, class Options, class State>
class CpuAdam final : public CpuFused<Base> {
 public:
  CpuAdam(std::vector<at::Tensor> parameters, const Options& options, bool decoupled)
      : CpuFused<Base>(std::move(parameters), options), decoupled_(decoupled) {}

  at::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override {
    const bool loops_fit = this->template loops_can_step<State>(
        [](const torch::optim::OptimizerOptions& o) { return !static_cast<const Options&>(o).amsgrad(); },
        [](const at::Tensor& p, State& state) {
          return CpuFused<Base>::fits(p, state.exp_avg()) && CpuFused<Base>::fits(p, state.exp_avg_sq());
        });
    if (!loops_fit) return Base::step(std::move(closure));
    at::NoGradGuard no_grad;
    at::Tensor loss;
    if (closure != nullptr) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    size_t index = 0;
    for (auto& group : this->param_groups()) {
      const auto& options = static_cast<const Options&>(group.options());
      co::AdamScalars s;
      s.lr = options.lr();
      s.beta1 = std::get<0>(options.betas());
      s.beta2 = std::get<1>(options.betas());
      s.eps = options.eps();
      s.weight_decay = options.weight_decay();
      s.decoupled = decoupled_;
      for (auto& p : group.params()) {
        const size_t at = index++;
        if (!p.grad().defined()) continue;
        State* state = this->template state_at<State>(at, p);
        if (state == nullptr) {
          auto fresh = std::make_unique<State>();
          fresh->step(0);
          fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
          fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
          state = &this->add_state(at, p, std::move(fresh));
        }
        state->step(state->step() + 1);
        s.step = state->step();
        at::Tensor& m = state->exp_avg();
        at::Tensor& v = state->exp_avg_sq();
        const at::Tensor& g = p.grad();
        if constexpr (kAtenSqrtIsIeee) {
          if (p.scalar_type() == at::kDouble) {
            adam_step<double>(s, p, g, m, v);
          } else {
            adam_step<float>(s, p, g, m, v);
          }
        } else {
          at::Tensor& root = scratch(at, p);
          if (p.scalar_type() == at::kDouble) {
            adam_step_aten_sqrt<double>(s, p, g, m, v, root);
          } else {
            adam_step_aten_sqrt<float>(s, p, g, m, v, root);
          }
        }
      }
    }
    return loss;
  }

 private:
  at::Tensor& scratch(size_t index, const at::Tensor& p) {
    if (roots_.size() <= index) roots_.resize(index + 1);
    // p's shape, so that sqrt_out never resizes it (LibTorch 2.x warns on every such resize).
    if (!roots_[index].defined() || roots_[index].scalar_type() != p.scalar_type() ||
        roots_[index].sizes() != p.sizes()) {
      roots_[index] = at::empty(p.sizes(), p.options());
    }
    return roots_[index];
  }

  bool decoupled_;
  std::vector<at::Tensor> roots_;  // the square roots of v, per parameter (the MKL case)
};

class CpuSgd final : public CpuFused<torch::optim::SGD> {
 public:
  using CpuFused<torch::optim::SGD>::CpuFused;

  at::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override {
    using torch::optim::SGDParamState;
    const bool loops_fit = loops_can_step<SGDParamState>(
        [](const torch::optim::OptimizerOptions& o) {
          return static_cast<const torch::optim::SGDOptions&>(o).dampening() == 0;
        },
        [](const at::Tensor& p, SGDParamState& state) { return fits(p, state.momentum_buffer()); });
    if (!loops_fit) return torch::optim::SGD::step(std::move(closure));
    at::NoGradGuard no_grad;
    at::Tensor loss;
    if (closure != nullptr) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    size_t index = 0;
    for (auto& group : param_groups()) {
      const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
      co::SgdScalars s;
      s.lr = options.lr();
      s.momentum = options.momentum();
      s.weight_decay = options.weight_decay();
      s.nesterov = options.nesterov();
      for (auto& p : group.params()) {
        const size_t at = index++;
        if (!p.grad().defined()) continue;
        void* buffer = nullptr;
        s.first = false;
        if (s.momentum != 0) {
          auto* state = state_at<SGDParamState>(at, p);
          if (state == nullptr) {
            auto fresh = std::make_unique<SGDParamState>();
            fresh->momentum_buffer(at::empty_like(p, at::MemoryFormat::Contiguous));
            state = &add_state(at, p, std::move(fresh));
            s.first = true;
          }
          buffer = state->momentum_buffer().data_ptr();
        }
        if (p.scalar_type() == at::kDouble) {
          sgd_step<double>(s, p, p.grad(), static_cast<double*>(buffer));
        } else {
          sgd_step<float>(s, p, p.grad(), static_cast<float*>(buffer));
        }
      }
    }
    return loss;
  }
};

}  // namespace

bool cpu_fused_optimizer_available(c10::ScalarType dtype) {
#if defined(__x86_64__) || defined(_M_X64)
  return loop_dtype(dtype);
#else
  (void)dtype;
  return false;
#endif
}

std::string cpu_fused_optimizer_isa() { return kFma ? "avx2+fma" : "generic"; }

std::unique_ptr<torch::optim::Optimizer> make_cpu_fused_optimizer(const std::string& name,
                                                                  std::vector<at::Tensor> parameters, double lr,
                                                                  double beta1, double beta2, double eps,
                                                                  double weight_decay, double momentum, bool nesterov) {
  if (name == "adam") {
    return std::make_unique<CpuAdam<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>>(
        std::move(parameters),
        torch::optim::AdamOptions(lr).betas(std::make_tuple(beta1, beta2)).eps(eps).weight_decay(weight_decay), false);
  }
  if (name == "adamw") {
    return std::make_unique<CpuAdam<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>>(
        std::move(parameters),
        torch::optim::AdamWOptions(lr).betas(std::make_tuple(beta1, beta2)).eps(eps).weight_decay(weight_decay), true);
  }
  return std::make_unique<CpuSgd>(
      std::move(parameters),
      torch::optim::SGDOptions(lr).momentum(momentum).nesterov(nesterov).weight_decay(weight_decay));
}

}  // namespace trainer::engine
