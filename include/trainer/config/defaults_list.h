// Hydra 1.3's defaults list: from the primary config (with hydra/config prepended) and the
// command line's config-group overrides to the ordered list of configs to merge, each with its
// package, plus the tree `--info defaults-tree` prints and the group choices that end up in
// hydra.runtime.choices.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/config_repository.h"
#include "trainer/config/override.h"

namespace trainer::config {

struct DefaultsListResult {
  std::vector<DefaultsEntry> defaults;  // merge order
  std::string tree;                     // `--info defaults-tree` text, one line per node
  // group (with "@pkg" when not at its default package) -> chosen option (nullopt for null), in
  // the order Hydra records them (it walks each defaults list from the end).
  std::vector<std::pair<std::string, std::optional<std::string>>> choices;
};

// `group_overrides` are the command-line overrides whose key names a config group (and whose
// value is not a dict): `db=mysql`, `+db=pg`, `~db`, `db@backup=pg`. `config_name` empty means no
// primary config. `skip_missing` leaves `???` group choices unselected (multirun), else it is an
// error. Throws trainer::Error naming the defaults-list line or override at fault.
DefaultsListResult create_defaults_list(const ConfigRepository& repo, const std::string& config_name,
                                        const std::vector<const Override*>& group_overrides, bool skip_missing);

}  // namespace trainer::config
