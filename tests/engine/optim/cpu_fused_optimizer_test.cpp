// The fused CPU optimizers (cpu_fused_optimizer.h) against LibTorch's own Adam, AdamW and SGD on
// the same parameters and gradients: the same bits in float64 and in float32 after several steps
// (weight decay, momentum, Nesterov, a learning-rate change, sizes with odd tails and one split
// over threads), state that round-trips through LibTorch's save/load both ways, and LibTorch's own
// step for what the loops do not take (bfloat16, a non-contiguous parameter). ctest runs this file
// twice: as the CPU is, and with ATEN_CPU_CAPABILITY=default (ATen's kernels without FMA, which
// the loops then follow).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/optim/cpu_fused_optimizer.h"

#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/archive.h>

namespace {

using trainer::engine::make_cpu_fused_optimizer;

struct Settings {
  std::string name;
  double lr = 1e-2;
  double beta1 = 0.8, beta2 = 0.95, eps = 1e-8;
  double weight_decay = 0.1;
  double momentum = 0.9;
  bool nesterov = true;
};

std::unique_ptr<torch::optim::Optimizer> libtorch(const Settings& s, const std::vector<at::Tensor>& params) {
  if (s.name == "adam") {
    return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(s.lr)
                                                            .betas(std::make_tuple(s.beta1, s.beta2))
                                                            .eps(s.eps)
                                                            .weight_decay(s.weight_decay));
  }
  if (s.name == "adamw") {
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(s.lr)
                                                             .betas(std::make_tuple(s.beta1, s.beta2))
                                                             .eps(s.eps)
                                                             .weight_decay(s.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(s.lr).momentum(s.momentum).nesterov(s.nesterov).weight_decay(s.weight_decay));
}

std::unique_ptr<torch::optim::Optimizer> fused(const Settings& s, std::vector<at::Tensor> params) {
  return make_cpu_fused_optimizer(s.name, std::move(params), s.lr, s.beta1, s.beta2, s.eps, s.weight_decay, s.momentum,
                                  s.nesterov);
}

// Odd sizes (the loops' tails), a bias, and one tensor large enough to be split over threads.
std::vector<at::Tensor> fresh_parameters(at::ScalarType dtype) {
  at::manual_seed(3);
  const auto options = at::TensorOptions().dtype(dtype);
  return {at::randn({17, 5}, options).requires_grad_(true), at::randn({7}, options).requires_grad_(true),
          at::randn({2, 3, 3, 3}, options).requires_grad_(true), at::randn({301, 257}, options).requires_grad_(true)};
}

// Gradients that differ from step to step but are the same for both optimizers; one parameter has
// none on odd steps (it is skipped, as LibTorch skips it).
void set_gradients(std::vector<at::Tensor>& params, int step) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (i == 1 && step % 2 == 1) {
      params[i].mutable_grad() = at::Tensor();
      continue;
    }
    at::manual_seed(100 * step + static_cast<int>(i));
    params[i].mutable_grad() = at::randn_like(params[i]) * (1 + step);
  }
}

void run_steps(torch::optim::Optimizer& optimizer, std::vector<at::Tensor>& params, int from, int to) {
  for (int step = from; step < to; ++step) {
    set_gradients(params, step);
    if (step == 4) {
      for (auto& group : optimizer.param_groups()) group.options().set_lr(group.options().get_lr() * 0.5);
    }
    optimizer.step();
  }
}

std::vector<at::Tensor> copies(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

// How many values of the two lists differ (bit for bit; NaN never appears here).
int64_t differing(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  int64_t count = 0;
  for (size_t i = 0; i < a.size(); ++i) count += (a[i] != b[i]).sum().item<int64_t>();
  return count;
}

// LibTorch's key of p's state: a string in 1.13, the TensorImpl's address in 2.x.
template <class Map>
typename Map::key_type key_of(const at::Tensor& p) {
  if constexpr (std::is_same_v<typename Map::key_type, std::string>) {
    std::ostringstream text;  // what 1.13's c10::guts::to_string writes
    text << static_cast<const void*>(p.unsafeGetTensorImpl());
    return text.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

// Each parameter's state as text: its step count and its tensors' bits (hex of the raw bytes).
std::string state_of(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& params) {
  auto& map = optimizer.state();
  std::ostringstream out;
  auto bits = [&](const at::Tensor& t) {
    const at::Tensor c = t.contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    for (size_t i = 0; i < c.nbytes(); ++i) out << std::hex << static_cast<int>(bytes[i]);
    out << ";";
  };
  for (const auto& p : params) {
    auto found = map.find(key_of<std::decay_t<decltype(map)>>(p));
    if (found == map.end()) {
      out << "none|";
      continue;
    }
    if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(found->second.get())) {
      out << adam->step() << ":";
      bits(adam->exp_avg());
      bits(adam->exp_avg_sq());
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(found->second.get())) {
      out << adamw->step() << ":";
      bits(adamw->exp_avg());
      bits(adamw->exp_avg_sq());
    } else if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(found->second.get())) {
      bits(sgd->momentum_buffer());
    }
    out << "|";
  }
  return out.str();
}

std::string saved(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void load(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  torch::serialize::InputArchive archive;
  std::istringstream in(bytes);
  archive.load_from(in);
  optimizer.load(archive);
}

std::vector<Settings> all_settings() {
  Settings adam{"adam"};
  Settings adam_plain{"adam"};
  adam_plain.weight_decay = 0;
  Settings adamw{"adamw"};
  Settings sgd{"sgd"};
  Settings sgd_heavy_ball{"sgd"};
  sgd_heavy_ball.nesterov = false;
  sgd_heavy_ball.weight_decay = 0;
  Settings sgd_plain{"sgd"};
  sgd_plain.momentum = 0;
  sgd_plain.nesterov = false;
  return {adam, adam_plain, adamw, sgd, sgd_heavy_ball, sgd_plain};
}

std::string label(const Settings& s, at::ScalarType dtype) {
  std::ostringstream out;
  out << s.name << " wd=" << s.weight_decay << " momentum=" << s.momentum << " nesterov=" << s.nesterov << " "
      << c10::toString(dtype);
  return out.str();
}

}  // namespace

CATCH_TEST_CASE("the fused CPU step gives LibTorch's bits in float64 and float32") {
  const char* forced = std::getenv("ATEN_CPU_CAPABILITY");
  if (forced != nullptr && std::string(forced) == "default") {
    CATCH_CHECK(trainer::engine::cpu_fused_optimizer_isa() == "generic");
  }
  for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
    CATCH_REQUIRE(trainer::engine::cpu_fused_optimizer_available(dtype));
    for (const Settings& s : all_settings()) {
      CATCH_INFO(label(s, dtype) << " on " << trainer::engine::cpu_fused_optimizer_isa());
      std::vector<at::Tensor> theirs = fresh_parameters(dtype);
      std::vector<at::Tensor> ours = copies(theirs);
      auto reference = libtorch(s, theirs);
      auto tested = fused(s, ours);
      run_steps(*reference, theirs, 0, 7);
      run_steps(*tested, ours, 0, 7);
      CATCH_CHECK(differing(theirs, ours) == 0);
      // The state is LibTorch's, value for value.
      CATCH_CHECK(state_of(*reference, theirs) == state_of(*tested, ours));
    }
  }
}

CATCH_TEST_CASE("a checkpoint of either resumes on the other with the same bits") {
  for (const Settings& s : all_settings()) {
    CATCH_INFO(label(s, at::kFloat));
    std::vector<at::Tensor> base = fresh_parameters(at::kFloat);
    auto first = fused(s, base);
    run_steps(*first, base, 0, 3);
    const std::string fused_state = saved(*first);

    // fused (3 steps) -> LibTorch (3 more) against fused -> fused.
    std::vector<at::Tensor> a = copies(base), b = copies(base);
    auto on_libtorch = libtorch(s, a);
    load(*on_libtorch, fused_state);
    auto on_fused = fused(s, b);
    load(*on_fused, fused_state);
    run_steps(*on_libtorch, a, 3, 6);
    run_steps(*on_fused, b, 3, 6);
    CATCH_CHECK(differing(a, b) == 0);

    // A state loaded into a fused optimizer that had stepped already replaces what it had.
    std::vector<at::Tensor> c = copies(base);
    auto reloaded = fused(s, c);
    run_steps(*reloaded, c, 0, 2);
    for (size_t i = 0; i < c.size(); ++i) c[i].detach().copy_(base[i]);
    load(*reloaded, fused_state);
    run_steps(*reloaded, c, 3, 6);
    CATCH_CHECK(differing(a, c) == 0);
  }
}

CATCH_TEST_CASE("parameters the loops do not take get LibTorch's own step") {
  Settings s{"adamw"};
  // bfloat16 (precision=bf16-true): not a loop dtype.
  CATCH_CHECK_FALSE(trainer::engine::cpu_fused_optimizer_available(at::kBFloat16));
  std::vector<at::Tensor> theirs = fresh_parameters(at::kBFloat16);
  std::vector<at::Tensor> ours = copies(theirs);
  auto reference = libtorch(s, theirs);
  auto tested = fused(s, ours);
  run_steps(*reference, theirs, 0, 3);
  run_steps(*tested, ours, 0, 3);
  CATCH_CHECK(differing(theirs, ours) == 0);

  // A non-contiguous parameter (a transposed leaf), next to contiguous ones.
  at::manual_seed(5);
  std::vector<at::Tensor> mixed{at::randn({6, 4}).t().requires_grad_(true), at::randn({9}).requires_grad_(true)};
  CATCH_REQUIRE_FALSE(mixed[0].is_contiguous());
  std::vector<at::Tensor> mixed_copy{mixed[0].detach().clone().t().contiguous().t().requires_grad_(true),
                                     mixed[1].detach().clone().requires_grad_(true)};
  CATCH_REQUIRE_FALSE(mixed_copy[0].is_contiguous());
  auto reference_mixed = libtorch(s, mixed);
  auto tested_mixed = fused(s, mixed_copy);
  run_steps(*reference_mixed, mixed, 0, 3);
  run_steps(*tested_mixed, mixed_copy, 0, 3);
  CATCH_CHECK(differing(mixed, mixed_copy) == 0);
}

CATCH_TEST_CASE("a closure is evaluated once, with gradients on, and its loss returned") {
  Settings s{"adam"};
  std::vector<at::Tensor> params = fresh_parameters(at::kFloat);
  auto tested = fused(s, params);
  int calls = 0;
  at::Tensor loss = tested->step([&] {
    ++calls;
    tested->zero_grad();
    at::Tensor l = params[0].pow(2).sum();
    l.backward();
    return l;
  });
  CATCH_CHECK(calls == 1);
  CATCH_REQUIRE(loss.defined());
  CATCH_CHECK(loss.item<float>() > 0);
}
