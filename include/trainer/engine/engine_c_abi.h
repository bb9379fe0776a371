// The engine's C entry points. The trainer binary loads libtrainer_engine.so with dlopen only
// when a job actually runs, so composing and printing configs never load LibTorch. The resolved
// job config crosses the boundary as YAML text; how the job ended comes back as the fields of a
// TrainerJobResult (nothing is parsed out of a message), versioned so that a launcher and an
// engine library built from different sources refuse each other with a clear error.
#pragma once

#include <cstddef>

// Raised whenever TrainerJob, TrainerJobResult, the meaning of their fields or the entry points
// change (3: trainer_engine_registered).
#define TRAINER_ENGINE_ABI_VERSION 3

extern "C" {

struct TrainerJob {
  const char* command;      // "fit", "validate", "test", "predict", "export", "tune_batch_size", "data_pack"
  const char* config_yaml;  // the job's resolved config (without the hydra node)
  const char* run_dir;      // the job's output directory (exists)
  const char* log_file;     // the job's log file (the engine has its own copy of the logger)
};

// How a job ended (TrainerJobResult::outcome).
enum TrainerJobOutcome {
  TRAINER_JOB_FINISHED = 0,     // ran to its end; exit_code 0
  TRAINER_JOB_FAILED = 1,       // an error ended it; message says what and how to fix it
  TRAINER_JOB_INTERRUPTED = 2,  // SIGINT/SIGTERM (stop_signal): the step was finished and last.ckpt written
                                // (fit), or the batch-size search started no new trial
};

struct TrainerJobResult {
  // Filled by the caller before the call: sizeof(TrainerJobResult) and TRAINER_ENGINE_ABI_VERSION
  // as the caller was compiled. The engine writes nothing but exit_code into a result whose size
  // or version differs from its own.
  size_t struct_size;
  int abi_version;
  // Filled by the engine.
  int exit_code;               // the process exit code of a single run (0, or 1 for failed/interrupted)
  int outcome;                 // a TrainerJobOutcome
  int stop_signal;             // the signal the job stopped for (SIGINT, SIGTERM); 0 unless interrupted
  long long tuned_batch_size;  // the batch the batch-size search found (or a resumed fit reused); 0: no search
  char message[4096];          // one paragraph when failed or interrupted, NUL-terminated; else empty
};

// TRAINER_ENGINE_ABI_VERSION as the engine library was compiled.
int trainer_engine_abi_version();

// One line describing the LibTorch in use: version, source, devices, threads, BLAS.
const char* trainer_engine_describe();

// The names registered for `kind` ("model", "dataset", "logger", "callback"), built-ins and the
// program's own, sorted and comma-separated ("" for another kind): the launcher checks the names a
// job's config picks before anything is written. Valid until the next call from this thread.
const char* trainer_engine_registered(const char* kind);

// Runs a job and fills `result`. Returns result->exit_code (2 when job or result is unusable).
int trainer_engine_run_job(const TrainerJob* job, TrainerJobResult* result);

}  // extern "C"

#define TRAINER_ENGINE_LIBRARY "libtrainer_engine.so"
