// The built-in `hydra/...` configs (Hydra's pkg://hydra.conf): the hydra node's shape with its
// defaults list and the hydra/launcher, hydra/sweeper, logging, output, help groups. They live in
// the binary as YAML text so that a trainer needs no installed data files.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace trainer::config {

// Config path without ".yaml" ("hydra/config", "hydra/launcher/basic") -> YAML text, sorted by
// path.
const std::vector<std::pair<std::string_view, std::string_view>>& builtin_hydra_configs();

}  // namespace trainer::config
