// Dense peak FLOP/s of common NVIDIA GPUs, per math mode, for model FLOPs utilisation (MFU =
// achieved FLOP/s / peak). Figures are the vendors' datasheet numbers without structured sparsity
// (a datasheet's "with sparsity" figure halved). Matched by the device name CUDA reports
// ("NVIDIA H100 80GB HBM3", "Tesla T4", "NVIDIA A100-SXM4-40GB"); an unknown GPU has no peak.
#pragma once

#include <optional>
#include <string>

#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

// The arithmetic a precision setting trains in on a GPU.
enum class MathMode { kFloat64, kFloat32, kTf32, kBFloat16, kFloat16 };

const char* math_mode_name(MathMode mode);  // "fp64", "fp32", "tf32", "bf16", "fp16"

// 64-true: fp64; 32-true: tf32 when LibTorch lets cuBLAS use TF32 for float32 matrix products
// (`tf32_matmul`, off by default as in PyTorch), else fp32; 16-*: fp16; bf16-*: bf16.
MathMode math_mode_for(Precision precision, bool tf32_matmul);

struct GpuPeak {
  const char* model;  // the table's entry, e.g. "H100 SXM"
  double fp64, fp32, tf32, bf16, fp16;  // TFLOP/s, dense; 0 where the GPU has no such math
  // FLOP/s in `mode`; nullopt where the GPU lacks it (bf16 on a V100).
  std::optional<double> flops(MathMode mode) const;
};

// The table's entry for a CUDA device name (case and '-'/'_' ignored, matched by whole words:
// "A10" is not "A100"); nullptr when the GPU is not in the table.
const GpuPeak* find_gpu_peak(const std::string& device_name);

}  // namespace trainer::engine
