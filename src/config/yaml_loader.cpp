// STUB: replaced by the YAML loader.
#include "trainer/config/yaml.h"

#include "trainer/util/error.h"

namespace trainer::config {

YamlDocument load_yaml_file(const std::string& path) {
  throw Error(path, "YAML loader not implemented yet");
}

YamlDocument load_yaml_string(std::string_view, const std::string& name) {
  throw Error(name, "YAML loader not implemented yet");
}

Node type_yaml_scalar(std::string_view text) { return Node::string(std::string(text)); }

}  // namespace trainer::config
