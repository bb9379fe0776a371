// Runs a real process for end-to-end tests: argv without a shell, in a given directory, with
// stdout and stderr captured separately.
#pragma once

#include <functional>
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

// Runs argv like run_process, checking `when` every 10 ms while it runs; the first time it
// returns true the process gets `signal_number` (once). `signalled` says whether that happened
// before the process ended on its own.
ProcessResult run_and_signal(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::function<bool()>& when, int signal_number, bool* signalled);

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
