// `~` and `~/...` in a path given in a config, expanded as the shell would: data.root=~/photos
// reaches trainer unexpanded (bash expands a tilde after `=` only in variable assignments, and
// data.root is not a variable name).
#pragma once

#include <string>

namespace trainer {

// `path` with a leading `~` or `~/` replaced by $HOME; any other path, or no $HOME, unchanged.
std::string expand_home(const std::string& path);

}  // namespace trainer
