// Internal to the YAML loader and writer: the YAML 1.1 implicit resolver that PyYAML applies to
// plain scalars (OmegaConf's loader adds `1e-4`-style floats and drops timestamps; the dumper
// checks strings against the unmodified PyYAML resolver) and PyYAML's scalar constructors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trainer/config/node.h"

namespace trainer::config::yaml_detail {

// YAML's c-indicator characters (`-?:,[]{}#&*!|>'"%@` and the backquote): a plain scalar
// starting with one is not read as plain (`-`, `?` and `:` only when followed by a space).
constexpr bool is_indicator(char32_t c) {
  switch (c) {
    case '-':
    case '?':
    case ':':
    case ',':
    case '[':
    case ']':
    case '{':
    case '}':
    case '#':
    case '&':
    case '*':
    case '!':
    case '|':
    case '>':
    case '\'':
    case '"':
    case '%':
    case '@':
    case '`':
      return true;
    default:
      return false;
  }
}

enum class PlainKind { kString, kNull, kBool, kInt, kFloat, kMerge, kValue, kTimestamp, kYaml };

struct ResolverRules {
  bool omegaconf_floats = true;  // OmegaConf's extra float resolver (`1e3`, `1.5e3`, `1_0.5`)
  bool timestamps = false;       // PyYAML's timestamp resolver (OmegaConf's loader removes it)
};

// Which tag PyYAML's resolver gives a plain scalar with this text.
PlainKind resolve_plain(std::string_view text, ResolverRules rules);

// PyYAML's constructors (tag:yaml.org,2002:int/float/bool). They accept what the resolver
// accepts and also quoted text under an explicit tag (`!!int '5'`). False when the text has no
// value of that type or, for construct_int, the int does not fit in 64 bits: then
// construct_big_int gives it as Python would (any size; a big int node keeps its decimal text).
bool construct_int(std::string_view text, int64_t& value);
bool construct_big_int(std::string_view text, Node& value);
bool construct_float(std::string_view text, double& value);
bool construct_bool(std::string_view text, bool& value);

// PyYAML's representation of a float: repr, lower case, `.0` put before a bare exponent
// ("1.0e-05"), `.inf`, `-.inf`, `.nan`.
std::string yaml_float_text(double value);

}  // namespace trainer::config::yaml_detail
