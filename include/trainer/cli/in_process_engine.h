// The engine linked into the calling program (CMake target trainer::engine) rather than loaded
// from libtrainer_engine.so: jobs then see the models, datasets, callbacks and loggers the program
// registers itself. Pass &trainer::kInProcessEngine to trainer::run_cli.
#pragma once

#include "trainer/engine/engine_c_abi.h"
#include "trainer/launch/engine_loader.h"

namespace trainer {

inline const launch::EngineEntry kInProcessEngine{&trainer_engine_abi_version, &trainer_engine_describe,
                                                  &trainer_engine_run_job, &trainer_engine_registered};

}  // namespace trainer
