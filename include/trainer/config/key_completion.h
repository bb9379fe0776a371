// What a config offers a half-typed key, as Hydra 1.3's shell completion matches it
// (CompletionPlugin._get_matches): "trainer.max_" -> trainer.max_epochs= trainer.max_steps= ...,
// "dict." -> the node's keys (`key.` for a node, `key=` for a value), "key=" -> its value
// (Python's spelling: true, 1e-05), "list." -> its indices.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config {

// The candidates for `word` in `config`, in the config's order. Interpolations are resolved where
// a key is looked up (without a hydra node: ${hydra:...} fails, as in Hydra's completion). Throws
// trainer::Error where Hydra's completion raises: a key below a value, an interpolation that does
// not resolve.
std::vector<std::string> key_completions(const Node& config, const std::string& word);

}  // namespace trainer::config
