// The peak FLOP/s table by the names CUDA reports for real GPUs (as torch.cuda.get_device_name
// prints them), the math mode each precision trains in, and FlopsThroughput's FLOP/s and MFU.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/profiling/gpu_peak_flops.h"

#include <string>

#include <catch2/catch.hpp>

#include "trainer/engine/profiling/flops_throughput.h"

namespace {

using trainer::engine::find_gpu_peak;
using trainer::engine::MathMode;
using trainer::engine::Precision;

std::string model_of(const std::string& device_name) {
  const auto* peak = find_gpu_peak(device_name);
  return peak == nullptr ? "<unknown>" : peak->model;
}

double tflops(const std::string& device_name, MathMode mode) {
  const auto* peak = find_gpu_peak(device_name);
  if (peak == nullptr) return -1;
  const auto flops = peak->flops(mode);
  return flops ? *flops / 1e12 : 0;
}

}  // namespace

CATCH_TEST_CASE("CUDA device names find their table entry; similar names do not mix") {
  CATCH_CHECK(model_of("NVIDIA H100 80GB HBM3") == "H100 SXM");
  CATCH_CHECK(model_of("NVIDIA H100 PCIe") == "H100 PCIe");
  CATCH_CHECK(model_of("NVIDIA H100 NVL") == "H100 NVL");
  CATCH_CHECK(model_of("NVIDIA H200") == "H200 SXM");
  CATCH_CHECK(model_of("NVIDIA H200 NVL") == "H200 NVL");
  CATCH_CHECK(model_of("NVIDIA GH200 480GB") == "GH200");
  CATCH_CHECK(model_of("NVIDIA A100-SXM4-40GB") == "A100");
  CATCH_CHECK(model_of("NVIDIA A100-SXM4-80GB") == "A100");
  CATCH_CHECK(model_of("NVIDIA A100-PCIE-40GB") == "A100");
  CATCH_CHECK(model_of("NVIDIA A100 80GB PCIe") == "A100");
  CATCH_CHECK(model_of("NVIDIA A10") == "A10");  // not the A100
  CATCH_CHECK(model_of("NVIDIA A10G") == "A10G");
  CATCH_CHECK(model_of("NVIDIA A40") == "A40");
  CATCH_CHECK(model_of("NVIDIA L4") == "L4");  // not the L40
  CATCH_CHECK(model_of("NVIDIA L40") == "L40");
  CATCH_CHECK(model_of("NVIDIA L40S") == "L40S");
  CATCH_CHECK(model_of("Tesla T4") == "T4");
  CATCH_CHECK(model_of("Tesla V100-SXM2-16GB") == "V100 SXM2");
  CATCH_CHECK(model_of("Tesla V100-PCIE-32GB") == "V100 PCIe");
  CATCH_CHECK(model_of("Tesla V100S-PCIE-32GB") == "V100S PCIe");
  CATCH_CHECK(model_of("NVIDIA GeForce RTX 3090") == "GeForce RTX 3090");
  CATCH_CHECK(model_of("NVIDIA GeForce RTX 3090 Ti") == "GeForce RTX 3090 Ti");
  CATCH_CHECK(model_of("NVIDIA GeForce RTX 4090") == "GeForce RTX 4090");
  CATCH_CHECK(model_of("nvidia h100 80gb hbm3") == "H100 SXM");  // case ignored
  CATCH_CHECK(model_of("NVIDIA GeForce GTX 1080") == "<unknown>");
  CATCH_CHECK(model_of("NVIDIA B200") == "<unknown>");
  CATCH_CHECK(model_of("") == "<unknown>");
}

CATCH_TEST_CASE("dense datasheet peaks per math mode; a mode the GPU lacks has none") {
  CATCH_CHECK(tflops("NVIDIA H100 80GB HBM3", MathMode::kBFloat16) == Approx(989.5));
  CATCH_CHECK(tflops("NVIDIA H100 80GB HBM3", MathMode::kTf32) == Approx(494.5));
  CATCH_CHECK(tflops("NVIDIA H100 80GB HBM3", MathMode::kFloat32) == Approx(67));
  CATCH_CHECK(tflops("NVIDIA A100-SXM4-80GB", MathMode::kFloat16) == Approx(312));
  CATCH_CHECK(tflops("NVIDIA A100-SXM4-80GB", MathMode::kFloat64) == Approx(19.5));
  CATCH_CHECK(tflops("NVIDIA L4", MathMode::kBFloat16) == Approx(121));
  CATCH_CHECK(tflops("Tesla T4", MathMode::kFloat16) == Approx(65));
  CATCH_CHECK(tflops("Tesla T4", MathMode::kBFloat16) == 0);  // Turing has no bfloat16 tensor cores
  CATCH_CHECK(tflops("Tesla T4", MathMode::kTf32) == tflops("Tesla T4", MathMode::kFloat32));  // no TF32 either
  CATCH_CHECK(tflops("NVIDIA GeForce RTX 4090", MathMode::kFloat64) == 0);
  // Sanity across the table: tensor-core modes are never slower than plain fp32.
  for (const char* name : {"NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA A10", "NVIDIA L40S", "Tesla V100-SXM2-16GB"}) {
    CATCH_INFO(name);
    CATCH_CHECK(tflops(name, MathMode::kFloat16) >= tflops(name, MathMode::kTf32));
    CATCH_CHECK(tflops(name, MathMode::kTf32) >= tflops(name, MathMode::kFloat32));
  }
}

CATCH_TEST_CASE("each precision setting trains in one math mode") {
  using trainer::engine::math_mode_for;
  CATCH_CHECK(math_mode_for(Precision::k32True, false) == MathMode::kFloat32);
  CATCH_CHECK(math_mode_for(Precision::k32True, true) == MathMode::kTf32);
  CATCH_CHECK(math_mode_for(Precision::k16Mixed, false) == MathMode::kFloat16);
  CATCH_CHECK(math_mode_for(Precision::k16True, true) == MathMode::kFloat16);
  CATCH_CHECK(math_mode_for(Precision::kBf16Mixed, false) == MathMode::kBFloat16);
  CATCH_CHECK(math_mode_for(Precision::kBf16True, false) == MathMode::kBFloat16);
  CATCH_CHECK(math_mode_for(Precision::k64True, true) == MathMode::kFloat64);
  CATCH_CHECK(std::string(trainer::engine::math_mode_name(MathMode::kTf32)) == "tf32");
}

CATCH_TEST_CASE("a model of convolutions and matrix products in two math modes: the least time of its mix") {
  const auto* h100 = find_gpu_peak("NVIDIA H100 80GB HBM3");
  CATCH_REQUIRE(h100 != nullptr);
  // One mode, or a model of one kind: that peak.
  CATCH_CHECK(*h100->blended_flops(MathMode::kBFloat16, MathMode::kBFloat16, 0.7) == Approx(989.5e12));
  CATCH_CHECK(*h100->blended_flops(MathMode::kTf32, MathMode::kFloat32, 1.0) == Approx(494.5e12));  // resnet-like
  CATCH_CHECK(*h100->blended_flops(MathMode::kTf32, MathMode::kFloat32, 0.0) == Approx(67e12));     // mlp
  // 90 % convolutions at 494.5 and 10 % products at 67 TFLOP/s: 1 / (0.9/494.5 + 0.1/67).
  CATCH_CHECK(*h100->blended_flops(MathMode::kTf32, MathMode::kFloat32, 0.9) ==
              Approx(1e12 / (0.9 / 494.5 + 0.1 / 67)));
  // Between the two peaks, and below the faster one.
  const double mixed = *h100->blended_flops(MathMode::kTf32, MathMode::kFloat32, 0.5);
  CATCH_CHECK(mixed > 67e12);
  CATCH_CHECK(mixed < 494.5e12);
  // A mode the GPU lacks matters only when the model has FLOPs of that kind.
  const auto* t4 = find_gpu_peak("Tesla T4");
  CATCH_CHECK_FALSE(t4->blended_flops(MathMode::kBFloat16, MathMode::kFloat32, 0.5).has_value());
  CATCH_CHECK(*t4->blended_flops(MathMode::kBFloat16, MathMode::kFloat32, 0.0) == Approx(8.1e12));
}

CATCH_TEST_CASE("FlopsThroughput: FLOP/s from samples and seconds, MFU only with a peak") {
  trainer::engine::FlopsThroughput throughput;
  trainer::engine::MetricRow none;
  throughput.add_to(none, 1000, 1.0);
  CATCH_CHECK(none.empty());  // FLOPs unknown: no columns
  CATCH_CHECK(throughput.text(1000, 1.0).empty());

  throughput.flops_per_sample = 3.0 * 469504;  // the shipped mlp
  trainer::engine::MetricRow cpu;
  throughput.add_to(cpu, 2000, 0.5);
  CATCH_REQUIRE(cpu.size() == 1);
  CATCH_CHECK(cpu[0].first == "flops_per_sec");
  CATCH_CHECK(cpu[0].second == Approx(3.0 * 469504 * 4000));
  CATCH_CHECK(throughput.text(2000, 0.5) == " 5.63 GFLOP/s");

  throughput.peak_flops = 2 * 989.5e12;  // two H100s in bf16
  trainer::engine::MetricRow gpu;
  throughput.add_to(gpu, 1'000'000, 1.0);
  CATCH_REQUIRE(gpu.size() == 2);
  CATCH_CHECK(gpu[1].first == "mfu");
  CATCH_CHECK(gpu[1].second == Approx(3.0 * 469504 * 1e6 / (2 * 989.5e12)));
  CATCH_CHECK(throughput.text(1'000'000, 1.0) == " 1.41 TFLOP/s MFU 0.1 %");
}
