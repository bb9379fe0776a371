// Where two configs differ, key by key: what an error about a checkpoint that does not fit the
// model shows ("model.hidden_sizes: [256, 128] in the checkpoint, [64] now"), and what an
// evaluation reports when it takes settings from the checkpoint's config.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config {

struct ValueDifference {
  std::string key;     // dotted path, e.g. "model.hidden_sizes"
  std::string before;  // Python's str() of the value, or "(absent)"
  std::string after;
};

// The leaves (scalars, and lists as whole values) whose values differ between `before` and
// `after`, in `before`'s key order with keys only in `after` last. Origins are ignored.
std::vector<ValueDifference> config_differences(const Node& before, const Node& after);

}  // namespace trainer::config
