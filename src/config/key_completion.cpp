#include "trainer/config/key_completion.h"

#include "trainer/config/interpolation.h"
#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

namespace trainer::config {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// Hydra's schema types hydra.sweeper.params as an optional dict: null there is still a config
// node, which completion lists as `params.` (the YAML here cannot say so).
bool is_config_node(const Node& value, const std::string& path) {
  return value.is_map() || value.is_list() || (value.is_null() && path == "hydra.sweeper.params");
}

std::string join_path(const std::string& base, const std::string& key) {
  if (base.empty()) return key;
  if (key.empty()) return base;
  return base + "." + key;
}

// What OmegaConf.select gives for `key` below `node` (at `node_path` in `root`): nothing (absent
// or null), a missing value, a config node, or a resolved scalar.
struct Selected {
  enum Kind { kNone, kMissing, kConfig, kScalar } kind = kNone;
  const Node* node = nullptr;  // kConfig: the node in `root`; null when it is `owned`
  Node owned;                  // a resolved interpolation, or the scalar
  std::string path;            // its path in `root`
  const Node& value() const { return node != nullptr ? *node : owned; }
};

Selected select_key(const Node& root, const Node& node, const std::string& node_path, const std::string& key) {
  Selected out;
  out.path = join_path(node_path, key);
  const Node* raw = select(node, key);
  if (raw == nullptr) return out;
  if (raw->is_interpolation()) {
    ResolveContext ctx;  // as in Hydra's completion, no hydra node: ${hydra:...} fails
    out.owned = resolve_path(root, out.path, ctx);
  } else {
    out.node = raw;
  }
  const Node& value = out.value();
  if (value.is_missing()) {
    out.kind = Selected::kMissing;
  } else if (value.is_map() || value.is_list()) {
    out.kind = Selected::kConfig;
  } else if (!value.is_null()) {
    out.kind = Selected::kScalar;
  }
  return out;
}

std::string scalar_text(const Node& value) {
  if (value.type() == NodeType::kBool) return value.as_bool() ? "true" : "false";
  return python_str(value);
}

std::vector<std::string> key_matches(const Node& root, const Node& node, const std::string& node_path,
                                     const std::string& word) {
  if (!node.is_map() && !node.is_list()) {
    throw Error(node_path, "a key below a value that is not a config", "complete the value instead");
  }
  std::vector<std::string> matches;
  if (!word.empty() && (word.back() == '.' || word.back() == '=')) {
    const Selected selected = select_key(root, node, node_path, word.substr(0, word.size() - 1));
    if (selected.kind == Selected::kMissing) {
      matches.push_back(word);
    } else if (selected.kind == Selected::kScalar) {
      matches.push_back(word + scalar_text(selected.value()));
    } else if (selected.kind == Selected::kConfig) {
      for (const std::string& match : key_matches(root, selected.value(), selected.path, "")) {
        matches.push_back(word + match);
      }
    }
    return matches;
  }
  const size_t dot = word.rfind('.');
  if (dot != std::string::npos) {
    const std::string base = word.substr(0, dot);
    const Selected selected = select_key(root, node, node_path, base);
    if (selected.kind == Selected::kScalar) {
      throw Error(selected.path, "a key below a value that is not a config", "complete the value instead");
    }
    if (selected.kind != Selected::kConfig) return matches;
    for (const std::string& match : key_matches(root, selected.value(), selected.path, word.substr(dot + 1))) {
      matches.push_back(base + "." + match);
    }
    return matches;
  }
  if (node.is_map()) {
    for (const Node::Entry& entry : node.entries()) {
      if (!starts_with(entry.key, word)) continue;
      matches.push_back(entry.key + (is_config_node(entry.value, join_path(node_path, entry.key)) ? "." : "="));
    }
    return matches;
  }
  for (size_t i = 0; i < node.items().size(); ++i) {
    const std::string index = std::to_string(i);
    if (!starts_with(index, word)) continue;
    const Selected selected = select_key(root, node, node_path, index);
    matches.push_back(index + (selected.kind == Selected::kConfig ? "." : "="));
  }
  return matches;
}

}  // namespace

std::vector<std::string> key_completions(const Node& config, const std::string& word) {
  return key_matches(config, config, "", word);
}

}  // namespace trainer::config
