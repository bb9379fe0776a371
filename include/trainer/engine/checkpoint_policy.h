// The model-checkpoint callback's policy: the best files' names (Lightning's filename pattern,
// {epoch:03d}, -v1 suffixes on a clash) and the top-k list a new score enters or falls out of.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/engine/checkpoint.h"
#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

// "epoch_{epoch:03d}" -> "epoch_007"; {step} too; other fields stay as written.
std::string format_checkpoint_name(const std::string& pattern, int64_t epoch, int64_t step);

// Enters `score` into `top_k` (best first) under options.mode/save_top_k. Returns the path this
// checkpoint is written to (in options.dirpath), or "" when it does not make the top k; the
// paths that fell out are appended to `dropped`.
std::string update_top_k(std::vector<TopKEntry>& top_k, const CheckpointOptions& options, double score, int64_t epoch,
                         int64_t step, std::vector<std::string>& dropped);

}  // namespace trainer::engine
