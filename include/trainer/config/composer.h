// Hydra 1.3 composition: a search path of config directories, the primary config's defaults
// list (groups, nested defaults, _self_, override, optional, null, several options, packages,
// absolute /group paths, interpolated choices), the `hydra` node from the built-in hydra configs,
// then the command-line overrides. Loaded files are cached, so composing every job of a large
// sweep costs little more than applying its overrides.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/config/override.h"

namespace trainer::config {

// kShow composes exactly as kRun but leaves hydra.mode null, as Hydra's --cfg/--info do (a real
// run sets hydra.mode=RUN, a sweep MULTIRUN).
enum class RunMode { kRun, kMultirun, kShow };

struct SearchPathEntry {
  std::string provider;  // "hydra", "main", "command-line", ...
  std::string path;      // a directory
};

struct ComposerOptions {
  // Directories searched in order; the first holding a file wins. The CLI builds this from
  // --config-path / --config-dir and the built-in hydra configs.
  std::vector<SearchPathEntry> search_path;
  std::string config_name;  // primary config without ".yaml"; empty means none
  // hydra.job.name unless the config or an override sets it (Hydra uses the script's name).
  std::string job_name = "trainer";
};

// One entry of the final defaults list, in merge order (what `--info defaults` prints).
struct DefaultsEntry {
  std::string config_path;  // "model/mlp", "config", "hydra/launcher/basic"
  std::string package;      // "model", "" for the root, "hydra.launcher"
  std::string parent;       // config_path of the config whose defaults list named it
  bool is_self = false;     // the `_self_` of `parent`
  bool primary = false;
};

struct ComposeResult {
  Node config;                          // the whole config, including the `hydra` node
  std::vector<DefaultsEntry> defaults;  // merge order
  std::string defaults_tree;            // text of `--info defaults-tree`
};

// hydra.job.override_dirname of these task overrides: their texts sorted, joined as
// hydra.job.config.override_dirname says (kv_sep, item_sep, exclude_keys).
std::string override_dirname(const std::vector<const Override*>& task_overrides, const Node& hydra);

class Composer {
 public:
  explicit Composer(ComposerOptions options);
  ~Composer();
  Composer(Composer&&) noexcept;

  // Composes the primary config with the overrides (none may be a sweep). Fills
  // hydra.runtime.choices, hydra.overrides.task/hydra, hydra.job.name/override_dirname,
  // hydra.mode. Throws trainer::Error with the file:line or override and a fix.
  ComposeResult compose(const std::vector<Override>& overrides, RunMode mode) const;

  // Hydra's get_mode: hydra.mode ("RUN" or "MULTIRUN") as the configs and the overrides set it,
  // composed as a multirun with sweep values left out; nullopt when it is unset, or when
  // composing fails (the run then reports that error itself).
  std::optional<std::string> configured_mode(const std::vector<Override>& overrides) const;

  // Options of a config group across the search path, sorted; nullopt if no such group.
  std::optional<std::vector<std::string>> group_options(const std::string& group) const;
  // Every config group (with nested groups as "a/b"), sorted; for --help.
  std::vector<std::string> groups() const;
  // What one directory of the search path holds, merged over all entries and sorted: the configs
  // (without ".yaml") and the sub-groups directly inside `group` ("" for the top level); empty
  // when there is no such group. For shell completion and --hydra-help.
  std::vector<std::string> configs_in(const std::string& group) const;
  std::vector<std::string> subgroups(const std::string& group) const;
  // The search path in use: the given one with the built-in "pkg://hydra.conf" entry first
  // when it was not named.
  const std::vector<SearchPathEntry>& search_path() const;

 private:
  ComposeResult compose(const std::vector<Override>& overrides, RunMode mode, bool fill_mode) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainer::config
