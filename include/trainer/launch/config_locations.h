// Where configs come from: the project's configs/ tree (found relative to the trainer binary or
// its install prefix) as the default primary tree, and the search path Hydra would build from
// --config-path / --config-dir.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/config/composer.h"

namespace trainer::launch {

// The directory holding the running executable.
std::string executable_dir();

// The shipped configs/ directory: <prefix>/share/trainer/configs when installed, or the source
// tree's configs/ when run from a build directory. nullopt when neither exists.
std::optional<std::string> default_config_dir();

// Hydra's order: built-in hydra configs, the primary tree ("main"), then --config-dir
// ("command-line"). Throws trainer::Error when a given directory does not exist.
std::vector<config::SearchPathEntry> make_search_path(const std::optional<std::string>& config_path,
                                                      const std::optional<std::string>& config_dir);

}  // namespace trainer::launch
