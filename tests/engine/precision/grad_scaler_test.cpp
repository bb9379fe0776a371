// GradScaler on the CPU with injected infinities: skipped steps leave parameters and optimizer
// state untouched and back the scale off; good steps grow it after growth_interval; unscaling
// divides exactly; the state survives a checkpoint. Where this LibTorch has the fused CPU kernels
// (2.3+), the plain-op path is checked against them.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/precision/grad_scaler.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/checkpoint/checkpoint.h"
#include "trainer/engine/checkpoint/checkpoint_writer.h"
#include "trainer/engine/torch_compat.h"
#include "trainer/models/model_registry.h"

namespace {

using trainer::engine::GradScaler;
using trainer::engine::GradScalerState;

GradScaler::Options options(double init_scale, int64_t growth_interval = 2000, bool allow_fused = true) {
  GradScaler::Options o;
  o.init_scale = init_scale;
  o.growth_interval = growth_interval;
  o.allow_fused = allow_fused;
  return o;
}

// One parameter vector w; the loss sum(w * x) has gradient x, so gradients are whatever x is.
struct Problem {
  at::Tensor weights = at::arange(1.0, 5.0, at::kFloat).requires_grad_(true);  // 1 2 3 4
  torch::optim::SGD optimizer{std::vector<at::Tensor>{weights}, torch::optim::SGDOptions(0.5)};

  // backward of the scaled loss for inputs x (x may hold inf/NaN).
  void backward(GradScaler& scaler, const at::Tensor& x) {
    optimizer.zero_grad();
    scaler.scale((weights * x).sum()).backward();
  }
};

const at::Tensor kInputs = at::tensor({0.25f, -1.5f, 3.0f, 0.1f});

}  // namespace

CATCH_TEST_CASE("a finite step: gradients come back unscaled, the optimizer steps, the scale stays") {
  GradScaler scaler(options(1024.0), at::kCPU);
  Problem p;
  p.backward(scaler, kInputs);
  // Scaled by 1024 (a power of two: exact).
  CATCH_CHECK(at::equal(p.weights.grad(), kInputs * 1024.0f));
  scaler.unscale_(p.optimizer);
  CATCH_CHECK(at::equal(p.weights.grad(), kInputs));
  CATCH_CHECK(scaler.step(p.optimizer));
  scaler.update();
  CATCH_CHECK(at::allclose(p.weights, at::arange(1.0, 5.0, at::kFloat) - 0.5f * kInputs));
  CATCH_CHECK(scaler.current_scale() == 1024.0);
  CATCH_CHECK(scaler.state().growth_tracker == 1);
  CATCH_CHECK(scaler.skipped_steps() == 0);
}

CATCH_TEST_CASE(
    "an inf or NaN gradient: the step is skipped, parameters and optimizer state untouched, scale backed off") {
  const float bad = GENERATE(std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN());
  const bool allow_fused = GENERATE(true, false);
  CATCH_CAPTURE(bad, allow_fused);
  GradScaler scaler(options(4096.0, 3, allow_fused), at::kCPU);
  at::Tensor weights = at::arange(1.0, 5.0, at::kFloat).requires_grad_(true);
  torch::optim::Adam adam(std::vector<at::Tensor>{weights}, torch::optim::AdamOptions(0.1));
  // Two good steps first, so the growth tracker has something to reset.
  for (int i = 0; i < 2; ++i) {
    adam.zero_grad();
    scaler.scale((weights * kInputs).sum()).backward();
    CATCH_CHECK(scaler.step(adam));
    scaler.update();
  }
  CATCH_CHECK(scaler.state().growth_tracker == 2);
  const at::Tensor before = weights.detach().clone();
  auto* adam_state = static_cast<torch::optim::AdamParamState*>(adam.state().begin()->second.get());
  const int64_t adam_steps = adam_state->step();
  const at::Tensor exp_avg = adam_state->exp_avg().clone();

  adam.zero_grad();
  at::Tensor x = kInputs.clone();
  x[2] = bad;
  scaler.scale((weights * x).sum()).backward();
  CATCH_CHECK_FALSE(scaler.step(adam));  // the trainer advances no LR schedule on false
  scaler.update();
  CATCH_CHECK(at::equal(weights.detach(), before));
  CATCH_CHECK(adam_state->step() == adam_steps);
  CATCH_CHECK(at::equal(adam_state->exp_avg(), exp_avg));
  CATCH_CHECK(scaler.current_scale() == 2048.0);
  CATCH_CHECK(scaler.state().growth_tracker == 0);
  CATCH_CHECK(scaler.skipped_steps() == 1);

  // The next finite step steps again.
  adam.zero_grad();
  scaler.scale((weights * kInputs).sum()).backward();
  CATCH_CHECK(scaler.step(adam));
  scaler.update();
  CATCH_CHECK_FALSE(at::equal(weights.detach(), before));
  CATCH_CHECK(adam_state->step() == adam_steps + 1);
}

CATCH_TEST_CASE("an overflow in the scaled backward pass is caught like an injected one") {
  // 3e38 × gradient 3 overflows float32: the scaled gradient is inf although the data is finite.
  GradScaler scaler(options(3e38), at::kCPU);
  Problem p;
  p.backward(scaler, kInputs);
  CATCH_CHECK_FALSE(scaler.step(p.optimizer));
  scaler.update();
  CATCH_CHECK(scaler.current_scale() == static_cast<double>(static_cast<float>(3e38f * 0.5)));
  CATCH_CHECK(at::equal(p.weights.detach(), at::arange(1.0, 5.0, at::kFloat)));
}

CATCH_TEST_CASE("another process's inf, shared before step(), skips this process's finite step too") {
  // A pipeline's stages share the flag (a sum all-reduce): here the "other stage" reports an inf.
  GradScaler scaler(options(1024.0), at::kCPU);
  int shared = 0;
  scaler.share_found_inf([&](at::Tensor& found) {
    ++shared;
    CATCH_CHECK(found.item<float>() == 0.0f);  // this process's own gradients were finite
    found.add_(1.0);
  });
  Problem p;
  p.backward(scaler, kInputs);
  CATCH_CHECK_FALSE(scaler.step(p.optimizer));
  scaler.update();
  CATCH_CHECK(shared == 1);
  CATCH_CHECK(at::equal(p.weights, at::arange(1.0, 5.0, at::kFloat)));  // untouched
  CATCH_CHECK(scaler.current_scale() == 512.0);                         // backed off like the others
  CATCH_CHECK(scaler.skipped_steps() == 1);
}

CATCH_TEST_CASE("the scale grows after growth_interval good steps in a row, and a skip restarts the count") {
  const bool allow_fused = GENERATE(true, false);
  CATCH_CAPTURE(allow_fused);
  GradScaler scaler(options(8.0, 3, allow_fused), at::kCPU);
  Problem p;
  auto good_step = [&] {
    p.backward(scaler, kInputs);
    CATCH_CHECK(scaler.step(p.optimizer));
    scaler.update();
  };
  good_step();
  good_step();
  CATCH_CHECK(scaler.current_scale() == 8.0);
  CATCH_CHECK(scaler.state().growth_tracker == 2);
  good_step();
  CATCH_CHECK(scaler.current_scale() == 16.0);
  CATCH_CHECK(scaler.state().growth_tracker == 0);
  good_step();
  good_step();
  at::Tensor x = kInputs.clone();
  x[0] = std::numeric_limits<float>::infinity();
  p.backward(scaler, x);
  CATCH_CHECK_FALSE(scaler.step(p.optimizer));
  scaler.update();
  CATCH_CHECK(scaler.current_scale() == 8.0);
  good_step();
  good_step();
  CATCH_CHECK(scaler.current_scale() == 8.0);  // only two good steps since the skip
  good_step();
  CATCH_CHECK(scaler.current_scale() == 16.0);
}

CATCH_TEST_CASE("growth that would overflow float32 keeps the scale") {
  GradScaler::Options o = options(2e38, 1);
  GradScaler scaler(o, at::kCPU);
  Problem p;
  p.backward(scaler, at::full({4}, 1e-3f));
  CATCH_CHECK(scaler.step(p.optimizer));
  scaler.update();
  CATCH_CHECK(scaler.current_scale() == static_cast<double>(2e38f));
}

CATCH_TEST_CASE("unscale divides by a scale that is not a power of two as PyTorch does (× float32 1/scale)") {
  const bool allow_fused = GENERATE(true, false);
  CATCH_CAPTURE(allow_fused);
  GradScaler scaler(options(3.0, 2000, allow_fused), at::kCPU);
  Problem p;
  p.backward(scaler, kInputs);
  const at::Tensor scaled = p.weights.grad().clone();
  CATCH_CHECK(at::allclose(scaled, kInputs * 3.0f));
  scaler.unscale_(p.optimizer);
  const float inverse = static_cast<float>(1.0 / 3.0);
  CATCH_CHECK(at::equal(p.weights.grad(), scaled * inverse));
  CATCH_CHECK(at::allclose(p.weights.grad(), kInputs, 1e-6, 1e-7));
  // A second unscale in the same step would divide twice: refused.
  CATCH_CHECK_THROWS_AS(scaler.unscale_(p.optimizer), std::logic_error);
  CATCH_CHECK(scaler.step(p.optimizer));  // step() does not unscale again
  CATCH_CHECK(at::allclose(p.weights, at::arange(1.0, 5.0, at::kFloat) - 0.5f * kInputs, 1e-6, 1e-6));
  scaler.update();
}

CATCH_TEST_CASE("bfloat16 gradients are unscaled in place; float16 gradients are refused") {
  at::Tensor weights = at::ones({4}, at::kBFloat16).requires_grad_(true);
  torch::optim::SGD sgd(std::vector<at::Tensor>{weights}, torch::optim::SGDOptions(0.5));
  GradScaler scaler(options(256.0), at::kCPU);
  scaler.scale((weights * kInputs.to(at::kBFloat16)).sum()).backward();
  CATCH_CHECK(weights.grad().scalar_type() == at::kBFloat16);
  scaler.unscale_(sgd);
  CATCH_CHECK(at::equal(weights.grad(), kInputs.to(at::kBFloat16)));
  scaler.step(sgd);
  scaler.update();

  at::Tensor half = at::ones({4}, at::kHalf).requires_grad_(true);
  torch::optim::SGD sgd_half(std::vector<at::Tensor>{half}, torch::optim::SGDOptions(0.5));
  half.mutable_grad() = at::ones({4}, at::kHalf);
  CATCH_CHECK_THROWS_AS(scaler.unscale_(sgd_half), std::invalid_argument);
}

CATCH_TEST_CASE("the plain-op path and the fused kernels agree step for step") {
  if (!trainer::engine::compat::fused_amp_ops_available(at::kCPU)) {
    // LibTorch < 2.3 has no fused CPU kernels: the plain path is the only one here.
    GradScaler scaler(options(8.0), at::kCPU);
    CATCH_CHECK_FALSE(scaler.fused());
    return;
  }
  GradScaler fused(options(1e30, 2, true), at::kCPU);
  GradScaler plain(options(1e30, 2, false), at::kCPU);
  CATCH_CHECK(fused.fused());
  CATCH_CHECK_FALSE(plain.fused());
  Problem a, b;
  for (int i = 0; i < 12; ++i) {
    at::Tensor x = kInputs * static_cast<float>(1e8 * (i % 4 + 1));  // overflows at the larger scales
    a.backward(fused, x);
    b.backward(plain, x);
    CATCH_CHECK(fused.step(a.optimizer) == plain.step(b.optimizer));
    fused.update();
    plain.update();
    CATCH_CHECK(fused.current_scale() == plain.current_scale());
    CATCH_CHECK(fused.state().growth_tracker == plain.state().growth_tracker);
    CATCH_CHECK(at::equal(a.weights, b.weights));
  }
  CATCH_CHECK(fused.skipped_steps() > 0);
  CATCH_CHECK(fused.skipped_steps() == plain.skipped_steps());
}

CATCH_TEST_CASE("disabled: scale() is the identity and step() always steps") {
  GradScaler::Options o;
  o.enabled = false;
  GradScaler scaler(o, at::kCPU);
  Problem p;
  p.backward(scaler, kInputs);
  CATCH_CHECK(at::equal(p.weights.grad(), kInputs));
  scaler.unscale_(p.optimizer);
  CATCH_CHECK(at::equal(p.weights.grad(), kInputs));
  CATCH_CHECK(scaler.step(p.optimizer));
  scaler.update();
  CATCH_CHECK(at::allclose(p.weights, at::arange(1.0, 5.0, at::kFloat) - 0.5f * kInputs));
}

CATCH_TEST_CASE("options out of range are refused") {
  auto make = [](double init, double growth, double backoff, int64_t interval) {
    GradScaler::Options o;
    o.init_scale = init;
    o.growth_factor = growth;
    o.backoff_factor = backoff;
    o.growth_interval = interval;
    return GradScaler(o, at::kCPU);
  };
  CATCH_CHECK_THROWS_AS(make(0.0, 2.0, 0.5, 10), std::invalid_argument);
  CATCH_CHECK_THROWS_AS(make(1.0, 1.0, 0.5, 10), std::invalid_argument);
  CATCH_CHECK_THROWS_AS(make(1.0, 2.0, 1.0, 10), std::invalid_argument);
  CATCH_CHECK_THROWS_AS(make(1.0, 2.0, 0.5, 0), std::invalid_argument);
  CATCH_CHECK_NOTHROW(make(1.0, 2.0, 0.5, 1));
}

CATCH_TEST_CASE("scaler state goes through a checkpoint and the resumed scaler continues identically") {
  // A scaler with a history: backed off once, then two good steps towards the next growth.
  GradScaler original(options(65536.0, 3), at::kCPU);
  Problem p;
  at::Tensor x = kInputs.clone();
  x[1] = std::numeric_limits<float>::quiet_NaN();
  p.backward(original, x);
  original.step(p.optimizer);
  original.update();
  for (int i = 0; i < 2; ++i) {
    p.backward(original, kInputs);
    original.step(p.optimizer);
    original.update();
  }
  const GradScalerState saved = original.state();
  CATCH_CHECK(saved.scale == 32768.0);
  CATCH_CHECK(saved.growth_tracker == 2);

  // Through serialize_checkpoint / load_checkpoint with a real model and optimizer.
  trainer::config::Node root = trainer::config::Node::map();
  root.set("model", trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/mlp.yaml").root);
  auto model = trainer::models::ModelRegistry::global().create(trainer::config::ConfigView(root).sub("model"),
                                                               trainer::models::InputSpec{{1, 28, 28}, 10});
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  trainer::engine::LoopState state;
  state.global_step = 3;
  state.precision = "16-mixed";
  state.grad_scaler = saved;
  char dir_template[] = "/tmp/grad_scaler_test_XXXXXX";
  CATCH_REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/last.ckpt";
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, state, "seed: 1\n"));
  trainer::engine::LoopState loaded = trainer::engine::load_checkpoint(path, *model, &adam, false);
  ::unlink(path.c_str());
  ::rmdir(dir_template);
  CATCH_CHECK(loaded.precision == "16-mixed");
  CATCH_REQUIRE(loaded.grad_scaler.has_value());
  CATCH_CHECK(loaded.grad_scaler->scale == saved.scale);
  CATCH_CHECK(loaded.grad_scaler->growth_tracker == saved.growth_tracker);

  GradScaler resumed(options(65536.0, 3), at::kCPU);
  resumed.load_state(*loaded.grad_scaler);
  // One more good step grows both by the same rule.
  Problem a, b;
  a.backward(original, kInputs);
  b.backward(resumed, kInputs);
  original.step(a.optimizer);
  resumed.step(b.optimizer);
  original.update();
  resumed.update();
  CATCH_CHECK(resumed.current_scale() == 65536.0);
  CATCH_CHECK(resumed.current_scale() == original.current_scale());
  CATCH_CHECK(resumed.state().growth_tracker == original.state().growth_tracker);
}

CATCH_TEST_CASE("a checkpoint without loss scaling has no scaler state") {
  trainer::config::Node root = trainer::config::Node::map();
  root.set("model", trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/mlp.yaml").root);
  auto model = trainer::models::ModelRegistry::global().create(trainer::config::ConfigView(root).sub("model"),
                                                               trainer::models::InputSpec{{1, 28, 28}, 10});
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  trainer::engine::LoopState state;
  state.precision = "bf16-mixed";
  char dir_template[] = "/tmp/grad_scaler_test_XXXXXX";
  CATCH_REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/last.ckpt";
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, state, ""));
  trainer::engine::LoopState loaded = trainer::engine::load_checkpoint(path, *model, &adam, false);
  ::unlink(path.c_str());
  ::rmdir(dir_template);
  CATCH_CHECK(loaded.precision == "bf16-mixed");
  CATCH_CHECK_FALSE(loaded.grad_scaler.has_value());
}
