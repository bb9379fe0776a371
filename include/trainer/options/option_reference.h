// What the declarations say, for people: the config reference (docs/options.md, checked
// against this by a test) and the options section of `trainer --help`.
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::options {

// docs/options.md: every section, a table of its keys (type, default, what it accepts, meaning).
std::string reference_markdown();

// The options of the sections `job_config` uses (its model, data, optimizer and scheduler
// variants), one line each: "  trainer.max_epochs = 10  (int at least 0 or -1): epochs to train".
std::string help_text(const config::Node& job_config);

}  // namespace trainer::options
