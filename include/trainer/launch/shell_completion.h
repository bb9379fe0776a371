// Tab completion as Hydra 1.3's completion plugins answer it (`trainer -sc query=bash`): for the
// command line typed so far, the commands, config groups and their options (`model=` ->
// `model=cnn model=mlp ...`), the keys and values of the config that line composes
// (`trainer.max_` -> `trainer.max_epochs= trainer.max_steps= trainer.max_time=`, key_completion.h)
// and files after `key=./`. Where Hydra's parser gives up (a half-typed flag, a flag's missing
// value), flags and their values. No LibTorch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/override.h"

namespace trainer::launch {

// The flags of the line being completed that choose the config tree.
struct CompletionTree {
  std::optional<std::string> config_path;  // -cp / --config-path
  std::optional<std::string> config_name;  // -cn / --config-name
  std::optional<std::string> config_dir;   // -cd / --config-dir
};

// Builds the composer the completed command would use: the tree its flags name, and the
// hydra.searchpath of its overrides. Throws trainer::Error when it cannot (a missing directory).
using ComposerForLine =
    std::function<config::Composer(const CompletionTree& tree, const std::vector<config::Override>& overrides)>;

// The candidates for `line` (the program's words as typed, the program itself first; a trailing
// space starts a new word), sorted and without duplicates. Lines Hydra cannot complete (a
// malformed earlier override, an interpolation that does not resolve) give none; never throws.
// `tree` holds the query's own flags; the line's flags take their place.
std::vector<std::string> completion_candidates(std::string_view line, const CompletionTree& tree,
                                               const ComposerForLine& composer_for);

}  // namespace trainer::launch
