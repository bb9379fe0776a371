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
  Node root;                           // always a map ({} for an empty file)
  std::optional<std::string> package;  // from a leading `# @package x.y` comment line
};

// Throws trainer::Error with "path:line" and the parser's message on syntax errors, or when the
// top level is not a mapping. Also rejects what OmegaConf rejects: duplicate string keys, null
// keys, unknown tags and `<<`/`=` as values. Ints have any size, as in Python (beyond 64 bits a
// node keeps the decimal text: 0x1_0000_0000_0000_0000 loads as 18446744073709551616). Every
// node's origin is name:line (a map value gets its key's line); one shared path string per file.
// Keys written as numbers or booleans keep Entry::key_type, with the key text as Python's str()
// prints it ("16" for 0x10, "True", "1.5"). `???`, quoted or not, loads as Node::missing().
// Plain block YAML is parsed by a fast path; anything else goes through yaml-cpp.
YamlDocument load_yaml_file(const std::string& path);
YamlDocument load_yaml_string(std::string_view text, const std::string& name);

// Types one plain (unquoted) YAML scalar as OmegaConf's loader does: "" and `~` -> null,
// `???` -> missing, numbers (ints of any size), YAML 1.1 booleans; anything else (including `<<`
// and `=`) -> string.
Node type_yaml_scalar(std::string_view text);

// Byte for byte what OmegaConf.to_yaml prints for the same tree (keys in order, block style,
// PyYAML's quoting and folding at 80 columns). Entry::key_type picks how a key prints: kInt
// prints the key text, kBool "true"/"false" (from "True"/"true"/"False"/"false"), kFloat the
// PyYAML float form, kNull "null".
std::string to_yaml(const Node& node);

}  // namespace trainer::config
