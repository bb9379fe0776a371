// An allocation failure anywhere in a job (fit, validate, test, the batch-size search), reported
// as one paragraph: where, what drives memory (batch, model, precision), the memory counters now,
// LibTorch's own first line, and what to change.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace trainer::engine {

struct OutOfMemoryFacts {
  std::string command;  // fit, validate, test, tune_batch_size
  std::string cause;    // LibTorch's message (its first line is quoted)
  std::string model_name;
  int64_t batch_size = 0;
  int64_t accumulate_grad_batches = 1;
  int num_workers = 0;
  std::string precision;
  at::Device device = at::kCPU;
  const std::vector<at::Tensor>* parameters = nullptr;  // empty: the model was not built yet
};

// c10::OutOfMemoryError on CUDA, or the CPU allocator's plain c10::Error saying so.
bool is_out_of_memory(const c10::Error& error);

// Throws trainer::Error: on data.batch_size (or on model when it was being built) with the fix.
[[noreturn]] void throw_out_of_memory_error(const OutOfMemoryFacts& facts);

}  // namespace trainer::engine
