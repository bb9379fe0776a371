// FLOP counting and MFU set-up (throughput_setup.h): one sample's forward FLOPs counted from the
// operators the probe runs, with the model put back in the mode it was in; the model's own count
// when the probe counts nothing or fails; and on the CPU a training step's FLOPs (3x forward)
// without a peak, so flops_per_sec is logged and MFU is not.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/profiling/throughput_setup.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/nn/modules/linear.h>

namespace {

// A linear classifier of 6 features into 4 classes; `own_count` is what it claims for itself.
class Linear final : public trainer::models::Model {
 public:
  explicit Linear(int64_t own_count) : own_count_(own_count) {
    layer_ = register_module("layer", torch::nn::Linear(6, 4));
  }
  at::Tensor forward(const at::Tensor& inputs) override { return layer_->forward(inputs); }
  int64_t flops_per_sample() const override { return own_count_; }

 private:
  torch::nn::Linear layer_{nullptr};
  int64_t own_count_;
};

}  // namespace

CATCH_TEST_CASE("the forward FLOPs are counted from one sample's probe, the mode restored") {
  Linear model(/*own_count=*/999);
  model.train();
  bool was_eval_during_probe = false;
  const trainer::engine::ForwardFlops counted = trainer::engine::count_forward_flops(model, [&] {
    was_eval_during_probe = !model.is_training();
    model.forward(at::zeros({1, 6}));
  });
  CATCH_CHECK(counted.total == 2 * 6 * 4);  // one sample: 2 * in * out multiply-adds
  CATCH_CHECK(counted.convolution == 0);
  CATCH_CHECK(counted.source.find("counted") != std::string::npos);
  CATCH_CHECK(was_eval_during_probe);
  CATCH_CHECK(model.is_training());
}

CATCH_TEST_CASE("a probe that fails or counts nothing falls back to the model's own count") {
  Linear model(/*own_count=*/120);
  const auto failed = trainer::engine::count_forward_flops(model, [] { throw std::runtime_error("no such operator"); });
  CATCH_CHECK(failed.total == 120);
  CATCH_CHECK(failed.source == "the model's own count");
  const auto nothing = trainer::engine::count_forward_flops(model, [] {});
  CATCH_CHECK(nothing.total == 120);

  Linear unknown(/*own_count=*/0);
  CATCH_CHECK(trainer::engine::count_forward_flops(unknown, [] {}).total == 0);
}

CATCH_TEST_CASE("on the CPU a training step counts 3x forward and there is no peak (no MFU)") {
  trainer::engine::ForwardFlops forward;
  forward.total = 48;
  forward.source = "test";
  const auto throughput = trainer::engine::make_flops_throughput(forward, at::Device(at::kCPU),
                                                                 trainer::engine::Precision::k32True, 2, true);
  CATCH_CHECK(throughput.flops_per_sample == 3.0 * 48);
  CATCH_CHECK(throughput.peak_flops == 0);
  CATCH_CHECK(throughput.flops_per_sec(10, 2.0) == 3.0 * 48 * 10 / 2.0);

  const auto unknown =
      trainer::engine::make_flops_throughput({}, at::Device(at::kCPU), trainer::engine::Precision::k32True, 1, true);
  CATCH_CHECK(unknown.flops_per_sample == 0);
}
