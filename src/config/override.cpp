// STUB: replaced by the override parser.
#include "trainer/config/override.h"

#include "trainer/util/error.h"

namespace trainer::config {

const char* Override::prefix() const {
  switch (kind) {
    case OverrideKind::kAdd: return "+";
    case OverrideKind::kForceAdd: return "++";
    case OverrideKind::kDelete: return "~";
    case OverrideKind::kChange: return "";
  }
  return "";
}

std::string Override::key_with_package() const {
  return package ? key + "@" + *package : key;
}

Override parse_override(std::string_view text) {
  throw Error(std::string(text), "override parser not implemented yet");
}

std::vector<std::string> sweep_value_texts(const Override& override,
                                           const std::vector<std::string>*, std::mt19937_64&) {
  throw Error(override.text, "sweeps not implemented yet");
}

}  // namespace trainer::config
