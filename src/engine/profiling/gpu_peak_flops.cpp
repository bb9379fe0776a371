#include "trainer/engine/profiling/gpu_peak_flops.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <set>
#include <sstream>

namespace trainer::engine {

namespace {

struct Entry {
  std::initializer_list<const char*> words;  // all must appear in the device name
  GpuPeak peak;
};

// TFLOP/s from NVIDIA's datasheets, dense (sparse figures halved). fp64 is the tensor-core
// figure where the GPU has one (DGEMM runs there). Pre-Ampere GPUs have no TF32: float32 matrix
// products run at the fp32 rate, so their tf32 column repeats fp32. GeForce tensor figures are
// those with float32 accumulation (what PyTorch uses). Order matters: more specific names first.
const Entry kTable[] = {
    {{"h100", "nvl"}, {"H100 NVL", 60, 60, 417.5, 835.5, 835.5}},
    {{"h100", "pcie"}, {"H100 PCIe", 51, 51, 378, 756.5, 756.5}},
    {{"h100"}, {"H100 SXM", 67, 67, 494.5, 989.5, 989.5}},
    {{"gh200"}, {"GH200", 67, 67, 494.5, 989.5, 989.5}},
    {{"h200", "nvl"}, {"H200 NVL", 60, 60, 417.5, 835.5, 835.5}},
    {{"h200"}, {"H200 SXM", 67, 67, 494.5, 989.5, 989.5}},
    {{"a100"}, {"A100", 19.5, 19.5, 156, 312, 312}},  // SXM and PCIe, 40 and 80 GB: same peaks
    {{"a10g"}, {"A10G", 0, 31.2, 62.5, 125, 125}},    // no NVIDIA datasheet: the A10's figures
    {{"a10"}, {"A10", 0, 31.2, 62.5, 125, 125}},
    {{"a40"}, {"A40", 0, 37.4, 74.8, 149.7, 149.7}},
    {{"l40s"}, {"L40S", 0, 91.6, 183, 362.05, 362.05}},
    {{"l40"}, {"L40", 0, 90.5, 90.5, 181, 181}},
    {{"l4"}, {"L4", 0, 30.3, 60, 121, 121}},
    {{"t4"}, {"T4", 0, 8.1, 8.1, 0, 65}},
    {{"v100s"}, {"V100S PCIe", 8.2, 16.4, 16.4, 0, 130}},
    {{"v100", "pcie"}, {"V100 PCIe", 7, 14, 14, 0, 112}},
    {{"v100"}, {"V100 SXM2", 7.8, 15.7, 15.7, 0, 125}},
    {{"3090", "ti"}, {"GeForce RTX 3090 Ti", 0, 40, 40, 80, 80}},
    {{"3090"}, {"GeForce RTX 3090", 0, 35.6, 35.6, 71, 71}},
    {{"4090"}, {"GeForce RTX 4090", 0, 82.6, 82.6, 165.2, 165.2}},
};

std::set<std::string> words_of(const std::string& name) {
  std::string normal;
  for (const char c : name) {
    normal += (c == '-' || c == '_') ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::set<std::string> words;
  std::istringstream in(normal);
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

}  // namespace

const char* math_mode_name(MathMode mode) {
  switch (mode) {
    case MathMode::kFloat64:
      return "fp64";
    case MathMode::kFloat32:
      return "fp32";
    case MathMode::kTf32:
      return "tf32";
    case MathMode::kBFloat16:
      return "bf16";
    case MathMode::kFloat16:
      return "fp16";
  }
  return "?";
}

MathMode math_mode_for(Precision precision, bool tf32_allowed) {
  switch (precision) {
    case Precision::k64True:
      return MathMode::kFloat64;
    case Precision::k32True:
      return tf32_allowed ? MathMode::kTf32 : MathMode::kFloat32;
    case Precision::k16Mixed:
    case Precision::k16True:
      return MathMode::kFloat16;
    case Precision::kBf16Mixed:
    case Precision::kBf16True:
      return MathMode::kBFloat16;
  }
  return MathMode::kFloat32;
}

std::optional<double> GpuPeak::flops(MathMode mode) const {
  double tflops = 0;
  switch (mode) {
    case MathMode::kFloat64:
      tflops = fp64;
      break;
    case MathMode::kFloat32:
      tflops = fp32;
      break;
    case MathMode::kTf32:
      tflops = tf32;
      break;
    case MathMode::kBFloat16:
      tflops = bf16;
      break;
    case MathMode::kFloat16:
      tflops = fp16;
      break;
  }
  if (tflops <= 0) return std::nullopt;
  return tflops * 1e12;
}

std::optional<double> GpuPeak::blended_flops(MathMode convolution_mode, MathMode matmul_mode,
                                             double convolution_share) const {
  const double share = std::min(1.0, std::max(0.0, convolution_share));
  const std::optional<double> convolution = flops(convolution_mode);
  const std::optional<double> matmul = flops(matmul_mode);
  if ((share > 0 && !convolution) || (share < 1 && !matmul)) return std::nullopt;
  double seconds_per_flop = 0;  // the least time one FLOP of the model's mix takes
  if (share > 0) seconds_per_flop += share / *convolution;
  if (share < 1) seconds_per_flop += (1 - share) / *matmul;
  return 1 / seconds_per_flop;
}

const GpuPeak* find_gpu_peak(const std::string& device_name) {
  const std::set<std::string> words = words_of(device_name);
  for (const Entry& entry : kTable) {
    bool all = true;
    for (const char* word : entry.words) all = all && words.count(word) > 0;
    if (all) return &entry.peak;
  }
  return nullptr;
}

}  // namespace trainer::engine
