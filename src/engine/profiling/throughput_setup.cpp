#include "trainer/engine/profiling/throughput_setup.h"

#include <cstdio>

#include <torch/utils.h>

#include "trainer/engine/profiling/cuda_device_info.h"
#include "trainer/engine/profiling/flop_counter.h"
#include "trainer/engine/profiling/gpu_peak_flops.h"
#include "trainer/util/log.h"

namespace trainer::engine {

ForwardFlops count_forward_flops(models::Model& model, const std::function<void()>& probe_forward) {
  const bool was_training = model.is_training();
  model.eval();
  ForwardFlops counted;
  try {
    torch::NoGradGuard no_grad;
    FlopCounter counter;
    probe_forward();
    counted.total = counter.total();
    counted.convolution = counter.convolution_total();
  } catch (const std::exception& error) {
    const std::string what = error.what();
    log::warning("model: the FLOP count's probe forward pass failed (" + what.substr(0, what.find('\n')) + ")");
  }
  model.train(was_training);
  if (counted.total > 0) {
    counted.source = "counted from the matrix products and convolutions of one sample's forward pass";
    return counted;
  }
  if (model.flops_per_sample() > 0) return {model.flops_per_sample(), 0, "the model's own count"};
  return {};
}

FlopsThroughput make_flops_throughput(const ForwardFlops& forward, const at::Device& device, Precision precision,
                                      int world_size, bool is_main) {
  FlopsThroughput throughput;
  if (forward.total <= 0) {
    if (is_main) log::info("model: FLOPs per sample unknown (no matrix product or convolution seen): no flops_per_sec");
    return throughput;
  }
  throughput.flops_per_sample = 3.0 * static_cast<double>(forward.total);
  if (is_main) {
    log::info("model: " + flops_text(static_cast<double>(forward.total)) + " per sample forward, " +
              flops_text(throughput.flops_per_sample) + " per sample per training step (3x forward; " + forward.source +
              ")");
  }
  if (!device.is_cuda()) return throughput;  // no MFU on the CPU: its peak depends on too much
  const auto info = cuda_device_info(device.index());
  const std::string name = info ? info->name : "CUDA device " + std::to_string(device.index());
  const MathMode matmul_mode = math_mode_for(precision, at::globalContext().allowTF32CuBLAS());
  const MathMode convolution_mode = math_mode_for(precision, at::globalContext().allowTF32CuDNN());
  const double convolution_share = static_cast<double>(forward.convolution) / static_cast<double>(forward.total);
  const GpuPeak* peak = info ? find_gpu_peak(info->name) : nullptr;
  const double peak_flops =
      peak ? peak->blended_flops(convolution_mode, matmul_mode, convolution_share).value_or(0.0) : 0.0;
  const bool two_modes = convolution_mode != matmul_mode && convolution_share > 0 && convolution_share < 1;
  const std::string mode_text = two_modes
                                    ? std::string(math_mode_name(convolution_mode)) + "/" + math_mode_name(matmul_mode)
                                    : math_mode_name(convolution_share > 0 ? convolution_mode : matmul_mode);
  if (peak_flops <= 0) {
    if (is_main) {
      log::info("MFU unavailable: no dense " + mode_text + " peak FLOP/s known for '" + name +
                "' (flops_per_sec is logged; docs/monitoring.md lists the GPUs known)");
    }
    return throughput;
  }
  throughput.peak_flops = peak_flops * world_size;
  if (!is_main) return throughput;
  std::string against;
  if (two_modes) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f %%", 100 * convolution_share);
    against = "the " + std::string(peak->model) + "'s dense peaks, " +
              flops_text(*peak->flops(convolution_mode), "/s") + " " + math_mode_name(convolution_mode) +
              " for convolutions (" + share + " of the FLOPs) and " + flops_text(*peak->flops(matmul_mode), "/s") +
              " " + math_mode_name(matmul_mode) + " for matrix products: " + flops_text(peak_flops, "/s") +
              " for this model";
  } else {
    against = "the " + std::string(peak->model) + " dense " + mode_text + " peak of " + flops_text(peak_flops, "/s");
  }
  const bool tf32_convolutions =
      precision == Precision::k32True && convolution_share > 0 && convolution_mode == MathMode::kTf32;
  log::info(
      "MFU: against " + against + " per device ('" + name + "', precision=" + precision_name(precision) + ")" +
      (tf32_convolutions ? "; float32 convolutions run in TF32 (cuDNN's default in LibTorch, as in PyTorch)" : ""));
  return throughput;
}

}  // namespace trainer::engine
