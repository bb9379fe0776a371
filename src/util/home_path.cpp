#include "trainer/util/home_path.h"

#include <cstdlib>

namespace trainer {

std::string expand_home(const std::string& path) {
  if (path != "~" && path.rfind("~/", 0) != 0) return path;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return path;
  return std::string(home) + path.substr(1);
}

}  // namespace trainer
