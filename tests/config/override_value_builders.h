// Test support for the override grammar's internals: parsed values built by hand (what the parser
// makes of 'a', [1,2] or {a: 1}), for tests that call the value and function code directly.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../../src/config/override_value.h"

namespace trainer::config::override_detail::testing {

inline Value quoted(std::string text, char quote = '\'') {
  Value v = Value::str(std::move(text));
  v.kind = Value::kQuoted;
  v.quote = quote;
  return v;
}

inline Value list_of(std::vector<Value> items) {
  Value v;
  v.kind = Value::kList;
  v.items = std::move(items);
  return v;
}

// Keys and values interleaved, as the parser keeps a dict.
inline Value dict_of(std::vector<Value> keys_and_values) {
  Value v;
  v.kind = Value::kDict;
  v.items = std::move(keys_and_values);
  return v;
}

}  // namespace trainer::config::override_detail::testing
