// A key set more than once on one command line: the last value wins, as in Hydra 1.3, and a
// warning says so. The usual cause is a shell that expanded an unquoted brace pattern
// (data.shards=/d/train-{000..002}.tar became three overrides, the last one the only shard read);
// the warning then shows the quoted pattern.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/override.h"

namespace trainer::config {

// One warning per key that plain overrides (key=value, no sweep) set more than once, in the order
// the keys first appear.
std::vector<std::string> repeated_override_warnings(const std::vector<Override>& overrides);

}  // namespace trainer::config
