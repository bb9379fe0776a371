// The names a job's config picks from the engine's registries: `model.name`, `data.name`, and the
// entries of `logger` and `callbacks`. The engine would refuse an unknown one only once the job's
// directory, log and first loggers exist (in a sweep, in every job after its start); the launcher
// refuses it before anything is written, with the names there are. The names trainer ships are
// known from the option declarations; a program's own (TRAINER_REGISTER_*) are asked of its
// engine, which is loaded only then. Torch-free.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::launch {

// The names registered for a kind ("model", "dataset", "logger", "callback"), sorted.
using RegisteredNames = std::function<std::vector<std::string>(const std::string& kind)>;

// Throws trainer::Error for a name that is neither shipped nor in `registered(kind)`, which is
// called only for such a name. `resolved_job`: the job's resolved config (no hydra node).
void check_plugin_names(const config::Node& resolved_job, const std::string& command,
                        const RegisteredNames& registered);

// check_plugin_names with the names of the engine this process runs its jobs with.
void check_plugin_names(const config::Node& resolved_job, const std::string& command);

}  // namespace trainer::launch
