#include "trainer/engine/precision/precision_setup.h"

#include <optional>

#include "trainer/engine/precision/cpu_bfloat16.h"
#include "trainer/engine/torch_compat.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {

bool falls_back_to_bf16(const TrainerOptions& options, const at::Device& device, bool warn) {
  if (options.precision != Precision::k16Mixed || !device.is_cpu() || options.cpu_float16_autocast) return false;
  // Lightning 2.x's rule: float16 AMP is not for the CPU, bf16-mixed runs instead. LibTorch 1.13
  // has no float16 CPU autocast at all, and 2.x's trained ResNet-18 ~19x slower than precision=32
  // on 2 cores. The run's checkpoints and their stored config say what ran.
  if (warn) {
    // The way out only where this LibTorch has float16 CPU autocast (not Debian's 1.13).
    const bool float16_possible = compat::autocast_supported(at::kCPU, at::kHalf);
    log::warning(std::string("precision=16-mixed on the CPU: running precision=bf16-mixed instead, as Lightning does "
                             "(float16 autocast has few fast CPU kernels: ResNet-18 trained ~19x slower than "
                             "precision=32 on 2 cores).") +
                 (float16_possible ? " Set trainer.cpu_float16_autocast=true to run float16 anyway." : ""));
  }
  return true;
}

PrecisionDtypes precision_dtypes(const TrainerOptions& options, const at::Device& device, bool warn) {
  PrecisionDtypes d;
  const std::string name = precision_name(options.precision);
  switch (options.precision) {
    case Precision::k32True:
      break;
    case Precision::k64True:
      d.param = at::kDouble;
      break;
    case Precision::k16True:
      d.param = at::kHalf;
      break;
    case Precision::kBf16True:
      d.param = at::kBFloat16;
      break;
    case Precision::k16Mixed:
      d.autocast = true;
      d.autocast_dtype = at::kHalf;
      break;
    case Precision::kBf16Mixed:
      d.autocast = true;
      d.autocast_dtype = at::kBFloat16;
      break;
  }
  if (d.autocast && !compat::autocast_supported(device.type(), d.autocast_dtype)) {
    throw Error("precision",
                "precision=" + name + " needs float16 autocast on the " + c10::DeviceTypeName(device.type(), true) +
                    ", which LibTorch " + compat::torch_version_text() +
                    " does not have (its CPU autocast runs in bfloat16 only)",
                "Use precision=bf16-mixed on the CPU (or 32), train on a CUDA device (trainer.accelerator=cuda), "
                "or build against LibTorch 2.x (the wheel variant), whose CPU autocast has float16.");
  }
  const bool bfloat16 = d.param == at::kBFloat16 || (d.autocast && d.autocast_dtype == at::kBFloat16);
  if (bfloat16 && device.is_cpu() && warn) {
    const std::optional<CpuBfloat16> cpu = this_cpu_bfloat16();
    if (cpu && !cpu->hardware) {
      log::warning(
          "precision=" + name + " on a CPU without bfloat16 arithmetic (" +
          (cpu->model.empty() ? std::string() : cpu->model + ": ") +
          "no AVX512-BF16, AMX-BF16 or BF16 flag in /proc/cpuinfo): ATen converts to and from float32 around each "
          "operation, so this runs slower than precision=32 (7-15x for model=mlp and model=cnn on a "
          "2-core AVX2 machine, to about the same accuracy after the same steps). Use precision=32 on this CPU; "
          "bfloat16 pays on CPUs with AVX512-BF16 or AMX, and on CUDA.");
    }
  }
  if (options.precision == Precision::k16Mixed && device.is_cpu() && warn) {
    log::warning(
        "precision=16-mixed on the CPU with trainer.cpu_float16_autocast=true runs float16 autocast, "
        "which has few fast CPU kernels (ResNet-18 trained ~19x slower than with precision=32 on a "
        "2-core machine). For speed use precision=bf16-mixed or 32.");
  }
  if (options.precision == Precision::k16Mixed && !options.grad_scaler_enabled && warn) {
    log::warning(
        "precision=16-mixed with trainer.grad_scaler.enabled=false: small float16 gradients may "
        "underflow to zero without loss scaling");
  }
  return d;
}

std::unique_ptr<GradScaler> make_grad_scaler(const TrainerOptions& options, const at::Device& device) {
  if (!options.grad_scaler_enabled) return nullptr;
  GradScaler::Options o;
  o.init_scale = options.grad_scaler.init_scale;
  o.growth_factor = options.grad_scaler.growth_factor;
  o.backoff_factor = options.grad_scaler.backoff_factor;
  o.growth_interval = options.grad_scaler.growth_interval;
  return std::make_unique<GradScaler>(o, device);
}

void warn_about_idle_grad_scaler(const TrainerOptions& options, bool warn) {
  if (!warn || options.grad_scaler_enabled || options.grad_scaler.enabled.has_value()) return;
  const GradScalerOptions defaults;
  const GradScalerOptions& g = options.grad_scaler;
  std::string changed;
  auto note = [&](bool differs, const std::string& key) {
    if (differs) changed += std::string(changed.empty() ? "" : ", ") + "trainer.grad_scaler." + key;
  };
  note(g.init_scale != defaults.init_scale, "init_scale");
  note(g.growth_factor != defaults.growth_factor, "growth_factor");
  note(g.backoff_factor != defaults.backoff_factor, "backoff_factor");
  note(g.growth_interval != defaults.growth_interval, "growth_interval");
  if (changed.empty()) return;
  log::warning(changed + " set, but no loss scaling runs with precision=" + precision_name(options.precision) +
               " (it runs for 16-mixed only, as Lightning's; bfloat16 and float32 gradients need none), so "
               "it has no effect; set trainer.grad_scaler.enabled=true to scale anyway");
}

}  // namespace trainer::engine
