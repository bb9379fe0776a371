#include "pty_session.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace trainer::testing {

PtySession::PtySession(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  winsize size{};
  size.ws_row = 50;
  size.ws_col = 400;  // wide enough that no line the tests look for is wrapped
  pid_ = forkpty(&fd_, nullptr, nullptr, &size);
  if (pid_ < 0) throw std::runtime_error("forkpty failed");
  if (pid_ == 0) {
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& assignment : env) envp.push_back(const_cast<char*>(assignment.c_str()));
    envp.push_back(nullptr);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
}

PtySession::~PtySession() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

void PtySession::send(const std::string& keys) {
  size_t written = 0;
  while (written < keys.size()) {
    const ssize_t n = write(fd_, keys.data() + written, keys.size() - written);
    if (n <= 0) throw std::runtime_error("writing to the terminal failed");
    written += static_cast<size_t>(n);
  }
}

void PtySession::read_available(int timeout_ms) {
  pollfd poll_fd{fd_, POLLIN, 0};
  if (poll(&poll_fd, 1, timeout_ms) <= 0) return;
  char buffer[4096];
  const ssize_t n = read(fd_, buffer, sizeof(buffer));
  if (n > 0) output_.append(buffer, static_cast<size_t>(n));
}

bool PtySession::wait_for(const std::string& text, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (output_.find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    read_available(50);
  }
  return true;
}

}  // namespace trainer::testing
