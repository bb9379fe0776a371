// Internal to the YAML loader: a fast parser for the plain block YAML that nearly every config
// file is written in (nested `key: value` maps, `- item` lists, one-line scalars, quoted strings
// without escapes, `[a, b]` lists of plain scalars, `{}`). yaml-cpp's scanner costs about 5 us a
// line; this costs well under 1 us. Anything outside that subset, and anything that might be an
// error, is declined so that the full yaml-cpp path handles it with the same results.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "trainer/config/node.h"
#include "trainer/config/yaml.h"

namespace trainer::config::yaml_detail {

// True when `text` was in the subset and `root` now holds its top-level map (with origins in
// `path`); false to fall back to the full parser (root is then unspecified).
bool parse_simple_block_yaml(std::string_view text, const std::shared_ptr<const std::string>& path, Node& root);

// load_yaml_string without the fast path: always yaml-cpp. For tests that compare the two.
YamlDocument load_yaml_string_full(std::string_view text, const std::string& name);

}  // namespace trainer::config::yaml_detail
