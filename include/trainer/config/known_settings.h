// A plugin's settings section (hydra.launcher, hydra.sweeper) checked against the settings the
// plugin reads: Hydra builds each plugin from a structured config, so a key it does not declare
// (`+hydra.launcher.n_job=1`) is an error there, where it would otherwise change nothing.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config {

// Throws trainer::Error naming `path`.<key> for the first key of `section` (a map; anything else
// is left to the plugin's own reading) that is not in `known`, with `plugin` ("the local
// launcher") and the closest known key.
void refuse_unknown_settings(const Node& section, const std::string& path, const std::string& plugin,
                             const std::vector<std::string>& known);

// Throws trainer::Error naming `path` when `section` is a value (a string, number or list) where a
// plugin's settings belong: `hydra.launcher=slurm`, meant as the group choice `hydra/launcher=slurm`,
// which Hydra refuses ("Input config does not have a `_target_` field") and which would otherwise
// run the sweep with the default plugin. `group` is the config group ("hydra/launcher").
void refuse_plugin_value(const Node& section, const std::string& path, const std::string& group);

}  // namespace trainer::config
