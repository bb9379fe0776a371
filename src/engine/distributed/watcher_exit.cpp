#include "trainer/engine/distributed/watcher_exit.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace trainer::engine {
namespace {

std::mutex& file_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string& file_to_remove() {
  static std::string path;
  return path;
}

}  // namespace

void remove_on_watcher_exit(const std::string& path) {
  const std::lock_guard<std::mutex> lock(file_mutex());
  file_to_remove() = path;
}

void exit_from_watcher(const std::string& paragraph) {
  std::fprintf(stderr, "Error: %s\n", paragraph.c_str());
  std::fflush(stderr);
  {
    const std::lock_guard<std::mutex> lock(file_mutex());
    if (!file_to_remove().empty()) ::unlink(file_to_remove().c_str());
  }
  std::_Exit(1);
}

}  // namespace trainer::engine
