// Loads the training engine (libtrainer_engine.so, the only part linked to LibTorch) into a job
// process on demand, so everything before a job starts runs without LibTorch's start-up cost.
#pragma once

#include <cstddef>
#include <string>

#include "trainer/engine/engine_api.h"

namespace trainer::launch {

// The engine's C entry points (engine_api.h). A program that links the engine in (CMake target
// trainer::engine) passes its own, trainer::kInProcessEngine, instead of loading the library.
struct EngineEntry {
  const char* (*describe)();
  int (*run)(const TrainerJob* job, char* error_message, size_t error_capacity);
};

class EngineLoader {
 public:
  // Finds the library beside the executable or in <prefix>/lib; throws trainer::Error with the
  // places searched and how to build it when it is missing or fails to load.
  EngineLoader();
  // Uses the entry points linked into this program; loads nothing.
  explicit EngineLoader(const EngineEntry& in_process);
  ~EngineLoader();
  EngineLoader(const EngineLoader&) = delete;
  EngineLoader& operator=(const EngineLoader&) = delete;

  std::string describe() const;
  // Runs one job; returns its exit code. `message` receives the engine's one-paragraph report.
  int run(const std::string& command, const std::string& config_yaml, const std::string& run_dir,
          const std::string& log_file, std::string& message) const;

 private:
  void* handle_ = nullptr;
  EngineEntry entry_{};
};

}  // namespace trainer::launch
