#include "trainer/launch/config_locations.h"

#include <unistd.h>

#include <climits>
#include <filesystem>

#include "trainer/config/config_repository.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/python_str.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

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
  for (const fs::path& candidate :
       {exe / ".." / "share" / "trainer" / "configs", exe / ".." / ".." / "configs", exe / ".." / "configs"}) {
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
      throw Error("--config-path " + *config_path, "primary config directory '" + primary.string() + "' not found",
                  "Pass an existing directory (relative paths are taken from the current directory).");
    }
    path.push_back({"main", "file://" + fs::canonical(primary, ec).string()});
  } else if (auto shipped = default_config_dir()) {
    path.push_back({"main", "file://" + *shipped});
  }
  if (config_dir) {
    fs::path extra = fs::absolute(*config_dir, ec);
    if (!fs::is_directory(extra, ec)) {
      throw Error("--config-dir " + *config_dir, "additional config directory '" + extra.string() + "' not found",
                  "Pass an existing directory.");
    }
    path.push_back({"command-line", "file://" + fs::canonical(extra, ec).string()});
  }
  return path;
}

namespace {

constexpr const char* kSearchpathFix =
    "Write it as a list of directories, e.g. hydra.searchpath=[file:///abs/conf,file://relative/conf].";

std::string dotted_to_path(std::string name) {
  for (char& c : name) {
    if (c == '.') c = '/';
  }
  return name;
}

// One hydra.searchpath entry as a search-path entry: "dir" means file://dir, as in Hydra.
config::SearchPathEntry searchpath_entry(const std::string& provider, const std::string& text,
                                         const std::string& where) {
  const size_t scheme_end = text.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "file" : text.substr(0, scheme_end);
  if (scheme == "pkg" && text != config::kBuiltinHydraSearchPath) {
    throw Error(where,
                "hydra.searchpath entry '" + text +
                    "' names a Python package, and trainer has no Python packages to read configs from",
                "Point the entry at the directory that holds those configs instead, e.g. file:///abs/path/to/" +
                    dotted_to_path(text.substr(scheme_end + 3)) +
                    " (a relative file:// path starts at the current directory).");
  }
  if (scheme != "file" && scheme != "pkg") {
    throw Error(where,
                "hydra.searchpath entry '" + text + "': No config source registered for schema " + scheme +
                    ", supported types : [file, pkg]",
                "Use file:///abs/dir or file://relative/dir.");
  }
  const std::string path = scheme_end == std::string::npos ? "file://" + text : text;
  if (scheme == "file") {
    std::error_code ec;
    if (!fs::is_directory(path.substr(7), ec)) {
      log::warning("provider=" + provider + ", path=" + path.substr(7) + " is not available.");
    }
  }
  return {provider, path};
}

}  // namespace

std::vector<config::SearchPathEntry> with_hydra_searchpath(std::vector<config::SearchPathEntry> path,
                                                           const std::string& config_name,
                                                           const std::vector<config::Override>& overrides) {
  std::optional<config::Node> listed;
  std::string provider = "hydra.searchpath in command-line";
  std::string where;
  for (const config::Override& override : overrides) {
    if (override.key != "hydra.searchpath" || override.package || override.is_sweep()) continue;
    if (override.kind == config::OverrideKind::kChange) {
      listed = override.value;
      where = config::Origin::override_text(override.text).describe();
      break;
    }
    if (override.kind != config::OverrideKind::kDelete) {
      log::warning(override.text +
                   ": Hydra 1.3 composes this override but does not search its directories; "
                   "write hydra.searchpath=[...] (no +) to add them to the config search path.");
    }
  }
  if (!listed && !config_name.empty()) {
    config::ConfigRepository repository(path);
    std::shared_ptr<const config::LoadedConfig> primary = repository.load(config_name);
    const config::Node* node = primary ? config::select(primary->body, "hydra.searchpath") : nullptr;
    if (node == nullptr || node->is_null()) return path;
    provider = "hydra.searchpath in main";
    where = node->origin().known() ? node->origin().describe() : primary->source;
    config::ResolveContext ctx;
    listed = config::resolve_path(primary->body, "hydra.searchpath", ctx);
  }
  if (!listed || listed->is_null()) return path;
  bool strings = listed->is_list();
  for (size_t i = 0; strings && i < listed->items().size(); ++i) strings = listed->items()[i].is_string();
  if (!strings) {
    throw Error(where, "hydra.searchpath must be a list of strings. Got: " + config::python_str(*listed),
                kSearchpathFix);
  }
  for (const config::Node& item : listed->items()) path.push_back(searchpath_entry(provider, item.as_string(), where));
  return path;
}

}  // namespace trainer::launch
