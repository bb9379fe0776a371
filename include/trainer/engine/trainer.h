// The training engine: builds data, model and optimizer from a resolved job config and runs
// `fit`, `validate` or `test` with Lightning's loop semantics, writing metrics.csv, the log and
// atomic checkpoints into the job's run directory.
#pragma once

#include <memory>
#include <string>

#include "trainer/config/node.h"

namespace trainer::engine {

class ProcessGroup;

class Trainer {
 public:
  // `job_config` is resolved (no interpolations left) and has no `hydra` node.
  Trainer(config::Node job_config, std::string run_dir, std::string config_yaml);
  ~Trainer();

  // Makes this trainer one rank of a data-parallel job (docs/distributed.md): its data shard,
  // gradients averaged over the group in buckets of `bucket_cap_mb`, metrics reduced, and only
  // rank 0 writing logs, metrics and checkpoints. Call before run(); the group outlives the trainer.
  void set_distributed(std::shared_ptr<ProcessGroup> group, double bucket_cap_mb);

  // Returns the process exit code. Throws trainer::Error for bad input.
  int run(const std::string& command);

 private:
  int run_command(const std::string& command);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainer::engine
