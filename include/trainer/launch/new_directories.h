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

  // Removes `run_dir` if this job made it and it holds no result: nothing but `records` (paths
  // relative to it: the job's .hydra/ files and log) and files a job opens before it has anything
  // to say (see holds_no_result); then each parent made for it that is empty now, innermost first.
  // Any other file (a result, something of someone else's) keeps the directory. Returns whether
  // run_dir was removed.
  bool remove_if_no_results(const std::vector<std::string>& records) const;

  // An empty file, a CSV file with its header alone (metrics.csv before its first row), or a
  // TensorBoard event file with its first record alone (the file version every writer opens with).
  static bool holds_no_result(const std::string& path);

 private:
  std::string run_dir_;
  std::vector<std::string> made_;  // run_dir and the parents that did not exist, innermost first
};

}  // namespace trainer::launch
