// Checkpoints: model, optimizer, loop progress (epoch, global step, position in the epoch), the
// RNG state, callback state, a slot for precision state and the resolved config, in one LibTorch
// archive written to a temporary file, flushed and renamed (checkpoint_writer.h): a kill at any instant leaves the last
// good checkpoint intact.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "trainer/engine/metric_sums.h"
#include "trainer/engine/precision/grad_scaler.h"
#include "trainer/models/model.h"

namespace trainer::engine {

struct TopKEntry {
  double score = 0.0;
  std::string path;
};

struct LoopState {
  int64_t epoch = 0;            // the epoch in progress (or the next one at a boundary)
  int64_t global_step = 0;      // optimizer steps taken
  int64_t batch_in_epoch = 0;   // batches of `epoch` already trained
  int64_t scheduler_count = 0;  // epochs or steps the LR schedule has advanced
  // The epoch's metric sums over its first batch_in_epoch batches, and where its last logged
  // line left them: a run resumed mid-epoch (or after its last batch, before the epoch's end)
  // logs the lines and the epoch's metrics of a run that was never stopped. Zero at a boundary.
  MetricSums epoch_sums;
  MetricSums logged_sums;
  // Unreadable samples left out so far in the epoch (data.on_bad_sample=skip), over every rank.
  int64_t skipped_in_epoch = 0;
  // Seconds the fit has trained so far, over every resume (trainer.max_time counts them, as
  // Lightning's Timer keeps its elapsed time in the checkpoint).
  double fit_seconds = 0.0;
  // Every rank's CPU random generator state, one row each (uint8), when several processes
  // trained: ranks whose batches differ (a skipped file) draw differently, so each resumes with
  // its own. Undefined for one process (the file's rng_cpu is its state).
  at::Tensor rank_rng_states;
  // Every rank's CUDA random generator state (of the device it trained on), one row each, when
  // it trained on CUDA (one row for one process): dropout on the GPU continues as it would have.
  at::Tensor rank_cuda_rng_states;
  std::vector<TopKEntry> top_k;  // model-checkpoint callback: best files, best first
  // Other callbacks' state, by config name (callbacks.<name>), as each callback serialised it.
  std::vector<std::pair<std::string, std::string>> callback_states;
  // Loggers' state, by config name (logger.<name>): metrics.csv's rows written so far.
  std::vector<std::pair<std::string, std::string>> logger_states;
  // Precision state: Lightning's name of the precision that wrote the checkpoint, and the loss
  // scaler's state when loss scaling was on.
  std::string precision = "32-true";
  std::optional<GradScalerState> grad_scaler;
  // The data's class names in label order (an image folder's), so a prediction can be named
  // without the folder; empty when the data names none. Kept in the file's torch-free summary.
  std::vector<std::string> class_names;
  // One sample's shape (data's sample_shape), so a prediction on new images can bring them to it.
  std::vector<int64_t> sample_shape;
  // The model's classes (its outputs), so evaluation can build it without the training data.
  int64_t num_classes = 0;
  // How the data encodes records (data=csv's columns and statistics), so that evaluation encodes
  // new rows alike; empty when the data fits nothing. In the torch-free summary too.
  std::string data_encoding;
};

// The checkpoint file as bytes (formats/checkpoint_file.h: a checksummed LibTorch archive plus a
// torch-free summary and the config): the snapshot, taken on the calling thread; see
// CheckpointWriter.
std::string serialize_checkpoint(models::Model& model, torch::optim::Optimizer& optimizer, const LoopState& state,
                                 const std::string& config_yaml);

// Restores model and optimizer in place and returns the loop state. Throws trainer::Error when the
// file is missing, damaged (size or checksum; the error names the newest intact checkpoint beside
// it), not a trainer checkpoint, holds non-finite weights, or does not fit `model` (any tensor's
// name, shape or dtype; the error lists them and the keys of `current_config_yaml` that differ
// from the config stored in the checkpoint).
// `skip`: tensors of `model` left as they are, neither checked nor loaded (a pipeline stage's
// released tensors of the other stages); null: none.
using SkipTensor = std::function<bool(const at::Tensor&)>;
LoopState load_checkpoint(const std::string& path, models::Model& model, torch::optim::Optimizer* optimizer,
                          bool restore_rng, const std::string& current_config_yaml = {}, const SkipTensor& skip = {});

// Runs `load`, which reads LibTorch's archive out of the checkpoint at `path` (training's loader
// and export's TorchScript loader): LibTorch's errors become "not a readable checkpoint" naming
// the file (without LibTorch's C++ backtrace).
void read_checkpoint_archive(const std::string& path, const std::function<void()>& load);

}  // namespace trainer::engine
