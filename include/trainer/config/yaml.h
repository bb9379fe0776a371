// YAML in and out. Loading types plain scalars the way OmegaConf's loader does (YAML 1.1: yes/on
// are bools, 0x10 and 010 are ints, 12:30 is sexagesimal, plus `1e-4`-style floats) and records
// file:line on every node. Writing produces what OmegaConf.to_yaml (PyYAML, block style, keys in
// order) prints, quoting any string a YAML 1.1 reader would read back as another type.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "trainer/config/node.h"

namespace trainer::config {

struct YamlDocument {
  Node root;                            // always a map ({} for an empty file)
  std::optional<std::string> package;   // from a leading `# @package x.y` comment line
};

// Throws trainer::Error with "path:line" and the parser's message on syntax errors, or when the
// top level is not a mapping.
YamlDocument load_yaml_file(const std::string& path);
YamlDocument load_yaml_string(std::string_view text, const std::string& name);

// Types one plain (unquoted) YAML scalar as OmegaConf's loader does.
Node type_yaml_scalar(std::string_view text);

std::string to_yaml(const Node& node);

}  // namespace trainer::config
