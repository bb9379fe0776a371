#include "trainer/engine/distributed/rank_stderr_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

// A line this long without a newline is passed on as it is (a rank printing without newlines
// must not grow the buffer without bound).
constexpr size_t kLongestLine = 64 * 1024;

}  // namespace

RankStderrRelay::~RankStderrRelay() {
  for (Pipe& pipe : pipes_) {
    if (pipe.fd >= 0) ::close(pipe.fd);
  }
}

std::string RankStderrRelay::prefix(int rank) { return "[rank " + std::to_string(rank) + "] "; }

void RankStderrRelay::add(int rank, int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::lock_guard<std::mutex> lock(mutex_);
  Pipe pipe;
  pipe.rank = rank;
  pipe.fd = fd;
  pipes_.push_back(std::move(pipe));
}

void RankStderrRelay::drain(Pipe& pipe, bool at_end) {
  std::string relayed;
  auto pass_on = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    relayed += prefix(pipe.rank) + line + "\n";
    if (line.size() > kTailLineChars) line = line.substr(0, kTailLineChars) + " [...]";
    pipe.tail.push_back(std::move(line));
    if (pipe.tail.size() > kTailLines) pipe.tail.pop_front();
  };
  char buffer[16384];
  while (pipe.fd >= 0) {
    const ssize_t n = ::read(pipe.fd, buffer, sizeof(buffer));
    if (n > 0) {
      pipe.partial.append(buffer, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t newline; (newline = pipe.partial.find('\n', start)) != std::string::npos; start = newline + 1) {
        pass_on(pipe.partial.substr(start, newline - start));
      }
      pipe.partial.erase(0, start);
      if (pipe.partial.size() >= kLongestLine) {
        pass_on(std::move(pipe.partial));
        pipe.partial.clear();
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    ::close(pipe.fd);  // the end of the pipe (or an error reading it): the rank has ended
    pipe.fd = -1;
    at_end = true;
  }
  if (at_end && !pipe.partial.empty()) {
    pass_on(std::move(pipe.partial));
    pipe.partial.clear();
  }
  if (!relayed.empty()) log::write_verbatim(relayed);
}

void RankStderrRelay::pump(int wait_ms) {
  std::vector<pollfd> watched;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Pipe& pipe : pipes_) {
      if (pipe.fd >= 0) watched.push_back({pipe.fd, POLLIN, 0});
    }
  }
  if (watched.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    return;
  }
  if (::poll(watched.data(), watched.size(), wait_ms) <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Pipe& pipe : pipes_) {
    for (const pollfd& entry : watched) {
      // The same descriptor still open (last_lines may have closed it since).
      if (entry.fd == pipe.fd && entry.revents != 0) drain(pipe, false);
    }
  }
}

std::vector<std::string> RankStderrRelay::last_lines(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Pipe& pipe : pipes_) {
    if (pipe.rank != rank) continue;
    drain(pipe, false);
    std::vector<std::string> lines(pipe.tail.begin(), pipe.tail.end());
    if (!pipe.partial.empty()) lines.push_back(pipe.partial.substr(0, kTailLineChars));
    if (lines.size() > kTailLines) lines.erase(lines.begin());
    return lines;
  }
  return {};
}

void RankStderrRelay::finish(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      bool open = false;
      for (const Pipe& pipe : pipes_) open = open || pipe.fd >= 0;
      if (!open) break;
    }
    pump(20);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (Pipe& pipe : pipes_) {
    drain(pipe, true);
    if (pipe.fd >= 0) ::close(pipe.fd);
    pipe.fd = -1;
  }
}

}  // namespace trainer::engine
