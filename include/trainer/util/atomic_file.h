// The one atomic file write: the bytes go to a temporary file in the same directory, which is
// flushed to disk, closed and renamed over the final name (then the directory is flushed), so a
// reader or a kill at any instant sees the previous complete file or the new complete file.
// POSIX calls only: code linked to LibTorch uses it too (see engine/posix_files.h for why).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainer {

struct AtomicWriteOptions {
  // Named in errors: "cannot create the <noun>", "cannot move the new <noun> into place".
  std::string noun = "file";
  // The error's fix, where the caller knows better than "check the directory".
  std::string fix = "Check that the directory exists and is writable and that the disk is not full.";
  // false: rename only, no fsync (files written by the thousand that are rewritten when lost).
  bool durable = true;
};

// One file being written; the final name appears only at commit(). Destroyed before commit()
// (an exception while writing), it closes and removes its temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, AtomicWriteOptions options = {});
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void append(const void* data, size_t size);
  void append(std::string_view bytes) { append(bytes.data(), bytes.size()); }
  // fsync, close, rename over the final name, fsync the directory. Throws trainer::Error naming
  // the final path and the system's reason; the temporary file is gone either way.
  void commit();

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& problem, int error);
  void discard() noexcept;

  std::string path_;
  std::string temporary_;
  AtomicWriteOptions options_;
  int fd_ = -1;
};

// Writes `bytes` to `path` atomically (the directory must exist).
void write_file_atomically(const std::string& path, std::string_view bytes, const AtomicWriteOptions& options = {});

// The temporary files in `directory` (not below it) of writes whose process is gone (SIGKILL or a
// crash in the middle of a write: a checkpoint's can be hundreds of MB each time): removed. Those
// of live processes are left. Returns the names removed and adds their bytes to `*bytes`.
std::vector<std::string> remove_abandoned_temporaries(const std::string& directory, uintmax_t* bytes);

}  // namespace trainer
