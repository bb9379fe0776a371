#include "trainer/engine/distributed/local_ranks.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "trainer/engine/distributed/watcher_exit.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/signal_cause.h"

extern char** environ;

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

RankFailure describe_status(int rank, pid_t pid, int status) {
  RankFailure failure;
  failure.rank = rank;
  failure.what = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
  if (!WIFSIGNALED(status)) {
    failure.what += " exited with code " + std::to_string(WEXITSTATUS(status));
    return failure;
  }
  const int number = WTERMSIG(status);
  failure.what += " was killed by " + signal_text(number);
  failure.why = signal_cause(number);
  return failure;
}

bool failed(int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); }

}  // namespace

std::vector<std::string> LocalRanks::own_command_line() {
  // A sweep job forked from the sweep process (launch/launcher.h) still shows the sweep's command
  // line; the launcher passes the job's own (`trainer sweep run-job DIR N`), fields separated by
  // the ASCII unit separator.
  std::string text;
  if (const char* job = std::getenv("TRAINER_JOB_COMMAND"); job != nullptr && job[0] != '\0') {
    text = job;
    for (char& c : text) c = c == '\x1f' ? '\0' : c;
    text += '\0';
  } else {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    text.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\0') {
      args.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < text.size()) args.push_back(text.substr(start));
  return args;
}

int LocalRanks::free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    throw Error("trainer.master_port", "cannot open a socket to find a free port: " + std::string(strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  if (port <= 0) {
    throw Error("trainer.master_port", "no free TCP port found on 127.0.0.1",
                "Set trainer.master_port to a free port.");
  }
  return port;
}

LocalRanks::LocalRanks(int world_size, const std::vector<std::string>& args, const std::string& master_addr,
                       int master_port) {
  const pid_t parent = ::getpid();
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/trainer-store-XXXXXX";
  const int fd = ::mkstemp(pattern.data());  // mode 0600: only this user's processes reach the store
  if (fd < 0) {
    throw Error("trainer.devices", std::string("cannot create the ranks' rendezvous file: ") + strerror(errno),
                "Set TMPDIR to a writable directory.");
  }
  ::close(fd);
  store_file_ = pattern;
  remove_on_watcher_exit(store_file_);  // a hang's exit skips the destructor below
  const char* nccl_interface = std::getenv("NCCL_SOCKET_IFNAME");
  const bool keep_nccl_interface = nccl_interface != nullptr && nccl_interface[0] != '\0';
  auto common = [&](int rank) {
    std::vector<std::pair<std::string, std::string>> variables = {{"RANK", std::to_string(rank)},
                                                                  {"LOCAL_RANK", std::to_string(rank)},
                                                                  {"WORLD_SIZE", std::to_string(world_size)},
                                                                  {"LOCAL_WORLD_SIZE", std::to_string(world_size)},
                                                                  {"GROUP_RANK", "0"},
                                                                  {"MASTER_ADDR", master_addr},
                                                                  {"MASTER_PORT", std::to_string(master_port)},
                                                                  {"TRAINER_DDP_LAUNCHER", std::to_string(parent)},
                                                                  {"TRAINER_STORE_FILE", store_file_}};
    if (!keep_nccl_interface) variables.emplace_back("NCCL_SOCKET_IFNAME", "lo");
    return variables;
  };
  // This process's environment for the children, minus the variables set per rank.
  std::vector<std::string> base;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const auto& [key, value] : common(0)) replaced = replaced || key == name;
    if (!replaced) base.push_back(text);
  }
  try {
    for (int rank = 1; rank < world_size; ++rank) {
      std::vector<std::string> env = base;
      for (const auto& [key, value] : common(rank)) env.push_back(key + "=" + value);
      std::vector<char*> argv;
      for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      std::vector<char*> envp;
      for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
      envp.push_back(nullptr);
      // The rank's stderr: a pipe this process reads (rank_stderr_relay.h). Close-on-exec, so
      // that no other child holds it open; dup2 makes the rank's own copy, fd 2, inheritable.
      int output[2];
      if (::pipe2(output, O_CLOEXEC) != 0) {
        throw Error("trainer.devices",
                    "cannot make a pipe for rank " + std::to_string(rank) + "'s output: " + strerror(errno),
                    "Lower trainer.devices, or check the open-file limit (ulimit -n).");
      }
      ::fcntl(output[0], F_SETPIPE_SZ, 1 << 20);  // room for a burst while this process is busy (best effort)
      const pid_t pid = ::fork();
      if (pid < 0) {
        const int error = errno;
        ::close(output[0]);
        ::close(output[1]);
        throw Error("trainer.devices", "cannot start rank " + std::to_string(rank) + ": " + strerror(error),
                    "Lower trainer.devices, or check the process limit (ulimit -u).");
      }
      if (pid == 0) {
        // Only async-signal-safe calls until exec: the job process may have threads.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
        if (::dup2(output[1], STDERR_FILENO) < 0) ::_exit(127);
        ::execve("/proc/self/exe", argv.data(), envp.data());
        ::_exit(127);
      }
      ::close(output[1]);
      relay_.add(rank, output[0]);
      ranks_.push_back({rank, pid, true});
    }
  } catch (...) {
    stop(0);
    ::unlink(store_file_.c_str());
    remove_on_watcher_exit("");
    throw;
  }
  for (const auto& [key, value] : common(0)) ::setenv(key.c_str(), value.c_str(), 1);
  supervisor_ = std::thread([this] { supervise(); });
}

LocalRanks::~LocalRanks() {
  stop();
  quit_ = true;
  if (supervisor_.joinable()) supervisor_.join();
  relay_.finish(1.0);             // the ranks have ended: pass on the rest of what they wrote
  ::unlink(store_file_.c_str());  // FileStore removes it when every rank ends cleanly; a crash leaves it
  remove_on_watcher_exit("");
}

void LocalRanks::supervise() {
  while (!quit_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (Rank& r : ranks_) {
        if (!r.running) continue;
        int status = 0;
        const pid_t done = ::waitpid(r.pid, &status, WNOHANG);
        if (done == r.pid) {
          r.running = false;
          if (failed(status) && !failure_ && !stopping_) failure_ = describe_status(r.rank, r.pid, status);
        } else if (done < 0 && errno == ECHILD) {
          r.running = false;
        }
      }
    }
    relay_.pump(20);  // the ranks' output, or 20 ms of waiting
  }
}

std::string LocalRanks::last_output(int rank) {
  const std::vector<std::string> lines = relay_.last_lines(rank);
  const std::string number = std::to_string(rank);
  if (lines.empty()) return "Rank " + number + " wrote nothing to stderr.";
  const std::string log_file = log::file_path();
  std::string text = "The last lines rank " + number + " wrote to stderr (all of its output is above" +
                     (log_file.empty() ? std::string() : " and in " + log_file) + ", marked [rank " + number + "]):";
  for (const std::string& line : lines) text += "\n  " + RankStderrRelay::prefix(rank) + line;
  return text;
}

bool LocalRanks::all_ended() const {
  for (const Rank& r : ranks_) {
    if (r.running) return false;
  }
  return true;
}

std::optional<RankFailure> LocalRanks::failure(double seconds) const {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failure_ || all_ended()) return failure_;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<RankFailure> LocalRanks::wait_all(double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (all_ended()) return failure_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

void LocalRanks::stop(double grace_seconds) {
  auto signal_running = [&](int number) {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    bool any = false;
    for (const Rank& r : ranks_) {
      if (r.running) {
        ::kill(r.pid, number);
        any = true;
      }
    }
    return any;
  };
  if (!signal_running(SIGTERM)) return;
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace_seconds);
  while (Clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (all_ended()) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  signal_running(SIGKILL);
  // Reap here too: the supervisor may already be gone.
  std::lock_guard<std::mutex> lock(mutex_);
  for (Rank& r : ranks_) {
    if (!r.running) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, 0) == r.pid) r.running = false;
  }
}

}  // namespace trainer::engine
