#include "trainer/engine/out_of_memory_report.h"

#include <algorithm>
#include <cstdio>

#include "trainer/engine/profiling/memory_stats.h"
#include "trainer/util/error.h"
#include "trainer/util/fixed_text.h"

namespace trainer::engine {
namespace {

std::string fixed(double value, int digits) { return fixed_text(value, digits); }

}  // namespace

bool is_out_of_memory(const c10::Error& error) {
  return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr ||
         is_out_of_memory_message(error.what_without_backtrace());
}

void throw_out_of_memory_error(const OutOfMemoryFacts& f) {
  const std::string cause = f.cause.substr(0, f.cause.find('\n'));
  int64_t count = 0;
  double weight_mb = 0;
  for (const auto& parameter : *f.parameters) {
    count += parameter.numel();
    weight_mb += static_cast<double>(parameter.numel() * parameter.element_size()) / (1024.0 * 1024.0);
  }
  const std::string& model_name = f.model_name;
  const std::string& command = f.command;
  std::string facts = "batch size " + std::to_string(f.batch_size);
  if (f.accumulate_grad_batches > 1) {
    facts += " (x " + std::to_string(f.accumulate_grad_batches) + " accumulated)";
  }
  facts += ", model=" + model_name;
  if (f.parameters->empty()) {
    facts += " (not built yet)";
  } else {
    facts += " with " + std::to_string(count) + " parameters (" + fixed(weight_mb, 1) +
             " MiB of weights; about 4x that with gradients and Adam's state)";
  }
  facts += ", precision=" + f.precision;
  std::string memory;
  if (f.device.is_cuda()) {
    if (auto cuda = cuda_memory(f.device.index())) {
      memory = "; on the GPU now " + fixed(cuda->allocated_mb, 0) + " MiB allocated, " + fixed(cuda->reserved_mb, 0) +
               " MiB reserved, peak " + fixed(cuda->peak_allocated_mb, 0) + " MiB";
    }
  } else {
    memory = "; host memory of this process now " + fixed(host_rss_mb(), 0) + " MiB, peak " +
             fixed(host_peak_rss_mb(), 0) + " MiB";
  }
  const std::string where = f.device.is_cuda() ? "the GPU (cuda:" + std::to_string(f.device.index()) + ")" : "the host";
  if (f.parameters->empty()) {
    throw Error(
        "model",
        "out of memory on " + where + " while building model=" + model_name + " (" + facts + memory + "): " + cause,
        "Make the model smaller (its sizes under model.*), or train where there is more memory.");
  }
  const int64_t smaller = std::max<int64_t>(1, f.batch_size / 2);
  throw Error("data.batch_size",
              "out of memory on " + where + " during " + command + " (" + facts + memory + "): " + cause,
              "Lower the batch (data.batch_size=" + std::to_string(smaller) +
                  ") and keep the effective batch with trainer.accumulate_grad_batches=" +
                  std::to_string(2 * f.accumulate_grad_batches) + ", train in " +
                  (f.device.is_cuda() ? "precision=16-mixed" : "precision=bf16-mixed") +
                  " to halve activation memory, or choose a smaller model" +
                  (f.num_workers > 0 ? "; fewer data.num_workers also frees host memory." : "."));
}

}  // namespace trainer::engine
