// Where configs come from: the project's configs/ tree (found relative to the trainer binary or
// its install prefix) as the default primary tree, and the search path Hydra would build from
// --config-path / --config-dir.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/override.h"

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

// Hydra 1.3's hydra.searchpath, read before composing: the first `hydra.searchpath=[...]` override
// (provider "hydra.searchpath in command-line"), else hydra.searchpath of the primary config
// `config_name` alone, interpolations resolved ("hydra.searchpath in main"). Its entries follow
// `path`; an entry without a scheme is a file:// one, and a directory that does not exist is a
// warning, as in Hydra. Hydra honours only the plain form: `+hydra.searchpath=` and
// `++hydra.searchpath=` compose but leave the search path alone (a warning says so). Throws
// trainer::Error for a value that is not a list of strings, a pkg:// entry (there are no Python
// packages here) and an unknown scheme.
std::vector<config::SearchPathEntry> with_hydra_searchpath(std::vector<config::SearchPathEntry> path,
                                                           const std::string& config_name,
                                                           const std::vector<config::Override>& overrides);

}  // namespace trainer::launch
