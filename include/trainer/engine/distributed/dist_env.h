// Distributed data parallel without LibTorch: the options of the `trainer` section that choose
// it, and where a process learns its place in the job (torchrun's variables, SLURM's, or those
// our own launcher sets for the ranks it starts; see docs/distributed.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/util/secondary_rank.h"

namespace trainer::engine {

struct DistOptions {
  std::string strategy = "auto";  // auto | ddp | single_device
  int devices = 1;                // processes per node; -1 = auto (the CUDA devices, else 1)
  int num_nodes = 1;
  std::string backend;            // process_group_backend: "" (gloo on CPU, nccl on CUDA) | gloo | nccl
  double timeout_seconds = 1800;  // dist_timeout
  double bucket_cap_mb = 25;
  std::string master_addr;  // "" = 127.0.0.1 (one node) or the environment's
  int master_port = 0;      // 0 = a free port (one node) or the environment's

  // Throws trainer::Error naming the key for a wrong value.
  static DistOptions from_config(const config::ConfigView& root);
  // Processes per node once `devices=auto` is resolved with the number of CUDA devices.
  int processes_per_node(int cuda_devices) const;
};

// The place of this process in a distributed job.
struct DistEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  int node_rank = 0;
  std::string master_addr;
  int master_port = 0;
  bool agent_store = false;  // torchrun's agent already hosts the TCPStore: connect as a client
  std::string source;        // "torchrun", "slurm" or "trainer" (ranks started by trainer itself)
  std::string store_file;    // ranks started by trainer meet through this file (TRAINER_STORE_FILE)
};

using GetEnv = std::function<const char*(const char*)>;

// The rendezvous port of an srun job step without MASTER_PORT: in [15000, 35000), the same on
// every task of the step, different for other jobs and steps but for a 1-in-20,000 chance (a clash
// is reported as such by the rendezvous).
int slurm_port(const std::string& job_id, const std::string& step_id);

// Reads RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (torchrun, or our launcher with TRAINER_DDP_LAUNCHER)
// or SLURM_PROCID/SLURM_NTASKS (more than one task); nullopt when neither describes a job of more
// than one process. Throws trainer::Error for an incomplete or inconsistent set.
std::optional<DistEnv> detect_dist_env(const GetEnv& get_env);
std::optional<DistEnv> detect_dist_env();

// Whether this process is rank 1 or higher: util's one check (trainer/util/secondary_rank.h).
using ::trainer::is_secondary_rank;

// The first host of a SLURM node list in its compressed form ("gpu[07-09,12],cpu3" -> "gpu07").
std::string slurm_first_host(const std::string& nodelist);

}  // namespace trainer::engine
