// The checkpoint file around LibTorch's archive: one fixed-width text line with the section sizes
// and their CRC-32C checksums, then the archive (model, optimizer, loop state, RNG), then a short
// plain-text summary (epoch, step, precision, the best checkpoints) and the run's resolved config.
// Damage and truncation are caught before LibTorch reads a byte, and the summary and config can be
// read without LibTorch (the launcher resolves ckpt_path=best and builds an evaluation's config
// from them). Layout and a Python reader: docs/checkpoints.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::formats {

// What a checkpoint says about itself, readable without LibTorch.
struct CheckpointSummary {
  int64_t epoch = 0;            // the loop's epoch: the epochs done when batch_in_epoch is 0
  int64_t batch_in_epoch = -1;  // batches done of that epoch (-1: not recorded, an older file)
  int64_t global_step = 0;
  std::string precision;
  // The model-checkpoint callback's best files, best first, with their monitored scores.
  std::vector<std::pair<double, std::string>> best;
  // The data's class names in label order (empty: the data names none).
  std::vector<std::string> class_names;
  // One sample's shape as the model saw it in training, e.g. {3, 224, 224} (empty: not recorded).
  std::vector<int64_t> sample_shape;
  // The model's outputs: its classes (0: not recorded, a checkpoint from before it was).
  int64_t num_classes = 0;
  // How the data encodes a record as an input (data=csv: columns, categories, statistics), as the
  // dataset's JSON (data::Dataset::encoding()); empty when the data fits nothing.
  std::string data_encoding;
  // The fingerprint of the file holding the model's code (model=torchscript), as
  // Model::source_fingerprint gives it; empty for a model built from the config.
  std::string model_file;
};

// Where a checkpoint stands, as logs say it (not the loop's counters, whose epoch is the next one
// at an epoch's end): "end of epoch 1, step 10" (epoch_001.ckpt), "epoch 2, batch 3, step 13"
// (inside an epoch), "step 0" (before any). `batch_in_epoch` -1: "epoch 2, step 10" (unknown).
std::string checkpoint_position(int64_t epoch, int64_t batch_in_epoch, int64_t global_step);

// The file's first line has this many bytes (its newline included).
constexpr size_t kCheckpointHeaderBytes = 80;

// Builds a checkpoint file in two calls, so that a multi-hundred-MB archive is serialised
// straight into its final buffer and never copied:
//   std::string file = begin_checkpoint_file();      // the header line, to be filled in
//   <append the LibTorch archive to file>
//   finish_checkpoint_file(file, summary, config_yaml);  // summary, config, sizes and checksums
// A value on one line of a summary or a list file (class_names.txt): backslash and newline
// escaped as \\ and \n (a folder or a table's label may hold either); unescape_line undoes it.
std::string escape_line(const std::string& value);
std::string unescape_line(const std::string& value);

std::string begin_checkpoint_file();
void finish_checkpoint_file(std::string& file, const CheckpointSummary& summary, std::string_view config_yaml);

// A checkpoint read from disk and verified (sizes and both checksums).
struct CheckpointFile {
  std::string bytes;          // the whole file
  size_t payload_offset = 0;  // the LibTorch archive: bytes[payload_offset, +payload_size)
  size_t payload_size = 0;
  CheckpointSummary summary;
  std::string config_yaml;  // the run's resolved config; empty in files from before it was stored
  bool legacy = false;      // a bare LibTorch archive (format 1): nothing to verify

  std::string_view payload() const { return std::string_view(bytes).substr(payload_offset, payload_size); }
};

// Reads and verifies `path`. Throws trainer::Error naming the file, what is wrong (missing,
// truncated, damaged, not a checkpoint) and the newest intact checkpoint beside it, if any.
CheckpointFile read_checkpoint_file(const std::string& path);

// Reads only the header, the summary and the config (not the archive): what a torch-free caller
// needs. Verifies the file's size and the checksum of what it reads; throws as above.
CheckpointFile read_checkpoint_summary(const std::string& path);

// ckpt_path's names: "last" is `directory`/last.ckpt, "best" the best file last.ckpt records
// (an error when it records none, or when last.ckpt is missing or damaged); anything else is a
// path, returned as it is.
std::string resolve_checkpoint_name(const std::string& wanted, const std::string& directory);

// Whether `path` is a complete checkpoint whose checksums hold (reads the whole file).
bool checkpoint_intact(const std::string& path);

// The regular *.ckpt files in `directory` (paths), the most recently written first; none when it
// cannot be read. A write in progress is a temporary file of another name, so each is whole.
std::vector<std::string> checkpoints_newest_first(const std::string& directory);

// The most recently written intact *.ckpt file in `directory` other than `except`, if any.
std::optional<std::string> newest_intact_checkpoint(const std::string& directory, const std::string& except = {});

}  // namespace trainer::formats
