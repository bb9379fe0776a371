// Whether the CPU does bfloat16 arithmetic in hardware. oneDNN's bfloat16 kernels use AVX512-BF16
// or AMX-BF16 on x86 and the BF16 extension on AArch64; without them ATen converts each operand
// to float32 and back around float32 arithmetic, and precision=bf16-mixed runs slower than 32
// (measured on an AVX2 machine: 15x for model=mlp and model=cnn with LibTorch 1.13, 6.6-6.7x with
// 2.11; BENCHMARKS.md, "CPU mixed precision without bfloat16 hardware").
#pragma once

#include <optional>
#include <string>

namespace trainer::engine {

struct CpuBfloat16 {
  bool hardware = false;  // AVX512-BF16 or AMX-BF16 (x86), BF16 (AArch64)
  std::string model;      // the "model name" line, "" where there is none
};

// From the text of /proc/cpuinfo (the first processor's flags line on x86, its Features line on
// AArch64); nullopt where the text has neither.
std::optional<CpuBfloat16> cpu_bfloat16_from_cpuinfo(const std::string& cpuinfo);

// This machine's, from /proc/cpuinfo; nullopt where it cannot be read or says neither.
std::optional<CpuBfloat16> this_cpu_bfloat16();

}  // namespace trainer::engine
