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

// 64-true: fp64; 32-true: tf32 when the library doing the work may use TF32 (`tf32_allowed`:
// cuBLAS for matrix products, off by default; cuDNN for convolutions, on by default; both as in
// PyTorch), else fp32; 16-*: fp16; bf16-*: bf16.
MathMode math_mode_for(Precision precision, bool tf32_allowed);

struct GpuPeak {
  const char* model;                    // the table's entry, e.g. "H100 SXM"
  double fp64, fp32, tf32, bf16, fp16;  // TFLOP/s, dense; 0 where the GPU has no such math
  // FLOP/s in `mode`; nullopt where the GPU lacks it (bf16 on a V100).
  std::optional<double> flops(MathMode mode) const;
  // The peak of a model whose FLOPs are `convolution_share` (0..1) convolutions, run by cuDNN in
  // `convolution_mode`, and the rest matrix products, run by cuBLAS in `matmul_mode`: all its FLOPs
  // over the least time they can take, each kind at its own peak. Under 32-true the two differ by
  // default (LibTorch lets cuDNN use TF32 for float32 convolutions, not cuBLAS for matrix products).
  // nullopt where the GPU lacks a mode the model needs.
  std::optional<double> blended_flops(MathMode convolution_mode, MathMode matmul_mode, double convolution_share) const;
};

// The table's entry for a CUDA device name (case and '-'/'_' ignored, matched by whole words:
// "A10" is not "A100"); nullptr when the GPU is not in the table.
const GpuPeak* find_gpu_peak(const std::string& device_name);

}  // namespace trainer::engine
