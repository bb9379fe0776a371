#include "subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <catch2/catch.hpp>

namespace trainer::testing {

namespace {

using Clock = std::chrono::steady_clock;

// In the child: its own process group, so that a timeout kills whatever it started too.
void start_own_group() { setpgid(0, 0); }

std::string tail_of(const std::string& text) {
  const size_t keep = 3000;
  return text.size() <= keep ? text : "[...]" + text.substr(text.size() - keep);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) line += (line.empty() ? "" : " ") + arg;
  return line;
}

// Kills the process group of `pid` and reaps it; the test then fails saying what ran too long.
void fail_timed_out(pid_t pid, const std::vector<std::string>& argv, std::chrono::seconds timeout,
                    const std::string& out, const std::string& err) {
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  FAIL("timed out after " << timeout.count() << " s (its process group was killed): " << command_line(argv)
                          << "\n--- stdout (tail) ---\n"
                          << tail_of(out) << "\n--- stderr (tail) ---\n"
                          << tail_of(err));
}

// With TRAINER_TEST_RUN_TIMES=<file> every run appends "<seconds> <command>" to that file: the
// measurements behind kProcessTimeout.
void record_run_time(const std::vector<std::string>& argv, Clock::time_point started) {
  const char* path = std::getenv("TRAINER_TEST_RUN_TIMES");
  if (path == nullptr || *path == '\0') return;
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::ofstream(path, std::ios::app) << seconds << " " << command_line(argv) << "\n";
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd,
                          const std::vector<std::string>& extra_env, std::chrono::seconds timeout) {
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline = started + timeout;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    start_own_group();
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    for (const std::string& assignment : extra_env) putenv(const_cast<char*>(assignment.c_str()));
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so that the group exists whichever of the two runs first
  close(out_pipe[1]);
  close(err_pipe[1]);
  ProcessResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buffer[65536];
  bool timed_out = false;
  while (open_fds > 0) {
    const int ready = poll(fds, 2, remaining_ms(deadline));
    if (ready == 0) {
      timed_out = true;
      break;
    }
    if (ready < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      }
    }
  }
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  int status = 0;
  // Both pipes closed: the process is ending, or closed them and goes on.
  while (!timed_out && waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline)
      timed_out = true;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timed_out) fail_timed_out(pid, argv, timeout, result.out, result.err);
  record_run_time(argv, started);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

ProcessResult run_and_signal(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::function<bool()>& when, int signal_number, bool* signalled,
                             std::chrono::seconds timeout) {
  size_t sent = 0;
  ProcessResult result = run_and_signal_each(argv, cwd, {{when, signal_number}}, &sent, timeout);
  *signalled = sent == 1;
  return result;
}

ProcessResult run_and_signal_each(const std::vector<std::string>& argv, const std::string& cwd,
                                  const std::vector<SignalWhen>& signals, size_t* sent, std::chrono::seconds timeout) {
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline = started + timeout;
  // Output goes to files, so nothing blocks on a full pipe while we watch.
  char out_name[] = "/tmp/trainer-test-out-XXXXXX";
  char err_name[] = "/tmp/trainer-test-err-XXXXXX";
  int out_fd = mkstemp(out_name);
  int err_fd = mkstemp(err_name);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("mkstemp failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    start_own_group();
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_fd);
  close(err_fd);
  *sent = 0;
  int status = 0;
  bool timed_out = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    if (*sent < signals.size() && signals[*sent].when()) {
      kill(pid, signals[*sent].signal_number);
      ++*sent;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ProcessResult result;
  if (!timed_out) result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const char* path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::remove(path);
    return buffer.str();
  };
  result.out = slurp(out_name);
  result.err = slurp(err_name);
  if (timed_out) fail_timed_out(pid, argv, timeout, result.out, result.err);
  record_run_time(argv, started);
  return result;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const std::string& cwd,
                                     const std::string& log_path, const std::vector<std::string>& extra_env) {
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot create " + log_path);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    start_own_group();
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    for (const std::string& assignment : extra_env) putenv(const_cast<char*>(assignment.c_str()));
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid_, pid_);
  close(log_fd);
}

BackgroundProcess::~BackgroundProcess() { stop(); }

bool BackgroundProcess::running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

void BackgroundProcess::stop() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGTERM);
  for (int i = 0; i < 100 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) throw std::runtime_error("bind failed");
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool local_port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool open = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return open;
}

SmallDisk::SmallDisk(std::filesystem::path path, int megabytes) : path_(std::move(path)) {
  std::filesystem::create_directories(path_);
  mounted_ = run_process({"/bin/mount", "-t", "tmpfs", "-o", "size=" + std::to_string(megabytes) + "m", "tmpfs",
                          path_.string()})
                 .exit_code == 0;
}

SmallDisk::~SmallDisk() {
  if (mounted_) run_process({"/bin/umount", "-l", path_.string()});
}

void SmallDisk::fill_leaving(uintmax_t free_bytes) const {
  const uintmax_t available = std::filesystem::space(path_).available;
  const int fd = ::open((path_ / "filler").c_str(), O_CREAT | O_WRONLY, 0600);
  if (fd < 0) return;
  if (available > free_bytes) (void)::posix_fallocate(fd, 0, static_cast<off_t>(available - free_bytes));
  ::close(fd);
}

void SmallDisk::empty_filler() const {
  std::error_code ec;
  std::filesystem::remove(path_ / "filler", ec);
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "trainer-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

ScopedEnv::ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) old_ = old;
  ::setenv(name_.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (old_) {
    ::setenv(name_.c_str(), old_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

}  // namespace trainer::testing
