// One fit at a time in a run directory. Two fits started into one hydra.run.dir (the same command
// run twice, two default directories of the same second) would overwrite each other's checkpoints
// and interleave their logs, both exiting 0; the refusal of a directory that holds a run comes
// only once a checkpoint is there. A fit holds an exclusive flock on the run directory itself
// (no file is added to it) from before its checks until its process ends, however it ends (the
// kernel drops the lock with the descriptor: no stale lock after SIGKILL). Evaluations, which
// only read the run, take no lock.
#pragma once

#include <string>

namespace trainer::launch {

class RunLock {
 public:
  // Creates `run_dir` when it is not there (created() says so) and takes the lock. Throws
  // trainer::Error naming `key` (hydra.run.dir, or the key that names a checkpoint directory
  // outside the run: a fit locks that too, so two runs sharing one cannot overwrite each other's
  // best and last files) and the holder's pid when another process holds it. On a filesystem
  // without flock it goes on unguarded.
  explicit RunLock(const std::string& run_dir, const std::string& key = "hydra.run.dir",
                   bool checkpoint_directory = false);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  // Whether this lock created the run directory (a fit refused by its checks then removes it).
  bool created() const { return created_; }

 private:
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace trainer::launch
