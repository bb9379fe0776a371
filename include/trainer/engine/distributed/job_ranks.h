// Runs a fit/validate/test job as one process or as a data-parallel group: decides from the
// config (trainer.devices, num_nodes, strategy) and the environment (torchrun, SLURM) whether
// this process is one rank of several, starts the other local ranks when nobody else did
// (local_ranks.h), makes the process group and hands it to the Trainer. When a rank fails, the
// job's error names it.
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::engine {

// Returns the exit code; throws trainer::Error.
int run_job_ranks(config::Node job_config, const std::string& run_dir, const std::string& config_yaml,
                  const std::string& command);

}  // namespace trainer::engine
