// The best checkpoints' file names, from callbacks.model_checkpoint.filename as Lightning's
// ModelCheckpoint fills it (auto_insert_metric_name=False, as lightning-hydra-template sets it):
// {epoch} and {step}, with an optional zero-padded width ({epoch:03d}), and a logged metric with a
// Python float format ({val/acc:.4f}). Torch-free: the launcher checks a pattern before any job.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trainer::formats {

// "epoch_{epoch:03d}-{val/acc:.4f}" -> "epoch_007-0.9134". A metric not in `metrics` is written
// as 0, as Lightning does. The pattern must have passed check_checkpoint_name.
std::string format_checkpoint_name(const std::string& pattern, int64_t epoch, int64_t step,
                                   const std::map<std::string, double>& metrics);

// "" when every {field} of `pattern` is epoch, step or one of `metrics`, with a format that fits
// it, and the pattern holds no '/' outside its fields; otherwise what is wrong.
std::string check_checkpoint_name(const std::string& pattern, const std::vector<std::string>& metrics);

}  // namespace trainer::formats
