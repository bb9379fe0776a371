// The directories a job is about to create for its run directory, noted before it creates them, so
// that a job that failed before writing any result can take back what it made: an evaluation
// (validate/test/export, docs/evaluation.md) that fails its checks leaves no empty
// <run>/eval/<command>_<time>/ behind, nor an eval/ it made for it.
#pragma once

#include <string>
#include <vector>

namespace trainer::launch {

class NewDirectories {
 public:
  // Notes which of `run_dir` and its parents do not exist yet.
  explicit NewDirectories(const std::string& run_dir);

  // Removes `run_dir` if this job made it and it holds nothing but `records` (paths relative to
  // it: the job's .hydra/ files and log), then each parent made for it that is empty now,
  // innermost first. Any other file (a result, something of someone else's) keeps the directory.
  // Returns whether run_dir was removed.
  bool remove_if_only(const std::vector<std::string>& records) const;

 private:
  std::string run_dir_;
  std::vector<std::string> made_;  // run_dir and the parents that did not exist, innermost first
};

}  // namespace trainer::launch
