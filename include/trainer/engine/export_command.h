// `trainer export`: writes the model weights (parameters and buffers, named as the model's
// named_parameters/named_buffers, e.g. "net.0.weight") of a checkpoint as a .safetensors file that
// Python's safetensors and torch load, with metadata naming the epoch, step, classes, one sample's
// shape and the run's model and data sections (JSON), from which python/trainer_export.py rebuilds
// the model in PyTorch. Reads the checkpoint alone: no data or model is built.
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::engine {

// Config keys: `ckpt_path` (a .ckpt file; the launcher has already resolved last/best against the
// training run, launch/evaluation_run.h), `format` (safetensors, the default) and `export_path`
// (default: <run_dir>/<checkpoint name>.safetensors, the export's own directory). Returns the path written; throws
// trainer::Error for a bad key, a missing or foreign checkpoint, or a file that cannot be written.
std::string export_checkpoint(const config::Node& job_config, const std::string& run_dir);

}  // namespace trainer::engine
