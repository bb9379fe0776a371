// The optimizer factory (optimizer_factory.h): each `optimizer.name` gives LibTorch's optimizer
// with the configured hyper-parameters, optimizer.fused picks the step (the CPU loops for float32
// and float64, LibTorch's loop when false; true where none exists is refused), set_lr reaches
// every parameter group, and clipping by value clamps while clipping by norm scales all gradients
// together to the global norm asked for, in the same direction.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/optim/optimizer_factory.h"

#include <cmath>
#include <typeinfo>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "trainer/util/error.h"

namespace {

using trainer::engine::OptimizerKind;
using trainer::engine::OptimizerOptions;

std::vector<at::Tensor> parameters_with_gradients() {
  at::manual_seed(7);
  std::vector<at::Tensor> parameters{at::randn({4, 3}).requires_grad_(true), at::randn({3}).requires_grad_(true)};
  parameters[0].mutable_grad() = at::full({4, 3}, 3.0);
  parameters[1].mutable_grad() = at::tensor({-4.0f, 0.5f, 0.0f});
  return parameters;
}

double global_norm(const std::vector<at::Tensor>& parameters) {
  double squares = 0;
  for (const auto& p : parameters) squares += p.grad().pow(2).sum().item<double>();
  return std::sqrt(squares);
}

}  // namespace

CATCH_TEST_CASE("each optimizer name gives LibTorch's optimizer with the configured settings") {
  OptimizerOptions o;
  o.lr = 0.05;
  o.weight_decay = 0.01;
  o.momentum = 0.9;
  o.nesterov = true;
  o.betas = {0.8, 0.95};
  const at::Device cpu(at::kCPU);
  std::vector<at::Tensor> parameters = parameters_with_gradients();

  o.kind = OptimizerKind::kSgd;
  CATCH_CHECK(trainer::engine::optimizer_step(o, cpu, at::kFloat) == trainer::engine::OptimizerStep::kFusedCpu);
  auto sgd = trainer::engine::make_optimizer(o, parameters, cpu);
  auto* sgd_options = dynamic_cast<torch::optim::SGDOptions*>(&sgd->param_groups()[0].options());
  CATCH_REQUIRE(sgd_options != nullptr);
  CATCH_CHECK(sgd_options->lr() == 0.05);
  CATCH_CHECK(sgd_options->momentum() == 0.9);
  CATCH_CHECK(sgd_options->nesterov());
  CATCH_CHECK(sgd_options->weight_decay() == 0.01);

  o.kind = OptimizerKind::kAdam;
  auto adam = trainer::engine::make_optimizer(o, parameters, cpu);
  auto* adam_options = dynamic_cast<torch::optim::AdamOptions*>(&adam->param_groups()[0].options());
  CATCH_REQUIRE(adam_options != nullptr);
  CATCH_CHECK(std::get<0>(adam_options->betas()) == 0.8);
  CATCH_CHECK(std::get<1>(adam_options->betas()) == 0.95);

  o.kind = OptimizerKind::kAdamW;
  auto adamw = trainer::engine::make_optimizer(o, parameters, cpu);
  CATCH_CHECK(dynamic_cast<torch::optim::AdamWOptions*>(&adamw->param_groups()[0].options()) != nullptr);

  trainer::engine::set_lr(*adamw, 0.125);
  for (auto& group : adamw->param_groups()) CATCH_CHECK(group.options().get_lr() == 0.125);
}

CATCH_TEST_CASE("optimizer.fused picks the step, and true where there is no fused step is refused") {
  using trainer::engine::optimizer_step;
  using trainer::engine::OptimizerStep;
  OptimizerOptions o;
  const at::Device cpu(at::kCPU);
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    o.kind = kind;
    o.fused.reset();
    CATCH_CHECK(optimizer_step(o, cpu, at::kFloat) == OptimizerStep::kFusedCpu);
    CATCH_CHECK(optimizer_step(o, cpu, at::kDouble) == OptimizerStep::kFusedCpu);
    CATCH_CHECK(optimizer_step(o, cpu, at::kBFloat16) == OptimizerStep::kLoop);  // no loop for bfloat16: LibTorch's
    o.fused = false;
    CATCH_CHECK(optimizer_step(o, cpu, at::kFloat) == OptimizerStep::kLoop);
    o.fused = true;
    CATCH_CHECK(optimizer_step(o, cpu, at::kFloat) == OptimizerStep::kFusedCpu);
    try {
      optimizer_step(o, cpu, at::kBFloat16);
      CATCH_FAIL("fused=true on bfloat16 parameters was accepted");
    } catch (const trainer::Error& e) {
      CATCH_CHECK(e.where() == "optimizer.fused");
      CATCH_CHECK_THAT(e.what(), Catch::Matchers::Contains("BFloat16 (precision=bf16-true)") &&
                                     Catch::Matchers::Contains("fused=null"));
    }
  }
  o.fused.reset();
  std::vector<at::Tensor> parameters = parameters_with_gradients();
  o.fused = false;
  auto loop = trainer::engine::make_optimizer(o, parameters, cpu);
  CATCH_CHECK(trainer::engine::optimizer_step_text(OptimizerStep::kLoop, o, cpu, at::kFloat) ==
              "LibTorch's loop of operations per parameter (optimizer.fused=false)");
  o.fused.reset();
  CATCH_CHECK(trainer::engine::optimizer_step_text(OptimizerStep::kLoop, o, cpu, at::kBFloat16) ==
              "LibTorch's loop of operations per parameter (no fused CPU step for BFloat16 (precision=bf16-true) "
              "parameters)");
  const torch::optim::Optimizer& made = *loop;
  CATCH_CHECK(typeid(made) == typeid(torch::optim::AdamW));  // LibTorch's own class, not a subclass
}

CATCH_TEST_CASE("clipping by value clamps each gradient element") {
  std::vector<at::Tensor> parameters = parameters_with_gradients();
  trainer::engine::clip_gradients(parameters, 1.0, /*by_norm=*/false);
  CATCH_CHECK(parameters[0].grad().max().item<float>() == 1.0f);
  CATCH_CHECK(parameters[1].grad()[0].item<float>() == -1.0f);
  CATCH_CHECK(parameters[1].grad()[1].item<float>() == 0.5f);  // inside the range: unchanged
}

CATCH_TEST_CASE("clipping by norm scales all gradients together to the norm asked for") {
  std::vector<at::Tensor> parameters = parameters_with_gradients();
  const double before = global_norm(parameters);  // sqrt(12 * 9 + 16 + 0.25)
  CATCH_REQUIRE(before > 2.0);
  const at::Tensor direction = parameters[0].grad().clone() / before;
  trainer::engine::clip_gradients(parameters, 2.0, /*by_norm=*/true);
  CATCH_CHECK(std::abs(global_norm(parameters) - 2.0) < 1e-4);
  CATCH_CHECK(at::allclose(parameters[0].grad() / 2.0, direction, 1e-4, 1e-5));

  // Below the limit nothing changes.
  std::vector<at::Tensor> small = parameters_with_gradients();
  const at::Tensor unchanged = small[1].grad().clone();
  trainer::engine::clip_gradients(small, 100.0, /*by_norm=*/true);
  CATCH_CHECK(at::allclose(small[1].grad(), unchanged, 1e-5, 1e-6));

  // No gradient at all (a frozen model): nothing to do, no error.
  std::vector<at::Tensor> frozen{at::ones({2}).requires_grad_(true)};
  trainer::engine::clip_gradients(frozen, 1.0, /*by_norm=*/true);
  CATCH_CHECK_FALSE(frozen[0].grad().defined());
}

CATCH_TEST_CASE("a pipeline stage clips by the whole model's norm: the other stages' squares are summed in") {
  // Stage 0 holds parameters[0], stage 1 parameters[1]; clipping each with the other's squared
  // norm added gives what clipping both together gives.
  std::vector<at::Tensor> together = parameters_with_gradients();
  trainer::engine::clip_gradients(together, 2.0, /*by_norm=*/true);
  std::vector<at::Tensor> both = parameters_with_gradients();
  const double squared[2] = {std::pow(both[0].grad().norm().item<double>(), 2),
                             std::pow(both[1].grad().norm().item<double>(), 2)};
  for (int stage = 0; stage < 2; ++stage) {
    std::vector<at::Tensor> mine{both[static_cast<size_t>(stage)]};
    int calls = 0;
    trainer::engine::clip_gradients(mine, 2.0, /*by_norm=*/true, [&](at::Tensor& sum) {
      ++calls;
      sum.add_(squared[1 - stage]);
    });
    CATCH_CHECK(calls == 1);
    CATCH_CHECK(at::allclose(mine[0].grad(), together[static_cast<size_t>(stage)].grad(), 1e-5, 1e-6));
  }
  // A stage without gradients still takes part (the others wait for its share).
  std::vector<at::Tensor> frozen{at::ones({2}).requires_grad_(true)};
  int calls = 0;
  trainer::engine::clip_gradients(frozen, 1.0, /*by_norm=*/true, [&](at::Tensor& sum) {
    ++calls;
    CATCH_CHECK(sum.item<float>() == 0.0f);
  });
  CATCH_CHECK(calls == 1);
}
