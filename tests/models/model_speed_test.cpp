// Forward + backward time per batch of 128 for the built-ins on the CPU. Hidden ([.bench]): run
// with `models_model_speed_test "[.bench]"` (optionally `-s` for the numbers) on a quiet machine.
#define CATCH_CONFIG_PREFIX_ALL
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <catch2/catch.hpp>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/models/model_registry.h"

namespace {

using trainer::config::ConfigView;
using trainer::config::Node;
using trainer::models::InputSpec;

void time_model(const std::string& name, const InputSpec& spec, int iterations) {
  Node root = Node::map();
  Node model_config =
      trainer::config::load_yaml_file(std::string(TRAINER_SOURCE_DIR) + "/configs/model/" + name + ".yaml").root;
  model_config.set("in_channels", Node::integer(spec.sample_shape[0]));
  root.set("model", model_config);
  auto model = trainer::models::ModelRegistry::global().create(ConfigView(root).sub("model"), spec);
  model->train();
  std::vector<int64_t> shape{128};
  shape.insert(shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
  const at::Tensor inputs = at::randn(shape);
  const at::Tensor labels = at::randint(0, spec.num_classes, {128}, at::kLong);
  auto step = [&] {
    model->zero_grad();
    at::cross_entropy_loss(model->forward(inputs), labels).backward();
  };
  step();  // warm-up: first-touch allocations
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
  const double gflops = 3.0 * model->flops_per_sample() * 128 / seconds / 1e9;  // fwd + 2x bwd
  std::printf("%-8s %s threads=%d: %8.2f ms per batch of 128 (%7.0f samples/s, ~%.1f GFLOP/s)  %s\n", name.c_str(),
              trainer::models::shape_string(spec.sample_shape).c_str(), at::get_num_threads(), seconds * 1e3,
              128 / seconds, gflops, model->describe().c_str());
  CATCH_CHECK(seconds > 0.0);
}

}  // namespace

CATCH_TEST_CASE("forward + backward speed on the CPU", "[.bench][models]") {
  if (const char* threads = std::getenv("TRAINER_BENCH_THREADS")) at::set_num_threads(std::atoi(threads));
  const InputSpec fashion{{1, 28, 28}, 10};
  time_model("mlp", fashion, 50);
  time_model("cnn", fashion, 10);
  time_model("resnet", fashion, 2);
  time_model("resnet", {{3, 32, 32}, 10}, 2);
}
