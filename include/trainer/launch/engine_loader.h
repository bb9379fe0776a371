// Loads the training engine (libtrainer_engine.so, the only part linked to LibTorch) into a job
// process on demand, so everything before a job starts runs without LibTorch's start-up cost.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trainer/engine/engine_c_abi.h"
#include "trainer/launch/engine_result.h"

namespace trainer::launch {

// The engine's C entry points (engine_c_abi.h). A program that links the engine in (CMake target
// trainer::engine) passes its own, trainer::kInProcessEngine, instead of loading the library.
struct EngineEntry {
  int (*abi_version)();
  const char* (*describe)();
  int (*run_job)(const TrainerJob* job, TrainerJobResult* result);
  const char* (*registered)(const char* kind);
};

class EngineLoader {
 public:
  // Finds the library beside the executable or in <prefix>/lib; throws trainer::Error with the
  // places searched and how to build it when it is missing or fails to load, or when its
  // TRAINER_ENGINE_ABI_VERSION is not this program's (a binary and an engine from different builds).
  EngineLoader();
  // Uses the entry points linked into this program; loads nothing (the same version check).
  explicit EngineLoader(const EngineEntry& in_process);
  ~EngineLoader();
  EngineLoader(const EngineLoader&) = delete;
  EngineLoader& operator=(const EngineLoader&) = delete;

  std::string describe() const;
  // The names registered for `kind` ("model", "dataset", "logger", "callback"), sorted.
  std::vector<std::string> registered(const std::string& kind) const;
  // Runs one job; returns how it ended (engine_result.h). Throws only when the engine refused the
  // call itself.
  EngineResult run(const std::string& command, const std::string& config_yaml, const std::string& run_dir,
                   const std::string& log_file) const;

 private:
  void* handle_ = nullptr;
  EngineEntry entry_{};
};

}  // namespace trainer::launch
