// The engine's C entry points. The trainer binary loads libtrainer_engine.so with dlopen only
// when a job actually runs, so composing and printing configs never load LibTorch. The resolved
// job config crosses the boundary as YAML text.
#pragma once

#include <cstddef>

extern "C" {

struct TrainerJob {
  const char* command;      // "fit", "validate", "test"
  const char* config_yaml;  // the job's resolved config (without the hydra node)
  const char* run_dir;      // the job's output directory (exists)
  const char* log_file;     // the job's log file (the engine has its own copy of the logger)
};

// One line describing the LibTorch in use: version, source, devices, threads, BLAS.
const char* trainer_engine_describe();

// Runs a job. Returns the process exit code; on failure writes a one-paragraph message.
int trainer_engine_run(const TrainerJob* job, char* error_message, size_t error_capacity);

}  // extern "C"

#define TRAINER_ENGINE_LIBRARY "libtrainer_engine.so"
