#include "trainer/config/config_repository.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "trainer/config/builtin_hydra_configs.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace trainer::config {

namespace fs = std::filesystem;

namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// "db/mysql.yaml" and "db/mysql" name the same config (Hydra accepts both for --config-name).
std::string strip_yaml_extension(const std::string& path) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".yaml") == 0) {
    return path.substr(0, path.size() - 5);
  }
  return path;
}

}  // namespace

// One search-path entry: the built-in in-memory configs or a directory on disk.
struct ConfigRepository::Source {
  SearchPathEntry entry;
  bool builtin = false;
  std::string directory;  // for files: the path without "file://"

  bool is_config(const std::string& config_path) const {
    if (builtin) {
      if (config_path == kEmptyPrimaryConfig) return true;
      for (const auto& [path, text] : builtin_hydra_configs()) {
        if (path == config_path) return true;
      }
      return false;
    }
    if (directory.empty() && entry.path.empty()) return false;
    std::error_code ec;
    return fs::is_regular_file(fs::path(directory) / (config_path + ".yaml"), ec);
  }

  bool is_group(const std::string& group) const {
    if (builtin) {
      if (group.empty()) return true;
      const std::string prefix = group + "/";
      for (const auto& [path, text] : builtin_hydra_configs()) {
        if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0) return true;
      }
      return false;
    }
    std::error_code ec;
    return fs::is_directory(group.empty() ? fs::path(directory) : fs::path(directory) / group, ec);
  }

  // Names of the configs (want_groups false) or sub-groups (true) directly inside `group`.
  void list(const std::string& group, bool want_groups, std::set<std::string>& out) const {
    if (builtin) {
      const std::string prefix = group.empty() ? "" : group + "/";
      for (const auto& [path, text] : builtin_hydra_configs()) {
        if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
        std::string_view rest = path.substr(prefix.size());
        size_t slash = rest.find('/');
        if (want_groups && slash != std::string_view::npos) out.emplace(rest.substr(0, slash));
        if (!want_groups && slash == std::string_view::npos) out.emplace(rest);
      }
      return;
    }
    std::error_code ec;
    fs::path dir = group.empty() ? fs::path(directory) : fs::path(directory) / group;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (want_groups) {
        if (it->is_directory(ec) && name != "__pycache__") out.insert(name);
      } else if (it->is_regular_file(ec) && name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0) {
        out.insert(name.substr(0, name.size() - 5));
      }
    }
  }

  std::string display_path() const {
    if (builtin) return entry.path;
    if (starts_with(entry.path, "file://")) return entry.path;
    return "file://" + directory;
  }
};

ConfigRepository::ConfigRepository(std::vector<SearchPathEntry> search_path) : search_path_(std::move(search_path)) {
  bool has_builtin = false;
  for (const SearchPathEntry& entry : search_path_) {
    if (entry.path == kBuiltinHydraSearchPath) has_builtin = true;
  }
  if (!has_builtin) {
    search_path_.insert(search_path_.begin(), SearchPathEntry{"hydra", kBuiltinHydraSearchPath});
  }
  for (const SearchPathEntry& entry : search_path_) {
    auto source = std::make_unique<Source>();
    source->entry = entry;
    if (entry.path == kBuiltinHydraSearchPath) {
      source->builtin = true;
    } else if (starts_with(entry.path, "pkg://")) {
      // Python packages do not exist here: such an entry holds nothing.
      source->directory.clear();
    } else {
      std::string dir = starts_with(entry.path, "file://") ? entry.path.substr(7) : entry.path;
      std::error_code ec;
      fs::path absolute = fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir), ec);
      source->directory = ec ? dir : absolute.lexically_normal().string();
      if (source->directory.size() > 1 && source->directory.back() == '/') {
        source->directory.pop_back();
      }
    }
    sources_.push_back(std::move(source));
  }
}

ConfigRepository::~ConfigRepository() = default;

const ConfigRepository::Source* ConfigRepository::find_config_source(const std::string& config_path) const {
  for (const auto& source : sources_) {
    if (source->is_config(config_path)) return source.get();
  }
  return nullptr;
}

std::shared_ptr<const LoadedConfig> ConfigRepository::load(const std::string& path) const {
  const std::string config_path = strip_yaml_extension(path);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = configs_.find(config_path);
    if (it != configs_.end()) return it->second;
  }
  std::shared_ptr<LoadedConfig> loaded;
  if (const Source* source = find_config_source(config_path)) {
    YamlDocument document;
    loaded = std::make_shared<LoadedConfig>();
    loaded->config_path = config_path;
    if (source->builtin) {
      std::string_view text = "{}\n";
      for (const auto& [builtin_path, builtin_text] : builtin_hydra_configs()) {
        if (builtin_path == config_path) text = builtin_text;
      }
      loaded->source = std::string(kBuiltinHydraSearchPath) + "/" + config_path + ".yaml";
      document = load_yaml_string(text, loaded->source);
    } else {
      loaded->source = (fs::path(source->directory) / (config_path + ".yaml")).string();
      document = load_yaml_file(loaded->source);
    }
    loaded->package_header = std::move(document.package);
    loaded->body = std::move(document.root);
    if (!loaded->body.is_map()) loaded->body = Node::map();
    for (auto it = loaded->body.entries().begin(); it != loaded->body.entries().end(); ++it) {
      if (it->key != "defaults") continue;
      if (!it->value.is_list()) {
        const char* got = it->value.is_map() ? "mapping" : type_name(it->value.type());
        throw Error(it->value.origin().known() ? it->value.origin().describe() : loaded->source,
                    "Invalid defaults list in '" + config_path + "', defaults must be a list (got " + got + ")",
                    "write it as a YAML list: `defaults:` followed by `- group: option` lines");
      }
      loaded->defaults_node = std::move(it->value);
      loaded->body.entries().erase(it);
      break;
    }
    if (loaded->defaults_node.is_list()) loaded->defaults = &loaded->defaults_node;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = configs_.emplace(config_path, std::move(loaded));
  return it->second;
}

bool ConfigRepository::config_exists(const std::string& config_path) const {
  return find_config_source(strip_yaml_extension(config_path)) != nullptr;
}

bool ConfigRepository::group_exists(const std::string& group) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = groups_.find(group);
    if (it != groups_.end()) return it->second;
  }
  bool exists = false;
  if (!group.empty()) {
    for (const auto& source : sources_) {
      if (source->is_group(group)) {
        exists = true;
        break;
      }
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  groups_.emplace(group, exists);
  return exists;
}

std::vector<std::string> ConfigRepository::group_options(const std::string& group) const {
  std::set<std::string> options;
  for (const auto& source : sources_) {
    if (source->is_group(group)) source->list(group, false, options);
  }
  return {options.begin(), options.end()};
}

std::vector<std::string> ConfigRepository::subgroups(const std::string& group) const {
  std::set<std::string> names;
  for (const auto& source : sources_) {
    if (source->is_group(group)) source->list(group, true, names);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> ConfigRepository::all_groups() const {
  std::vector<std::string> result;
  std::vector<std::string> pending = {""};
  while (!pending.empty()) {
    std::string group = std::move(pending.back());
    pending.pop_back();
    for (const std::string& name : subgroups(group)) {
      std::string path = group.empty() ? name : group + "/" + name;
      result.push_back(path);
      pending.push_back(path);
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::string ConfigRepository::describe_search_path() const {
  std::string text;
  for (const auto& source : sources_) {
    if (!text.empty()) text += '\n';
    text += "\tprovider=" + source->entry.provider + ", path=" + source->display_path();
  }
  // Hydra's last source, its ConfigStore, is listed there whatever it holds (nothing, here).
  text += "\n\tprovider=schema, path=structured://";
  return text;
}

}  // namespace trainer::config
