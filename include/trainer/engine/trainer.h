// The training engine: builds data, model and optimizer from a resolved job config and runs
// `fit`, `validate` or `test` with Lightning's loop semantics, writing metrics.csv, the log and
// atomic checkpoints into the job's run directory.
#pragma once

#include <memory>
#include <string>

#include "trainer/config/node.h"

namespace trainer::engine {

class Trainer {
 public:
  // `job_config` is resolved (no interpolations left) and has no `hydra` node.
  Trainer(config::Node job_config, std::string run_dir, std::string config_yaml);
  ~Trainer();

  // Returns the process exit code. Throws trainer::Error for bad input.
  int run(const std::string& command);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Set by SIGINT/SIGTERM: the loop finishes its step, writes a checkpoint and stops.
void install_stop_signal_handlers();

}  // namespace trainer::engine
