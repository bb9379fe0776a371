#include "trainer/launch/config_locations.h"

#include <unistd.h>

#include <climits>
#include <filesystem>

#include "trainer/config/config_repository.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

std::string executable_dir() {
  char buffer[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return fs::current_path().string();
  buffer[n] = '\0';
  return fs::path(buffer).parent_path().string();
}

std::optional<std::string> default_config_dir() {
  const fs::path exe = executable_dir();
  // Installed: <prefix>/bin/trainer -> <prefix>/share/trainer/configs. Built: build/<variant>/trainer
  // -> <source>/configs (two levels up), or one level up for a build directory at the top.
  for (const fs::path& candidate : {exe / ".." / "share" / "trainer" / "configs",
                                    exe / ".." / ".." / "configs", exe / ".." / "configs"}) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return fs::canonical(candidate, ec).string();
  }
  return std::nullopt;
}

std::vector<config::SearchPathEntry> make_search_path(const std::optional<std::string>& config_path,
                                                      const std::optional<std::string>& config_dir) {
  std::vector<config::SearchPathEntry> path;
  path.push_back({"hydra", config::kBuiltinHydraSearchPath});
  std::error_code ec;
  if (config_path) {
    fs::path primary = fs::absolute(*config_path, ec);
    if (!fs::is_directory(primary, ec)) {
      throw Error("--config-path " + *config_path,
                  "primary config directory '" + primary.string() + "' not found",
                  "Pass an existing directory (relative paths are taken from the current directory).");
    }
    path.push_back({"main", "file://" + fs::canonical(primary, ec).string()});
  } else if (auto shipped = default_config_dir()) {
    path.push_back({"main", "file://" + *shipped});
  }
  if (config_dir) {
    fs::path extra = fs::absolute(*config_dir, ec);
    if (!fs::is_directory(extra, ec)) {
      throw Error("--config-dir " + *config_dir,
                  "additional config directory '" + extra.string() + "' not found",
                  "Pass an existing directory.");
    }
    path.push_back({"command-line", "file://" + fs::canonical(extra, ec).string()});
  }
  return path;
}

}  // namespace trainer::launch
