// The config repository behind composition: config groups are directories, options are
// `<name>.yaml` files, and the first search-path entry holding a file wins (Hydra's rule). The
// entry "pkg://hydra.conf" is the built-in source of the `hydra/...` configs. Every file is read
// and parsed once; later lookups come from memory, so a large sweep touches the disk once.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/node.h"

namespace trainer::config {

// Path of the built-in source in a search path (Hydra spells it the same way).
inline constexpr const char* kBuiltinHydraSearchPath = "pkg://hydra.conf";
// The config Hydra composes when there is no primary config.
inline constexpr const char* kEmptyPrimaryConfig = "_dummy_empty_config_";

struct LoadedConfig {
  std::string config_path;                    // "db/mysql"
  std::string source;                         // the file it came from, for messages
  Node body;                                  // the file without its top-level `defaults`
  const Node* defaults = nullptr;             // points into defaults_node when present
  Node defaults_node;                         // the raw `defaults` list (null when absent)
  std::optional<std::string> package_header;  // from `# @package ...`
};

class ConfigRepository {
 public:
  // Inserts the built-in source first when the search path does not name it.
  explicit ConfigRepository(std::vector<SearchPathEntry> search_path);
  ~ConfigRepository();
  ConfigRepository(const ConfigRepository&) = delete;
  ConfigRepository& operator=(const ConfigRepository&) = delete;

  // nullptr when no entry holds the config. Throws trainer::Error on YAML errors.
  std::shared_ptr<const LoadedConfig> load(const std::string& config_path) const;
  bool config_exists(const std::string& config_path) const;
  bool group_exists(const std::string& group) const;
  // Options (configs) of a group across all entries, sorted, without duplicates.
  std::vector<std::string> group_options(const std::string& group) const;
  // Sub-groups directly inside `group` ("" for the top level), sorted.
  std::vector<std::string> subgroups(const std::string& group) const;
  // Every group, nested ones as "a/b", sorted.
  std::vector<std::string> all_groups() const;

  const std::vector<SearchPathEntry>& search_path() const { return search_path_; }
  // "\tprovider=main, path=file:///abs/conf" lines, as Hydra lists them in messages.
  std::string describe_search_path() const;

 private:
  struct Source;
  const Source* find_config_source(const std::string& config_path) const;

  std::vector<SearchPathEntry> search_path_;
  std::vector<std::unique_ptr<Source>> sources_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const LoadedConfig>> configs_;
  mutable std::unordered_map<std::string, bool> groups_;
};

}  // namespace trainer::config
