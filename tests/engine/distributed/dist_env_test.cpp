// Where a process learns its place in a distributed job: torchrun's and SLURM's variables, and the
// trainer section's distributed options.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/distributed/dist_env.h"

#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using trainer::engine::detect_dist_env;
using trainer::engine::DistOptions;
using trainer::engine::slurm_first_host;

namespace {

trainer::engine::GetEnv environment(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    auto found = values.find(name);
    return found == values.end() ? nullptr : found->second.c_str();
  };
}

DistOptions options_of(const std::string& yaml) {
  trainer::config::YamlDocument document = trainer::config::load_yaml_string(yaml, "<test>");
  return DistOptions::from_config(trainer::config::ConfigView(document.root));
}

}  // namespace

CATCH_TEST_CASE("torchrun's variables give the rank, world and rendezvous") {
  auto env = detect_dist_env(environment({{"RANK", "3"},
                                          {"LOCAL_RANK", "1"},
                                          {"WORLD_SIZE", "4"},
                                          {"LOCAL_WORLD_SIZE", "2"},
                                          {"GROUP_RANK", "1"},
                                          {"MASTER_ADDR", "node7"},
                                          {"MASTER_PORT", "29500"},
                                          {"TORCHELASTIC_RUN_ID", "x"},
                                          {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  CATCH_REQUIRE(env.has_value());
  CATCH_CHECK(env->rank == 3);
  CATCH_CHECK(env->local_rank == 1);
  CATCH_CHECK(env->world_size == 4);
  CATCH_CHECK(env->local_world_size == 2);
  CATCH_CHECK(env->node_rank == 1);
  CATCH_CHECK(env->master_addr == "node7");
  CATCH_CHECK(env->master_port == 29500);
  CATCH_CHECK(env->agent_store);
  CATCH_CHECK(env->source == "torchrun");
}

CATCH_TEST_CASE("no distributed job: nothing set, or a world of one") {
  CATCH_CHECK(!detect_dist_env(environment({})).has_value());
  CATCH_CHECK(!detect_dist_env(environment({{"RANK", "0"}, {"WORLD_SIZE", "1"}})).has_value());
  CATCH_CHECK(!detect_dist_env(environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}})).has_value());
}

CATCH_TEST_CASE("an incomplete or inconsistent torchrun environment is an error naming the variable") {
  CATCH_CHECK_THROWS_WITH(detect_dist_env(environment({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}})),
                          Catch::Contains("MASTER_PORT"));
  CATCH_CHECK_THROWS_WITH(detect_dist_env(environment({{"RANK", "2"}, {"WORLD_SIZE", "2"}})),
                          Catch::Contains("outside WORLD_SIZE=2"));
  CATCH_CHECK_THROWS_WITH(detect_dist_env(environment({{"RANK", "x"}, {"WORLD_SIZE", "2"}})),
                          Catch::Contains("'x' is not a non-negative integer"));
}

CATCH_TEST_CASE("SLURM's variables: rank, world, node and the first host of the node list") {
  auto env = detect_dist_env(environment({{"SLURM_PROCID", "5"},
                                          {"SLURM_NTASKS", "8"},
                                          {"SLURM_LOCALID", "1"},
                                          {"SLURM_NODEID", "2"},
                                          {"SLURM_NNODES", "4"},
                                          {"SLURM_NODELIST", "gpu[07-09,12]"},
                                          {"SLURM_JOB_ID", "1234567"}}));
  CATCH_REQUIRE(env.has_value());
  CATCH_CHECK(env->rank == 5);
  CATCH_CHECK(env->world_size == 8);
  CATCH_CHECK(env->local_rank == 1);
  CATCH_CHECK(env->node_rank == 2);
  CATCH_CHECK(env->local_world_size == 2);
  CATCH_CHECK(env->master_addr == "gpu07");
  CATCH_CHECK(env->master_port == trainer::engine::slurm_port("1234567", "0"));
  CATCH_CHECK(env->source == "slurm");
}

CATCH_TEST_CASE("srun ports: one per job step, in range, apart where Lightning's rule made them meet") {
  using trainer::engine::slurm_port;
  CATCH_CHECK(slurm_port("1234", "0") == slurm_port("1234", "0"));
  CATCH_CHECK(slurm_port("1234", "0") != slurm_port("11234", "0"));  // 15000 + 1234 for both under Lightning's rule
  CATCH_CHECK(slurm_port("1234", "0") != slurm_port("1234", "1"));   // two srun steps of one allocation
  for (int job = 0; job < 1000; ++job) {
    const int port = slurm_port(std::to_string(job * 7919), "0");
    CATCH_CHECK(port >= 15000);
    CATCH_CHECK(port < 35000);
  }
}

CATCH_TEST_CASE("the first host of a compressed SLURM node list") {
  CATCH_CHECK(slurm_first_host("node1") == "node1");
  CATCH_CHECK(slurm_first_host("node1,node2") == "node1");
  CATCH_CHECK(slurm_first_host("gnode[10,20]") == "gnode10");
  CATCH_CHECK(slurm_first_host("rack[3-4]-n[1-2],other") == "rack3-n1");
  CATCH_CHECK(slurm_first_host("a[001-004]b") == "a001b");
}

CATCH_TEST_CASE("distributed options from the trainer section") {
  DistOptions defaults = options_of("trainer: {devices: 1}\n");
  CATCH_CHECK(defaults.strategy == "auto");
  CATCH_CHECK(defaults.timeout_seconds == 1800);
  CATCH_CHECK(defaults.bucket_cap_mb == 25);
  CATCH_CHECK(defaults.processes_per_node(0) == 1);

  DistOptions o = options_of(
      "trainer: {devices: 4, strategy: ddp, process_group_backend: gloo, dist_timeout: '00:00:01:30', "
      "bucket_cap_mb: 0.5, master_port: 29400}\n");
  CATCH_CHECK(o.processes_per_node(0) == 4);
  CATCH_CHECK(o.backend == "gloo");
  CATCH_CHECK(o.timeout_seconds == 90);
  CATCH_CHECK(o.bucket_cap_mb == 0.5);
  CATCH_CHECK(o.master_port == 29400);
  CATCH_CHECK(options_of("trainer: {dist_timeout: 20}\n").timeout_seconds == 20);
  CATCH_CHECK(options_of("trainer: {devices: auto}\n").processes_per_node(3) == 3);
  CATCH_CHECK(options_of("trainer: {devices: auto}\n").processes_per_node(0) == 1);
  CATCH_CHECK(options_of("trainer: {devices: 4, strategy: single_device}\n").processes_per_node(0) == 1);

  CATCH_CHECK_THROWS_WITH(options_of("trainer: {process_group_backend: mpi}\n"),
                          Catch::Contains("trainer.process_group_backend") && Catch::Contains("gloo"));
  CATCH_CHECK_THROWS_WITH(options_of("trainer: {devices: 0}\n"), Catch::Contains("trainer.devices"));
  CATCH_CHECK_NOTHROW(options_of("trainer: {devices: 2, sync_batchnorm: true}\n"));  // batch_norm_sync.h
  CATCH_CHECK_THROWS_WITH(options_of("trainer: {dist_timeout: soon}\n"), Catch::Contains("trainer.dist_timeout"));
  CATCH_CHECK_THROWS_WITH(options_of("trainer: {strategy: fsdp}\n"),
                          Catch::Contains("fsdp is not one of auto, ddp, single_device or pipeline"));
}
