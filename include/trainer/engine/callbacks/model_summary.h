// The table `fit` opens with, as Lightning's ModelSummary prints it: each top-level module with
// its type and parameter count, then the trainable, non-trainable and total parameters and the
// weights' size in MB.
#pragma once

#include <string>

#include <torch/nn/module.h>

namespace trainer::engine {

// Lightning's short count: 950, 12.7 K, 11.2 M, 1.3 B.
std::string short_count(int64_t count);

// The table, lines ending in '\n'.
std::string model_summary(const torch::nn::Module& model);

}  // namespace trainer::engine
