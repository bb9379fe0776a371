#include "trainer/engine/distributed/job_ranks.h"

#include <sched.h>
#include <signal.h>

#include <cstdlib>
#include <memory>
#include <optional>

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include "trainer/config/config_view.h"
#include "trainer/config/python_str.h"
#include "trainer/engine/distributed/dist_env.h"
#include "trainer/engine/distributed/local_ranks.h"
#include "trainer/engine/distributed/pipeline_stage.h"
#include "trainer/engine/distributed/process_group.h"
#include "trainer/engine/posix_files.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/engine/trainer.h"
#include "trainer/engine/tuner/batch_size_search.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/usable_cores.h"

namespace trainer::engine {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool sets_key(const std::string& arg, const std::string& key) {
  return starts_with(arg, key + "=") || starts_with(arg, "+" + key + "=") || starts_with(arg, "++" + key + "=");
}

// The command line for ranks 1..N-1: this process's own, with the run directory fixed to rank 0's
// (a sweep's job process names its job, whose record fixes the directory already) and, for an
// evaluation, the checkpoint rank 0 resolved (ckpt_path=best|last named it in the training run).
std::vector<std::string> rank_command_line(const std::string& run_dir, const std::string& checkpoint) {
  std::vector<std::string> args;
  bool sweep_job = false;
  for (const std::string& arg : LocalRanks::own_command_line()) {
    if (arg == "run-job") sweep_job = true;
    if (sets_key(arg, "hydra.run.dir") || (!checkpoint.empty() && sets_key(arg, "ckpt_path"))) continue;
    args.push_back(arg);
  }
  if (!sweep_job) args.push_back("hydra.run.dir=" + run_dir);
  if (!checkpoint.empty()) args.push_back("ckpt_path='" + checkpoint + "'");
  return args;
}

// The job's error for a rank that ended with an error: how it ended, and the end of what it wrote
// (quoted from its stderr, which the job process relays).
// A pipeline's rank is named with its stage too ("rank 1 (pipeline stage 1, pid 7)").
Error rank_failed(LocalRanks& local, const RankFailure& failure, int world_size, const std::string& when,
                  const std::string& fix, int pipeline_stages) {
  std::string what = failure.what;
  const std::string pid = "rank " + std::to_string(failure.rank) + " (pid ";
  if (pipeline_stages > 1 && what.rfind(pid, 0) == 0) {
    what = "rank " + std::to_string(failure.rank) + " (pipeline stage " +
           std::to_string(failure.rank % pipeline_stages) + ", pid " + what.substr(pid.size());
  }
  const std::string problem = what + when + (failure.why.empty() ? "" : ": " + failure.why);
  return Error("distributed job of " + std::to_string(world_size) + " ranks", problem,
               fix + "\n" + local.last_output(failure.rank));
}

// What to do after a failed job: resume from the last checkpoint when one exists (where
// ckpt_path=last looks, trainer_options.cpp), or start again when the job wrote none yet.
std::string checkpoint_dir(const config::ConfigView& view, const std::string& run_dir) {
  return view.get_or<std::string>("callbacks.model_checkpoint.dirpath",
                                  view.get_or<std::string>("trainer.default_root_dir", run_dir) + "/checkpoints");
}

std::string restart_advice(const std::string& dir, const std::string& run_dir) {
  if (posix::exists(dir + "/last.ckpt")) {
    return "Resume with the same command plus ckpt_path=last and hydra.run.dir=" + run_dir + ".";
  }
  return "No checkpoint was written yet (none in " + dir + "): once the cause is fixed, run the same command again.";
}

// One process, no launcher: the keys that say how a job's processes work together would change
// nothing, without a word (trainer.master_port under ranks trainer starts is said below).
void warn_about_process_group_keys(const config::Node& job) {
  static const std::vector<std::pair<std::string, std::string>> defaults = {
      {"process_group_backend", "None"}, {"dist_timeout", "00:00:30:00"}, {"hang_timeout", "00:00:05:00"},
      {"bucket_cap_mb", "25"},           {"master_addr", "None"},         {"master_port", "None"}};
  std::string listed;
  int count = 0;
  for (const auto& [name, fallback] : defaults) {
    const config::Node* node = config::select(job, "trainer." + name);
    if (node == nullptr || config::python_str(*node) == fallback) continue;
    listed += std::string(count++ == 0 ? "" : ", ") + "trainer." + name + "=" + config::python_str(*node);
  }
  if (count == 0) return;
  log::warning(listed + (count == 1 ? " sets" : " set") +
               " how a job's processes work together, but this job runs one process (trainer.devices=1, "
               "trainer.num_nodes=1, a world of one: no srun or torchrun started more), so " +
               (count == 1 ? "it changes" : "they change") + " nothing; trainer.devices=N starts N processes");
}

// Who started the ranks, as a sentence names it.
std::string launcher_name(const DistEnv& env) {
  if (env.source == "slurm") return "srun";
  if (env.source == "torchrun") return "torchrun";
  return "the environment";
}

// A collective failed: the rank that ended first is the cause (rank 0's own error is a consequence).
bool is_collective_failure(const Error& error) { return starts_with(error.where(), "distributed"); }

// trainer.master_addr and trainer.master_port under a launcher. srun has no rendezvous of its own
// (rank 0 serves the store: the step's first host, a port drawn from the job ids, or MASTER_ADDR /
// MASTER_PORT exported by hand): the keys replace them, alike on every rank. torchrun's variables
// say where its store is: a key that differs would never meet it, so it is refused.
void apply_rendezvous_keys(DistEnv& env, const DistOptions& dist) {
  if (env.source == "trainer") return;
  if (env.source == "slurm") {
    if (!dist.master_addr.empty()) env.master_addr = dist.master_addr;
    if (dist.master_port != 0) env.master_port = dist.master_port;
    return;
  }
  const std::string launcher = launcher_name(env);
  if (dist.master_port != 0 && dist.master_port != env.master_port) {
    throw Error("trainer.master_port",
                "is " + std::to_string(dist.master_port) + ", but " + launcher + " set MASTER_PORT=" +
                    std::to_string(env.master_port) + ", where the job's store is: the ranks would never meet there",
                "Leave trainer.master_port null under torchrun, or start torchrun with --master-port " +
                    std::to_string(dist.master_port) + ".");
  }
  if (!dist.master_addr.empty() && dist.master_addr != env.master_addr) {
    throw Error("trainer.master_addr",
                "is " + dist.master_addr + ", but " + launcher + " set MASTER_ADDR=" + env.master_addr +
                    ", where the job's store is: the ranks would never meet there",
                "Leave trainer.master_addr null under torchrun, or start torchrun with --master-addr " +
                    dist.master_addr + ".");
  }
}

}  // namespace

int run_job_ranks(config::Node job_config, const std::string& run_dir, const std::string& config_yaml,
                  const std::string& command) {
  const config::ConfigView view(job_config);
  const DistOptions dist = DistOptions::from_config(view);
  const std::string checkpoints = checkpoint_dir(view, run_dir);  // read before job_config moves
  std::optional<DistEnv> env = detect_dist_env();
  if (env) apply_rendezvous_keys(*env, dist);
  const std::string accelerator =
      view.has("trainer") ? options::OptionReader(view.sub("trainer")).choice("accelerator") : "auto";
  const bool cuda =
      accelerator == "cuda" || accelerator == "gpu" || (accelerator == "auto" && torch::cuda::is_available());
  const int cuda_devices = cuda ? static_cast<int>(torch::cuda::device_count()) : 0;
  const int per_node = dist.processes_per_node(cuda_devices);

  // Lightning refuses the batch-size search under DDP: each rank would search on its own shard
  // and the ranks could settle on different batches.
  const bool searches =
      command == "tune_batch_size" || (command == "fit" && TunerOptions::from_config(view).auto_scale);
  const int world_size = env ? env->world_size : (dist.strategy == "single_device" ? 1 : per_node * dist.num_nodes);
  // Under torchrun or srun the launcher started the ranks: trainer.devices, when given a number
  // above 1 (1 is the shipped default), must say the same, as Lightning's SLURM and torchelastic
  // environments check; else the job would run on fewer or more processes than asked, silently.
  if (env && env->source != "trainer" && dist.strategy != "single_device" && dist.devices > 1 &&
      dist.devices != env->local_world_size) {
    const std::string launcher = launcher_name(*env);
    throw Error("trainer.devices",
                "is " + std::to_string(dist.devices) + ", but " + launcher + " started " +
                    std::to_string(env->local_world_size) + " process(es) on this node (world size " +
                    std::to_string(env->world_size) +
                    "): under a launcher the launcher starts the ranks, one per device",
                "Set trainer.devices=" + std::to_string(env->local_world_size) + " (or leave it at 1), or start " +
                    std::to_string(dist.devices) + " tasks per node (" +
                    (env->source == "slurm" ? std::string("srun --ntasks-per-node ")
                                            : std::string("torchrun --nproc-per-node ")) +
                    std::to_string(dist.devices) + ").");
  }
  if (searches && world_size > 1 && pipeline_strategy(view)) {
    throw Error(command == "fit" ? "trainer.auto_scale_batch_size" : "trainer tune batch_size",
                "the batch-size search does not run in a pipeline-parallel job (" + std::to_string(world_size) +
                    " processes): it measures one process holding the whole model, and each stage holds a part",
                "Set data.batch_size by hand (the pipeline cuts each batch into trainer.pipeline.microbatches), "
                "or search with one process (trainer.devices=1 trainer.strategy=auto) for a lower bound.");
  }
  if (searches && world_size > 1) {
    throw Error(command == "fit" ? "trainer.auto_scale_batch_size" : "trainer tune batch_size",
                "the batch-size search does not run in a data-parallel job (" + std::to_string(world_size) +
                    " processes), as in Lightning",
                "Search with one process (trainer.devices=1), then start the data-parallel job with the batch it "
                "found per process (data.batch_size=N).");
  }
  // One pass over the samples, written to one file: refused before any rank is started.
  if (command == "predict" && world_size > 1) {
    throw Error("trainer.devices", "trainer predict runs in one process, not " + std::to_string(world_size),
                "Set trainer.devices=1 (a prediction pass needs no data parallelism).");
  }
  const int pipeline_stages =
      pipeline_strategy(view) && world_size > 1 ? PipelineOptions::from_config(view, world_size).stages : 0;
  std::unique_ptr<LocalRanks> local;
  if (!env && per_node * dist.num_nodes > 1 && dist.strategy != "single_device") {
    if (dist.num_nodes > 1) {
      throw Error("trainer.num_nodes=" + std::to_string(dist.num_nodes),
                  "several nodes need a launcher on each node; trainer starts ranks on this machine only",
                  "Start one process per device with torchrun (torchrun --nnodes " + std::to_string(dist.num_nodes) +
                      " --nproc-per-node " + std::to_string(per_node) +
                      " --rdzv-endpoint HOST:PORT --no-python trainer fit ...) or srun (one task per device).");
    }
    if (cuda && per_node > cuda_devices) {
      throw Error("trainer.devices=" + std::to_string(per_node),
                  "only " + std::to_string(cuda_devices) + " CUDA device(s) are visible",
                  cuda_devices > 0
                      ? "Use trainer.devices=" + std::to_string(cuda_devices) + " or fewer, or trainer.accelerator=cpu."
                      : std::string("Run on the CPU (trainer.accelerator=cpu), or where a GPU is visible (check "
                                    "nvidia-smi and CUDA_VISIBLE_DEVICES)."));
    }
    const std::string address = dist.master_addr.empty() ? "127.0.0.1" : dist.master_addr;
    if (dist.master_port != 0) {
      log::warning("trainer.master_port=" + std::to_string(dist.master_port) +
                   " is not used: the ranks trainer starts on this machine meet through a private file, not a TCP "
                   "port (the key sets the rendezvous port under srun)");
    }
    const int port = dist.master_port != 0 ? dist.master_port : LocalRanks::free_port();
    const bool evaluation = command == "validate" || command == "test" || command == "predict" || command == "export";
    const std::string checkpoint = evaluation ? view.get_or<std::string>("ckpt_path", "") : std::string();
    local = std::make_unique<LocalRanks>(per_node, rank_command_line(run_dir, checkpoint), address, port);
    env = detect_dist_env();
    // process_group.cpp binds Gloo to GLOO_SOCKET_IFNAME's interface when it is set.
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    const std::string gloo = interface != nullptr && interface[0] != '\0'
                                 ? "interface " + std::string(interface) + " (GLOO_SOCKET_IFNAME)"
                                 : address;
    log::info("started ranks 1.." + std::to_string(per_node - 1) + " of " + std::to_string(per_node) +
              " on this machine (rendezvous through the private file " + env->store_file + ", Gloo on " + gloo + ")");
  }
  if (!env) {
    if (command == "fit") warn_about_process_group_keys(job_config);
    Trainer trainer(std::move(job_config), run_dir, config_yaml);
    return trainer.run(command);
  }

  // Share the cores between the ranks of this machine (each rank would otherwise start one
  // thread per core, oversubscribing them N times).
  const int threads = std::max(1, usable_cores() / std::max(1, env->local_world_size));
  at::set_num_threads(threads);
  if (env->local_world_size > 1) {
    log::info("cores shared by the " + std::to_string(env->local_world_size) + " ranks on this machine: " +
              std::to_string(threads) + " intra-op thread(s) each (of " + std::to_string(usable_cores()) + " cores)");
  }
  // Gloo writes to its peers with writev: once a peer has died, a write to its socket raises
  // SIGPIPE, whose default action ends this rank without a word, before it can name the dead
  // rank. Ignored, the write fails with EPIPE and the collective throws. Python, and so PyTorch's
  // own DDP, runs with SIGPIPE ignored too.
  ::signal(SIGPIPE, SIG_IGN);
  if (env->rank != 0) log::set_level(log::Level::kWarning);
  std::shared_ptr<ProcessGroup> group;
  int code = 0;
  try {
    group = std::make_shared<ProcessGroup>(
        *env, dist, cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU),
        [&local]() -> std::optional<std::string> {
          if (!local) return std::nullopt;
          std::optional<RankFailure> failure = local->failure();
          return failure ? std::optional<std::string>(failure->what) : std::nullopt;
        },
        [&local](int rank) { return local ? local->last_output(rank) : std::string(); });
    Trainer trainer(std::move(job_config), run_dir, config_yaml);
    trainer.set_distributed(group, dist.bucket_cap_mb);
    code = trainer.run(command);
  } catch (const Error& error) {
    // SIGINT or SIGTERM while the ranks met: nothing has run, so the other ranks stop now.
    if (local && stop_signal_received() != 0 && starts_with(error.where(), "distributed rendezvous")) {
      group.reset();
      local->stop(2.0);
      throw;
    }
    if (local && is_collective_failure(error)) {
      // A rank that died made our collective fail at once; its exit shows up within moments.
      if (std::optional<RankFailure> cause = local->failure(3.0)) {
        group.reset();
        throw rank_failed(*local, *cause, env->world_size, "",
                          "The other ranks were stopped. " + restart_advice(checkpoints, run_dir), pipeline_stages);
      }
    }
    group.reset();  // the other ranks' collectives fail now, and they exit
    if (local) local->wait_all(5.0);
    throw;
  }
  group.reset();
  if (local) {
    if (std::optional<RankFailure> failure = local->wait_all(dist.timeout_seconds)) {
      throw rank_failed(*local, *failure, env->world_size, " at the end of the job",
                        "Rank 0 finished the job; see what rank " + std::to_string(failure->rank) + " wrote.",
                        pipeline_stages);
    }
  }
  return code;
}

}  // namespace trainer::engine
