// The optimizer step alone: LibTorch's own Adam / AdamW / SGD (a chain of ATen operations per
// parameter) against trainer's fused CPU step (cpu_fused_optimizer.h) on the same parameter
// shapes, gradients and threads. bench/optimizer_bench.sh runs it beside PyTorch's own optimizers
// from Python and reports the ratios.
//   optimizer_bench --shapes 256x784,256,128x256,128,10x128,10 [--steps 300] [--threads 2]
// Prints one line per case: "<build> <optimizer> <impl> <median ms per step> <min ms>".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/version.h>

#include "trainer/engine/optim/cpu_fused_optimizer.h"

namespace {

std::vector<std::vector<int64_t>> parse_shapes(const std::string& text) {
  std::vector<std::vector<int64_t>> shapes;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    std::vector<int64_t> shape;
    std::stringstream dims(item);
    std::string dim;
    while (std::getline(dims, dim, 'x')) shape.push_back(std::stoll(dim));
    shapes.push_back(shape);
  }
  return shapes;
}

std::unique_ptr<torch::optim::Optimizer> make(const std::string& name, bool fused,
                                              const std::vector<at::Tensor>& params) {
  // The settings of configs/optimizer/<name>.yaml.
  if (fused) {
    if (name == "sgd") return trainer::engine::make_cpu_fused_optimizer(name, params, 0.1, 0, 0, 0, 5e-4, 0.9, true);
    return trainer::engine::make_cpu_fused_optimizer(name, params, 1e-3, 0.9, 0.999, 1e-8, name == "adamw" ? 0.01 : 0.0,
                                                     0, false);
  }
  if (name == "adam") return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-3));
  if (name == "adamw") {
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  }
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(5e-4));
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_text = "256x784,256,128x256,128,10x128,10";
  int steps = 300;
  int threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--shapes") shapes_text = argv[i + 1];
    if (flag == "--steps") steps = std::atoi(argv[i + 1]);
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
  }
  at::set_num_threads(threads);
  const auto shapes = parse_shapes(shapes_text);
  const std::string build =
      "libtorch-" + std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
  for (const std::string name : {"adam", "adamw", "sgd"}) {
    for (bool fused : {false, true}) {
      at::manual_seed(0);
      std::vector<at::Tensor> params;
      for (const auto& shape : shapes) {
        params.push_back(at::randn(shape).requires_grad_(true));
        params.back().mutable_grad() = at::randn(shape) * 1e-2;
      }
      auto optimizer = make(name, fused, params);
      for (int i = 0; i < 20; ++i) optimizer->step();  // states made, caches warm
      std::vector<double> ms;
      for (int i = 0; i < steps; ++i) {
        const auto start = std::chrono::steady_clock::now();
        optimizer->step();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(ms.begin(), ms.end());
      std::printf("%s %s %s %.4f %.4f\n", build.c_str(), name.c_str(),
                  fused ? ("fused-" + trainer::engine::cpu_fused_optimizer_isa()).c_str() : "loop", ms[ms.size() / 2],
                  ms.front());
    }
  }
  return 0;
}
