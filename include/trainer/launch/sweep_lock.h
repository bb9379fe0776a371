// One sweep at a time in a sweep directory. Two sweeps in one directory (two commands started in
// the same second share the default multirun/<date>/<time>; a script re-triggered while its sweep
// runs) would run each other's jobs into the same run directories. A sweep holds an exclusive
// flock on <sweep_dir>/.sweep/lock from before it reads or writes the plan until its process
// ends, however it ends (the kernel drops the lock with its descriptor: no stale locks after
// SIGKILL). Job processes, forked or started, run without it.
#pragma once

#include <string>

namespace trainer::launch {

class SweepLock {
 public:
  // Creates <sweep_dir>/.sweep if needed and takes the lock. Throws trainer::Error naming
  // hydra.sweep.dir (and the holder: pid, host, start time) when another process holds it. On a
  // filesystem without flock (some network mounts) it warns once and goes on unguarded.
  explicit SweepLock(const std::string& sweep_dir);
  ~SweepLock();
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

  // The lock file, relative to the sweep directory (a record, not a result, for NewDirectories).
  static const char* const kRelativePath;

 private:
  int fd_ = -1;
};

}  // namespace trainer::launch
