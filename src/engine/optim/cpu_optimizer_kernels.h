// The element loops of the CPU optimizers (cpu_fused_optimizer.h): one pass over a parameter's
// contiguous values, its gradient and its state, computing what LibTorch's own Adam, AdamW and SGD
// compute with their sequence of ATen operations, rounding for rounding.
//
// ATen's vectorised CPU kernels (AVX2 and AVX-512) fuse a multiply into the following add in three
// places: `add_(other, alpha)` is fma(other, alpha, self), `addcmul_(t1, t2, value)` is
// fma(value * t1, t2, self), and the weight-decay `grad.add(p, wd)` is fma(p, wd, grad). Its
// DEFAULT kernels (no AVX2) round the product first. `kFma` picks which of the two this build
// reproduces; the file that instantiates it with true is compiled for AVX2 + FMA, the other
// without, and both with -ffp-contract=off so that the compiler fuses nothing on its own.
//
// Every scalar is cast to T as ATen casts a wrapped double scalar, and the bias corrections are
// computed in double exactly as LibTorch's step computes them.
#pragma once

#include <cmath>
#include <cstdint>

namespace trainer::engine::cpu_optim {

// The per-step constants of Adam and AdamW, in double; kernels cast them to T.
struct AdamScalars {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool decoupled = false;  // AdamW: p *= 1 - lr * wd before the update; Adam: grad += wd * p
  int64_t step = 1;        // the step being taken (1 for the first)
};

struct SgdScalars {
  double lr = 0.1;
  double momentum = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool first = false;  // no momentum buffer yet: it starts as the gradient (LibTorch clones it)
};

// The entry points of one instruction set (namespace avx2 or generic); [begin, end) of n values.
#define TRAINER_CPU_OPTIM_DECLARE(isa)                                                                                 \
  namespace isa {                                                                                                      \
  void adam_step(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end, const AdamScalars& s);      \
  void adam_step(double* p, const double* g, double* m, double* v, int64_t begin, int64_t end, const AdamScalars& s);  \
  void adam_moments(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end, const AdamScalars& s);   \
  void adam_moments(double* p, const double* g, double* m, double* v, int64_t begin, int64_t end,                      \
                    const AdamScalars& s);                                                                             \
  void adam_apply(float* p, const float* m, const float* root_v, int64_t begin, int64_t end, const AdamScalars& s);    \
  void adam_apply(double* p, const double* m, const double* root_v, int64_t begin, int64_t end, const AdamScalars& s); \
  void sgd_step(float* p, const float* g, float* buffer, int64_t begin, int64_t end, const SgdScalars& s);             \
  void sgd_step(double* p, const double* g, double* buffer, int64_t begin, int64_t end, const SgdScalars& s);          \
  }
TRAINER_CPU_OPTIM_DECLARE(avx2)
TRAINER_CPU_OPTIM_DECLARE(generic)
#undef TRAINER_CPU_OPTIM_DECLARE

// The loops themselves, instantiated once per instruction set in its own file.
template <bool kFma>
struct Loops {
  template <class T>
  static T madd(T a, T b, T c) {  // a * b + c as ATen's kernels of this instruction set round it
    if constexpr (kFma) {
      return std::fma(a, b, c);
    } else {
      return a * b + c;
    }
  }

  // p's decay (AdamW) or the gradient's (Adam), then the two moments. Writes p (AdamW), m and v.
  template <class T>
  static void moments(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, int64_t begin,
                      int64_t end, const AdamScalars& s) {
    const T beta1 = static_cast<T>(s.beta1), beta2 = static_cast<T>(s.beta2);
    const T rest1 = static_cast<T>(1 - s.beta1), rest2 = static_cast<T>(1 - s.beta2);
    const T decay = static_cast<T>(1 - s.lr * s.weight_decay), wd = static_cast<T>(s.weight_decay);
    const bool decays = s.weight_decay != 0;
    if (decays && s.decoupled) {
      for (int64_t i = begin; i < end; ++i) p[i] = p[i] * decay;
    }
    if (decays && !s.decoupled) {
      for (int64_t i = begin; i < end; ++i) {
        const T grad = madd(p[i], wd, g[i]);
        m[i] = madd(grad, rest1, m[i] * beta1);
        v[i] = madd(rest2 * grad, grad, v[i] * beta2);
      }
      return;
    }
    for (int64_t i = begin; i < end; ++i) {
      const T grad = g[i];
      m[i] = madd(grad, rest1, m[i] * beta1);
      v[i] = madd(rest2 * grad, grad, v[i] * beta2);
    }
  }

  // p += -(lr / bc1) * m / (root_v / sqrt(bc2) + eps), root_v being sqrt(v).
  template <class T>
  static void apply(T* __restrict p, const T* __restrict m, const T* __restrict root_v, int64_t begin, int64_t end,
                    const AdamScalars& s) {
    const double bias1 = 1 - std::pow(s.beta1, static_cast<double>(s.step));
    const double bias2 = 1 - std::pow(s.beta2, static_cast<double>(s.step));
    const T root_bias2 = static_cast<T>(std::sqrt(bias2)), eps = static_cast<T>(s.eps);
    const T step_size = static_cast<T>(-(s.lr / bias1));
    for (int64_t i = begin; i < end; ++i) {
      const T denom = root_v[i] / root_bias2 + eps;
      p[i] = p[i] + step_size * m[i] / denom;
    }
  }

  // Both in one pass, the square root being IEEE's (correctly rounded, as ATen's own without MKL).
  template <class T>
  static void step(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, int64_t begin, int64_t end,
                   const AdamScalars& s) {
    const T beta1 = static_cast<T>(s.beta1), beta2 = static_cast<T>(s.beta2);
    const T rest1 = static_cast<T>(1 - s.beta1), rest2 = static_cast<T>(1 - s.beta2);
    const T decay = static_cast<T>(1 - s.lr * s.weight_decay), wd = static_cast<T>(s.weight_decay);
    const double bias1 = 1 - std::pow(s.beta1, static_cast<double>(s.step));
    const double bias2 = 1 - std::pow(s.beta2, static_cast<double>(s.step));
    const T root_bias2 = static_cast<T>(std::sqrt(bias2)), eps = static_cast<T>(s.eps);
    const T step_size = static_cast<T>(-(s.lr / bias1));
    const bool decays = s.weight_decay != 0;
    const bool l2 = decays && !s.decoupled;
    const T keep = decays && s.decoupled ? decay : T(1);  // p * 1 is p exactly
    for (int64_t i = begin; i < end; ++i) {
      const T grad = l2 ? madd(p[i], wd, g[i]) : g[i];
      const T m_new = madd(grad, rest1, m[i] * beta1);
      const T v_new = madd(rest2 * grad, grad, v[i] * beta2);
      const T denom = std::sqrt(v_new) / root_bias2 + eps;
      p[i] = p[i] * keep + step_size * m_new / denom;
      m[i] = m_new;
      v[i] = v_new;
    }
  }

  // One loop per combination of settings, so that each has no branch and vectorises.
  template <bool kDecays, bool kMomentum, bool kFirst, bool kNesterov, class T>
  static void sgd_loop(T* __restrict p, const T* __restrict g, T* __restrict buffer, int64_t begin, int64_t end,
                       const SgdScalars& s) {
    const T wd = static_cast<T>(s.weight_decay), momentum = static_cast<T>(s.momentum);
    const T minus_lr = static_cast<T>(-1 * s.lr), one = T(1);
    for (int64_t i = begin; i < end; ++i) {
      T d = g[i];
      if constexpr (kDecays) d = madd(p[i], wd, d);
      if constexpr (kMomentum) {
        T b = d;  // the first step: the buffer starts as the gradient (LibTorch clones it)
        if constexpr (!kFirst) b = madd(d, one, buffer[i] * momentum);  // dampening 0: 1 - 0
        buffer[i] = b;
        if constexpr (kNesterov) {
          d = madd(b, momentum, d);
        } else {
          d = b;
        }
      }
      p[i] = madd(d, minus_lr, p[i]);
    }
  }

  template <bool kDecays, bool kMomentum, class T>
  static void sgd_with(T* p, const T* g, T* buffer, int64_t begin, int64_t end, const SgdScalars& s) {
    if (!kMomentum) return sgd_loop<kDecays, false, false, false>(p, g, buffer, begin, end, s);
    if (s.first) {
      if (s.nesterov) return sgd_loop<kDecays, kMomentum, true, true>(p, g, buffer, begin, end, s);
      return sgd_loop<kDecays, kMomentum, true, false>(p, g, buffer, begin, end, s);
    }
    if (s.nesterov) return sgd_loop<kDecays, kMomentum, false, true>(p, g, buffer, begin, end, s);
    sgd_loop<kDecays, kMomentum, false, false>(p, g, buffer, begin, end, s);
  }

  template <class T>
  static void sgd(T* p, const T* g, T* buffer, int64_t begin, int64_t end, const SgdScalars& s) {
    const bool decays = s.weight_decay != 0, momentum = s.momentum != 0;
    if (decays && momentum) return sgd_with<true, true>(p, g, buffer, begin, end, s);
    if (decays) return sgd_with<true, false>(p, g, buffer, begin, end, s);
    if (momentum) return sgd_with<false, true>(p, g, buffer, begin, end, s);
    sgd_with<false, false>(p, g, buffer, begin, end, s);
  }
};

}  // namespace trainer::engine::cpu_optim
