#include "trainer/util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "trainer/util/error.h"

namespace trainer {
namespace {

std::string parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Unique per process and per write: sweep jobs write their status files side by side, and the
// checkpoint thread may write while the training thread writes another file.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

void fsync_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

AtomicFile::AtomicFile(std::string path, AtomicWriteOptions options)
    : path_(std::move(path)), temporary_(temporary_name(path_)), options_(std::move(options)) {
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot create the " + options_.noun + " (" + temporary_ + ")", errno);
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temporary_.empty()) {
    ::unlink(temporary_.c_str());
    temporary_.clear();
  }
}

void AtomicFile::fail(const std::string& problem, int error) {
  discard();
  throw Error(path_, problem + ": " + std::strerror(error), options_.fix);
}

void AtomicFile::append(const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd_, bytes + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write the " + options_.noun, n < 0 ? errno : ENOSPC);
    written += static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (options_.durable && ::fsync(fd_) != 0) fail("cannot flush the " + options_.noun + " to disk", errno);
  // close() runs on every path (discard() closes after a failed fsync); its own failure counts.
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("cannot flush the " + options_.noun + " to disk", errno);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    fail("cannot move the new " + options_.noun + " into place", errno);
  }
  temporary_.clear();
  if (options_.durable) fsync_directory(parent_directory(path_));
}

void write_file_atomically(const std::string& path, std::string_view bytes, const AtomicWriteOptions& options) {
  AtomicFile file(path, options);
  file.append(bytes);
  file.commit();
}

}  // namespace trainer
