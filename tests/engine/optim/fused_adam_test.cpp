// The fused Adam/AdamW (fused_adam.h) against LibTorch's own loop on the same parameters and
// gradients: same weights after several steps (float rounding apart), weight decay included, and
// the state round-trips through LibTorch's save/load in both directions, so a checkpoint written
// on one resumes on the other. Runs on the CPU where LibTorch has the fused CPU kernels (2.4+: the
// wheel build); the engine itself uses them on CUDA, whose kernels compute the same formula.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/optim/fused_adam.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/serialize/archive.h>

#include "skip_test.h"

namespace {

using trainer::engine::fused_adam_available;
using trainer::engine::make_fused_adam;

std::vector<at::Tensor> fresh_parameters() {
  at::manual_seed(3);
  return {at::randn({17, 5}).requires_grad_(true), at::randn({5}).requires_grad_(true),
          at::randn({2, 3, 3, 3}).requires_grad_(true)};
}

std::unique_ptr<torch::optim::Optimizer> plain(const std::string& name, std::vector<at::Tensor> params) {
  if (name == "adam") {
    return std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(1e-2).betas(std::make_tuple(0.8, 0.95)).weight_decay(0.1));
  }
  return std::make_unique<torch::optim::AdamW>(
      params, torch::optim::AdamWOptions(1e-2).betas(std::make_tuple(0.8, 0.95)).weight_decay(0.1));
}

std::unique_ptr<torch::optim::Optimizer> fused(const std::string& name, std::vector<at::Tensor> params) {
  return make_fused_adam(name, std::move(params), 1e-2, 0.8, 0.95, 1e-8, 0.1, at::kCPU);
}

// Gradients that differ from step to step but are the same for both optimizers.
void set_gradients(std::vector<at::Tensor>& params, int step) {
  for (size_t i = 0; i < params.size(); ++i) {
    at::manual_seed(100 * step + static_cast<int>(i));
    params[i].mutable_grad() = at::randn_like(params[i]);
  }
}

void run_steps(torch::optim::Optimizer& optimizer, std::vector<at::Tensor>& params, int from, int to) {
  for (int step = from; step < to; ++step) {
    set_gradients(params, step);
    optimizer.step();
  }
}

double largest_difference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, (a[i] - b[i]).abs().max().item<double>());
  return largest;
}

double largest_change(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& start) {
  return largest_difference(a, start);
}

std::vector<at::Tensor> copies(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
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

}  // namespace

CATCH_TEST_CASE("fused Adam and AdamW take the steps LibTorch's loop takes, and share its checkpoints") {
  if (!fused_adam_available(at::kCPU)) {
    CATCH_CHECK(make_fused_adam("adam", fresh_parameters(), 1e-2, 0.8, 0.95, 1e-8, 0.1, at::kCPU) == nullptr);
    trainer::testing::skip_test("this LibTorch has no fused CPU kernels (before 2.4): nothing more to compare here",
                                trainer::testing::Skip::expected);
    return;
  }
  CATCH_CHECK(make_fused_adam("sgd", fresh_parameters(), 1e-2, 0.8, 0.95, 1e-8, 0.1, at::kCPU) == nullptr);
  for (const std::string name : {"adam", "adamw"}) {
    CATCH_DYNAMIC_SECTION(name) {
      auto start = fresh_parameters();
      auto a = fresh_parameters();
      auto b = fresh_parameters();
      auto reference = plain(name, a);
      auto candidate = fused(name, b);
      CATCH_REQUIRE(candidate != nullptr);
      run_steps(*reference, a, 0, 6);
      run_steps(*candidate, b, 0, 6);
      CATCH_CHECK(largest_change(a, start) > 1e-2);  // the steps moved the weights
      CATCH_CHECK(largest_difference(a, b) < 1e-6);

      // A checkpoint of the fused optimizer resumes in LibTorch's, and the other way round: the
      // step counts (bias correction) and moments carry over to copies of the weights.
      auto a2 = copies(a);
      auto b2 = copies(b);
      auto fused_from_plain = fused(name, a2);
      load(*fused_from_plain, saved(*reference));
      auto plain_from_fused = plain(name, b2);
      load(*plain_from_fused, saved(*candidate));
      run_steps(*reference, a, 6, 9);
      run_steps(*fused_from_plain, a2, 6, 9);
      run_steps(*candidate, b, 6, 9);
      run_steps(*plain_from_fused, b2, 6, 9);
      CATCH_CHECK(largest_difference(a, a2) < 1e-6);
      CATCH_CHECK(largest_difference(b, b2) < 1e-6);
      CATCH_CHECK(largest_difference(a, b) < 1e-6);
    }
  }
}
