// Writes checkpoints on a background thread, so the training thread pays only for taking the
// snapshot (serialising it into memory) and never waits for the disk. Each file is written
// atomically and durably (temporary file, fsync, rename, fsync of the directory): a kill at any
// instant leaves the previous complete file in place. Writes happen in the order they were
// queued; at most one is in flight, so memory holds at most one snapshot being written plus the
// one being taken.
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

namespace trainer::engine {

class CheckpointWriter {
 public:
  CheckpointWriter() = default;
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;
  ~CheckpointWriter();  // waits for the write in flight; errors are logged, not thrown

  // Queues `bytes` to be written to every path in `paths`, then the files in `remove` deleted
  // (checkpoints that fell out of the top k). Waits for the previous write first and rethrows its
  // error, if any.
  void write(std::shared_ptr<const std::string> bytes, std::vector<std::string> paths,
             std::vector<std::string> remove = {});

  // Blocks until everything queued is on disk; rethrows a write error as trainer::Error.
  void wait();

  // Rethrows the error of a write that has failed, without waiting for one in flight: the
  // training loop asks after every step, so a full disk stops the run within a step of the failed
  // write, not after another epoch of training that no checkpoint could keep.
  void rethrow_if_failed();

 private:
  std::future<void> pending_;
};

// Writes `bytes` to `path` atomically and durably, creating the directory if needed; `noun` names
// the file in an error ("checkpoint", "class names file", ...).
void write_file_durably(const std::string& path, const std::string& bytes, const std::string& noun = "checkpoint");

}  // namespace trainer::engine
