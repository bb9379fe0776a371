// Loads the training engine (libtrainer_engine.so, the only part linked to LibTorch) into a job
// process on demand, so everything before a job starts runs without LibTorch's start-up cost.
#pragma once

#include <string>

namespace trainer::launch {

class EngineLoader {
 public:
  // Finds the library beside the executable or in <prefix>/lib; throws trainer::Error with the
  // places searched and how to build it when it is missing or fails to load.
  EngineLoader();
  ~EngineLoader();
  EngineLoader(const EngineLoader&) = delete;
  EngineLoader& operator=(const EngineLoader&) = delete;

  std::string describe() const;
  // Runs one job; returns its exit code. `message` receives the engine's one-paragraph report.
  int run(const std::string& command, const std::string& config_yaml, const std::string& run_dir,
          const std::string& log_file, std::string& message) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace trainer::launch
