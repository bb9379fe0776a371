#include "trainer/launch/sweep_lock.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "trainer/launch/job_status.h"
#include "trainer/launch/sweep_plan.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

const char* const SweepLock::kRelativePath = ".sweep/lock";

namespace {

// The lock's descriptor, closed in every child forked from the sweep (a job run in a forked
// process): the lock is the sweep process's alone, so once it dies (SIGKILL) a resume gets past it
// and meets the precise refusal for a job still running.
std::atomic<int> held_fd{-1};

void close_in_child() {
  const int fd = held_fd.load();
  if (fd >= 0) ::close(fd);
}

std::string holder_text() {
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  if (::localtime_r(&now, &local) != nullptr) std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &local);
  return "pid " + std::to_string(::getpid()) + " on " + host_name() + ", started " + when;
}

std::string read_holder(int fd) {
  char buffer[256] = {};
  const ssize_t got = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string text = got > 0 ? std::string(buffer, static_cast<size_t>(got)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "a process that took it a moment ago" : text;
}

}  // namespace

SweepLock::SweepLock(const std::string& sweep_dir) {
  std::error_code ec;
  fs::create_directories(sweep_state_dir(sweep_dir), ec);
  if (ec) {
    throw Error(sweep_dir, "cannot create the sweep directory: " + ec.message(),
                "Set hydra.sweep.dir to a writable place.");
  }
  const std::string path = (fs::path(sweep_dir) / kRelativePath).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(path, std::string("cannot open the sweep's lock file: ") + std::strerror(errno),
                "Set hydra.sweep.dir to a directory this user can write.");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      const std::string holder = read_holder(fd_);
      ::close(fd_);
      fd_ = -1;
      throw Error("hydra.sweep.dir=" + sweep_dir,
                  "another trainer sweep is running in this directory (" + holder +
                      "); two sweeps in one directory would run each other's jobs into the same run directories; "
                      "nothing was run",
                  "Wait for it to end (trainer sweep summary " + sweep_dir +
                      " shows how far it is), or give this sweep its own hydra.sweep.dir.");
    }
    std::cerr << "[sweep] warning: " << path << " cannot be locked (" << std::strerror(error)
              << "): nothing stops a second sweep from running in this directory at the same time" << std::endl;
    return;
  }
  static std::once_flag registered;
  std::call_once(registered, [] { ::pthread_atfork(nullptr, nullptr, close_in_child); });
  held_fd = fd_;
  const std::string text = holder_text() + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t wrote = ::pwrite(fd_, text.data(), text.size(), 0);  // a name for the refusal
  }
}

SweepLock::~SweepLock() {
  if (fd_ < 0) return;
  int expected = fd_;
  held_fd.compare_exchange_strong(expected, -1);
  ::close(fd_);
}

}  // namespace trainer::launch
