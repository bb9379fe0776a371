#include "trainer/launch/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

// The pid holding a flock on the file `st` describes, from /proc/locks
// ("1: FLOCK  ADVISORY  WRITE 4242 08:01:131 0 EOF"); empty when it cannot be told.
std::string lock_holder(const struct stat& st) {
  std::ifstream locks("/proc/locks");
  char device[64];
  std::snprintf(device, sizeof(device), "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream fields(line);
    std::string number, kind, advisory, mode, pid, where;
    fields >> number >> kind;
    if (kind == "->") fields >> kind;  // a waiter
    fields >> advisory >> mode >> pid >> where;
    if (kind == "FLOCK" && where == device) return pid;
  }
  return {};
}

// Whether a file can be made in `dir` (access(2) passes root in a read-only or immutable
// directory): a file made and removed at once.
bool writable(const std::string& dir) {
  const std::string probe = dir + "/.trainer-write-check." + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno == EEXIST;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

}  // namespace

RunLock::RunLock(const std::string& run_dir, const std::string& key, bool checkpoint_directory) {
  std::error_code ec;
  if (!fs::exists(run_dir, ec)) {
    fs::create_directories(run_dir, ec);
    if (ec) {
      throw Error(key + "=" + run_dir, "cannot create the directory: " + ec.message(),
                  "Set " + key + " to a writable place.");
    }
    created_ = true;
  }
  if (!fs::is_directory(run_dir, ec)) {
    // A file of that name: said now, naming the key, rather than by the first write into it (a
    // checkpoint directory's after a whole epoch).
    throw Error(key + "=" + run_dir, "is a file, not a directory; nothing was written",
                "Set " + key + " to a directory (or move the file away).");
  }
  // A directory the fit cannot write (read-only, immutable, another user's): said before it trains.
  if (::access(run_dir.c_str(), W_OK) != 0 || !writable(run_dir)) {
    throw Error(key + "=" + run_dir,
                "this directory cannot be written: " + std::string(std::strerror(errno)) + "; nothing was written",
                "Set " + key + " to a writable place (or make this one writable).");
  }
  fd_ = ::open(run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) return;  // unreadable: the writes that follow say so
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  const int error = errno;
  if (error != EWOULDBLOCK) return;  // no flock here (some network mounts): unguarded
  struct stat st {};
  const std::string pid = ::fstat(fd_, &st) == 0 ? lock_holder(st) : std::string();
  ::close(fd_);
  fd_ = -1;
  if (checkpoint_directory) {
    throw Error(
        key + "=" + run_dir,
        "another trainer fit is writing its checkpoints in this directory" + (pid.empty() ? "" : " (pid " + pid + ")") +
            ": two fits sharing a checkpoint directory would overwrite each other's best and last files "
            "(the same names, epoch_001.ckpt, last.ckpt); nothing was written",
        key == "hydra.run.dir" ? "Wait for it to end, or give this fit its own hydra.run.dir."
                               : "Wait for it to end, or give this fit a checkpoint directory of its own (without " +
                                     key + ", checkpoints go to <hydra.run.dir>/checkpoints).");
  }
  throw Error("hydra.run.dir=" + run_dir,
              "another trainer fit is running in this directory" + (pid.empty() ? "" : " (pid " + pid + ")") +
                  ": two fits in one directory would overwrite each other's checkpoints and mix their metrics and "
                  "logs; nothing was written",
              "Wait for it to end (then resume it with ckpt_path=last if it was cut short), or give this fit its own "
              "hydra.run.dir (two fits started in the same second share the default outputs/<date>/<time>).");
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace trainer::launch
