#include "trainer/engine/distributed/stderr_location.h"

#include <unistd.h>

#include <climits>

namespace trainer::engine {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::string rank_range(size_t first, size_t last) {
  if (first == last) return "rank " + std::to_string(first);
  return "ranks " + std::to_string(first) + (last == first + 1 ? ", " : "-") + std::to_string(last);
}

}  // namespace

StderrLocation StderrLocation::of_this_process() {
  StderrLocation location;
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) location.host = host;
  char target[PATH_MAX + 1] = {};
  const ssize_t n = ::readlink("/proc/self/fd/2", target, sizeof(target) - 1);
  location.target = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string("(closed)");
  return location;
}

std::string StderrLocation::encode() const { return host + '\n' + target; }

StderrLocation StderrLocation::decode(const std::string& text) {
  const size_t newline = text.find('\n');
  if (newline == std::string::npos) return {};
  return {text.substr(0, newline), text.substr(newline + 1)};
}

std::string describe_stderr_location(const StderrLocation& location, const StderrLocation& own) {
  if (location.target.empty()) return "not known (the rank did not say)";
  const std::string on = location.host.empty() ? std::string() : " on " + location.host;
  const bool same = location == own;
  if (starts_with(location.target, "pipe:")) {
    return same ? "with this message (a pipe" + on + ")"
                : "a pipe" + on + " (its launcher's output, or a program reading it)";
  }
  if (starts_with(location.target, "socket:")) {
    return same ? "with this message (a socket" + on + ")"
                : "a socket" + on + " (its launcher's output: srun passes output through one)";
  }
  if (location.target == "/dev/null") return "/dev/null" + on + ": discarded";
  std::string what = location.target + on;
  if (starts_with(location.target, "/dev/pts/") || starts_with(location.target, "/dev/tty"))
    what = "the terminal " + what;
  return same ? "with this message (" + what + ")" : what;
}

std::string describe_stderr_locations(const std::vector<StderrLocation>& locations, const StderrLocation& own,
                                      size_t groups) {
  std::string text;
  size_t listed = 0;
  for (size_t first = 0; first < locations.size();) {
    size_t last = first;
    // Ranks in a row with the same place are one group.
    while (last + 1 < locations.size() && locations[last + 1] == locations[first]) ++last;
    if (listed == groups) {
      text += "; and " + std::to_string(locations.size() - first) + " more rank(s)";
      break;
    }
    text +=
        (text.empty() ? "" : "; ") + rank_range(first, last) + ": " + describe_stderr_location(locations[first], own);
    ++listed;
    first = last + 1;
  }
  return text;
}

}  // namespace trainer::engine
