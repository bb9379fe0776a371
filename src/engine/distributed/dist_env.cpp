#include "trainer/engine/distributed/dist_env.h"

#include <cstdlib>
#include <string>

#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/secondary_rank.h"

namespace trainer::engine {
namespace {

std::optional<std::string> value_of(const GetEnv& get_env, const char* name) {
  const char* text = get_env(name);
  if (text == nullptr || text[0] == '\0') return std::nullopt;
  return std::string(text);
}

int int_of(const GetEnv& get_env, const char* name, std::optional<int> fallback = std::nullopt) {
  std::optional<std::string> text = value_of(get_env, name);
  if (!text) {
    if (fallback) return *fallback;
    throw Error("environment variable " + std::string(name), "not set, but the other distributed variables are",
                "Set all of RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun does), or none of them.");
  }
  try {
    size_t used = 0;
    const int value = std::stoi(*text, &used);
    if (used == text->size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  throw Error("environment variable " + std::string(name), "'" + *text + "' is not a non-negative integer",
              "Fix the launcher's environment.");
}

}  // namespace

DistOptions DistOptions::from_config(const config::ConfigView& root) {
  DistOptions o;
  if (!root.has("trainer")) return o;
  const options::OptionReader t(root.sub("trainer"));
  o.strategy = t.choice("strategy");
  o.devices = t.word("devices") == "auto" ? -1 : t.get<int>("devices");
  o.num_nodes = t.get<int>("num_nodes");
  o.backend = t.choice("process_group_backend");
  if (o.backend == "auto") o.backend.clear();
  o.timeout_seconds = t.seconds("dist_timeout").value_or(o.timeout_seconds);
  o.bucket_cap_mb = t.get<double>("bucket_cap_mb");
  o.master_addr = t.get<std::optional<std::string>>("master_addr").value_or("");
  o.master_port = t.get<std::optional<int>>("master_port").value_or(0);
  return o;
}

int DistOptions::processes_per_node(int cuda_devices) const {
  if (strategy == "single_device") return 1;
  if (devices == -1) return cuda_devices > 0 ? cuda_devices : 1;
  return devices;
}

std::string slurm_first_host(const std::string& nodelist) {
  // The first entry ends at a comma outside brackets.
  size_t end = 0;
  int depth = 0;
  for (; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  // Each bracket group stands for its first element: prefix[07-09,12]suffix -> prefix07suffix.
  std::string host;
  for (size_t i = 0; i < end; ++i) {
    if (nodelist[i] != '[') {
      host += nodelist[i];
      continue;
    }
    const size_t close = std::min(end, nodelist.find(']', i));
    const std::string group = nodelist.substr(i + 1, close - i - 1);
    host += group.substr(0, group.find_first_of(",-"));
    i = close;
  }
  return host;
}

int slurm_port(const std::string& job_id, const std::string& step_id) {
  // Lightning takes 15000 + the job id's last four digits: jobs 1234 and 11234 on one node, or two
  // srun steps of one job, then meet on one port. Every task of a step computes the same port from
  // the whole job id and the step id, spread over 20,000 ports (FNV-1a).
  uint64_t hash = 1469598103934665603ull;
  for (const char c : job_id + "." + step_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return 15000 + static_cast<int>(hash % 20000);
}

std::optional<DistEnv> detect_dist_env(const GetEnv& get_env) {
  if (value_of(get_env, "RANK") || value_of(get_env, "WORLD_SIZE")) {
    DistEnv env;
    env.world_size = int_of(get_env, "WORLD_SIZE");
    env.rank = int_of(get_env, "RANK");
    env.local_rank = int_of(get_env, "LOCAL_RANK", env.rank);
    env.local_world_size = int_of(get_env, "LOCAL_WORLD_SIZE", env.world_size);
    env.node_rank = int_of(get_env, "GROUP_RANK", 0);
    if (env.world_size < 1 || env.rank >= env.world_size) {
      throw Error("environment variable RANK",
                  "rank " + std::to_string(env.rank) + " is outside WORLD_SIZE=" + std::to_string(env.world_size),
                  "Fix the launcher's environment.");
    }
    if (env.world_size == 1) return std::nullopt;
    env.master_addr = value_of(get_env, "MASTER_ADDR").value_or("");
    if (env.master_addr.empty()) int_of(get_env, "MASTER_ADDR");  // throws: not set
    env.master_port = int_of(get_env, "MASTER_PORT");
    const std::string agent = value_of(get_env, "TORCHELASTIC_USE_AGENT_STORE").value_or("");
    env.agent_store = agent == "True" || agent == "true" || agent == "1";
    env.source = value_of(get_env, "TRAINER_DDP_LAUNCHER")  ? "trainer"
                 : value_of(get_env, "TORCHELASTIC_RUN_ID") ? "torchrun"
                                                            : "environment";
    if (env.source == "trainer") env.store_file = value_of(get_env, "TRAINER_STORE_FILE").value_or("");
    return env;
  }
  if (value_of(get_env, "SLURM_PROCID") && value_of(get_env, "SLURM_NTASKS")) {
    DistEnv env;
    env.world_size = int_of(get_env, "SLURM_NTASKS");
    if (env.world_size <= 1) return std::nullopt;
    env.rank = int_of(get_env, "SLURM_PROCID");
    env.local_rank = int_of(get_env, "SLURM_LOCALID", 0);
    env.node_rank = int_of(get_env, "SLURM_NODEID", 0);
    const int nodes = int_of(get_env, "SLURM_NNODES", 1);
    env.local_world_size = std::max(1, env.world_size / std::max(1, nodes));
    std::string nodelist =
        value_of(get_env, "SLURM_STEP_NODELIST").value_or(value_of(get_env, "SLURM_NODELIST").value_or(""));
    env.master_addr = value_of(get_env, "MASTER_ADDR").value_or(slurm_first_host(nodelist));
    if (env.master_addr.empty()) env.master_addr = "127.0.0.1";
    if (value_of(get_env, "MASTER_PORT")) {
      env.master_port = int_of(get_env, "MASTER_PORT");
    } else {
      env.master_port =
          slurm_port(value_of(get_env, "SLURM_JOB_ID").value_or("0"), value_of(get_env, "SLURM_STEP_ID").value_or("0"));
    }
    env.source = "slurm";
    return env;
  }
  return std::nullopt;
}

std::optional<DistEnv> detect_dist_env() {
  return detect_dist_env([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

}  // namespace trainer::engine
