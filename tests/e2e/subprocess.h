// Runs a real process for end-to-end tests: argv without a shell, in a given directory, with
// stdout and stderr captured separately.
#pragma once

#include <string>
#include <vector>

namespace trainer::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = "",
                          const std::vector<std::string>& extra_env = {});

// A fresh temporary directory, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace trainer::testing
