// The model-checkpoint callback's policy: the top-k list a new score enters or falls out of, and
// the file it goes to (named by formats/checkpoint_name.h, -v1 suffixes on a clash).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainer/engine/checkpoint/checkpoint.h"
#include "trainer/engine/trainer_options.h"

namespace trainer::engine {

// Enters `score` into `top_k` (best first) under options.mode/save_top_k. Returns the path this
// checkpoint is written to (in options.dirpath, named by options.filename with `metrics` for its
// metric fields: formats/checkpoint_name.h), or "" when it does not make the top k; the paths that
// fell out are appended to `dropped`.
std::string update_top_k(std::vector<TopKEntry>& top_k, const CheckpointOptions& options, double score, int64_t epoch,
                         int64_t step, const std::map<std::string, double>& metrics, std::vector<std::string>& dropped);

}  // namespace trainer::engine
