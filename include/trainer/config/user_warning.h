// Hydra's and OmegaConf's UserWarnings: printed as Python prints them under its default warning
// filter, each distinct text once per process (a sweep composing one config a hundred times warns
// once).
#pragma once

#include <string>

namespace trainer::config {

// Logs "UserWarning: <message>" as a warning, unless this process has shown the same text.
void warn_once(const std::string& message);

}  // namespace trainer::config
