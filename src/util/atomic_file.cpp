#include "trainer/util/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
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
// A temporary file's name: <final name>.tmp.<pid>.<counter>, made by the writing process and read
// back by a later one that removes what a killed writer left.
struct TemporaryName {
  std::string final_name;
  pid_t pid = 0;
  unsigned long counter = 0;

  std::string text() const { return final_name + ".tmp." + std::to_string(pid) + "." + std::to_string(counter); }

  static std::optional<TemporaryName> parse(const std::string& name) {
    const size_t counter_dot = name.rfind('.');
    if (counter_dot == std::string::npos || counter_dot == 0) return std::nullopt;
    const size_t pid_dot = name.rfind('.', counter_dot - 1);
    if (pid_dot == std::string::npos || pid_dot < 4 || name.compare(pid_dot - 4, 4, ".tmp") != 0) return std::nullopt;
    const std::string pid_text = name.substr(pid_dot + 1, counter_dot - pid_dot - 1);
    const std::string counter_text = name.substr(counter_dot + 1);
    const auto digits = [](const std::string& text) {
      return !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(pid_text) || !digits(counter_text)) return std::nullopt;
    return TemporaryName{name.substr(0, pid_dot - 4), static_cast<pid_t>(std::stol(pid_text)),
                         std::stoul(counter_text)};
  }
};

std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  return TemporaryName{path, ::getpid(), counter.fetch_add(1)}.text();
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
  std::string reason = std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) {
    // How full: a disk with room left is a quota or a file larger than what is left.
    std::error_code ec;
    const std::string directory = parent_directory(path_);
    const std::filesystem::space_info space = std::filesystem::space(directory, ec);
    if (!ec)
      reason += " (the disk holding " + directory + " has " + std::to_string(space.available / 1024) + " KiB free)";
  }
  throw Error(path_, problem + ": " + reason, options_.fix);
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

std::vector<std::string> remove_abandoned_temporaries(const std::string& directory, uintmax_t* bytes) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    const std::optional<TemporaryName> temporary = TemporaryName::parse(name);
    if (!temporary) continue;
    const pid_t pid = temporary->pid;
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code kind;
    if (!entry.is_regular_file(kind)) continue;
    const uintmax_t size = entry.file_size(kind);
    if (std::filesystem::remove(entry.path(), kind)) {
      removed.push_back(name);
      if (bytes != nullptr && !kind) *bytes += size;
    }
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

}  // namespace trainer
