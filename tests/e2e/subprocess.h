// Runs a real process for end-to-end tests: argv without a shell, in a given directory, with
// stdout and stderr captured separately. Every run has a timeout: past it the process's whole
// process group (the process and what it started) is killed and the test fails, naming the
// command, the timeout and the last lines it wrote.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trainer::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// The longest a run may take unless the call says otherwise: every run of the suite but one took
// under 45 s on the 2-core machine shared with other builds (TRAINER_TEST_RUN_TIMES); the ASHA
// sweep of sweep_test.cpp, 10 epochs in its first job, took 4.5 min there and passes its own.
inline constexpr std::chrono::seconds kProcessTimeout{300};

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = "",
                          const std::vector<std::string>& extra_env = {},
                          std::chrono::seconds timeout = kProcessTimeout);

// Runs argv like run_process, checking `when` every 10 ms while it runs; the first time it
// returns true the process gets `signal_number` (once). `signalled` says whether that happened
// before the process ended on its own.
ProcessResult run_and_signal(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::function<bool()>& when, int signal_number, bool* signalled,
                             std::chrono::seconds timeout = kProcessTimeout);

// Runs argv like run_process, sending each signal in turn: the first once its `when` returns true
// (checked every 10 ms), the next once its own does, and so on. `sent` says how many went before
// the process ended.
struct SignalWhen {
  std::function<bool()> when;
  int signal_number = 0;
};
ProcessResult run_and_signal_each(const std::vector<std::string>& argv, const std::string& cwd,
                                  const std::vector<SignalWhen>& signals, size_t* sent,
                                  std::chrono::seconds timeout = kProcessTimeout);

// A process the test leaves running while it goes on (a server), its output in `log_path`;
// stopped with its process group (SIGTERM, then SIGKILL) when the object goes.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path,
                    const std::vector<std::string>& extra_env = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  bool running() const;
  void stop();

 private:
  pid_t pid_ = -1;
};

// A loopback TCP port nothing listens on just now (bound to port 0, then closed).
int free_local_port();
// Whether something accepts connections on 127.0.0.1:port.
bool local_port_open(int port);

// A fresh temporary directory, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A small file system for full-disk tests: a tmpfs of `megabytes` mounted at `path` (made) while
// the object lives; mounting takes root, so `mounted()` says whether it happened.
class SmallDisk {
 public:
  SmallDisk(std::filesystem::path path, int megabytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  // Takes the free space but `free_bytes` with one file ("filler"); empty_filler() gives it back.
  void fill_leaving(uintmax_t free_bytes) const;
  void empty_filler() const;

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
};

// Sets an environment variable for the processes started while it lives (they inherit this
// process's environment), and restores the old value, or its absence, when it goes.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace trainer::testing
