#include "trainer/engine/checkpoint/checkpoint_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include "trainer/engine/posix_files.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

void fsync_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path, what + ": " + std::strerror(errno),
              "Check free space and permissions of the checkpoint directory; the previous checkpoint "
              "file, if any, is unchanged.");
}

}  // namespace

void write_file_durably(const std::string& path, const std::string& bytes) {
  if (!posix::make_directories(posix::parent(path))) fail(path, "cannot create the checkpoint directory");
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(temporary, "cannot create the checkpoint file");
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      errno = saved;
      fail(temporary, "cannot write the checkpoint");
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    fail(temporary, "cannot flush the checkpoint to disk");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    fail(path, "cannot move the new checkpoint into place");
  }
  fsync_directory(posix::parent(path));
}

CheckpointWriter::~CheckpointWriter() {
  try {
    wait();
  } catch (const std::exception& error) {
    log::error(std::string("checkpoint write failed: ") + error.what());
  }
}

void CheckpointWriter::write(std::shared_ptr<const std::string> bytes, std::vector<std::string> paths,
                             std::vector<std::string> remove) {
  wait();
  pending_ = std::async(std::launch::async, [bytes = std::move(bytes), paths = std::move(paths),
                                             remove = std::move(remove)] {
    for (const std::string& path : paths) write_file_durably(path, *bytes);
    for (const std::string& old : remove) posix::remove_file(old);
  });
}

void CheckpointWriter::wait() {
  if (!pending_.valid()) return;
  std::future<void> done = std::move(pending_);
  done.get();
}

}  // namespace trainer::engine
