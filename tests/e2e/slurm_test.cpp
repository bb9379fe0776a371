// hydra/launcher=slurm against a real one-node SLURM cluster (Debian's slurmctld, slurmd, munge)
// started on localhost for each test by scripts/slurm_cluster.sh (recipe: shared/notes/slurm.md).
// The real trainer binary submits the job array with sbatch; SLURM runs each array task, which
// runs `trainer sweep run-job DIR N`. Skipped, saying so, where SLURM is not installed
// (scripts/setup.sh installs it, so CI runs these).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

std::string status_of(const fs::path& sweep, int job) {
  std::error_code ec;
  const fs::path path = sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml");
  if (!fs::exists(path, ec)) return "";
  const std::string text = read_file(path);
  const size_t start = text.find("status: ");
  if (start == std::string::npos) return "";
  return text.substr(start + 8, text.find('\n', start) - start - 8);
}

bool slurm_installed() {
  std::error_code ec;
  return fs::exists("/usr/sbin/slurmctld", ec) && fs::exists("/usr/sbin/slurmd", ec) &&
         fs::exists("/usr/sbin/munged", ec) && fs::exists("/usr/bin/sbatch", ec);
}

// A running one-node cluster under its own temporary directory, stopped (jobs cancelled, daemons
// ended) when the object goes out of scope.
class SlurmCluster {
 public:
  SlurmCluster() : dir_(fs::path(state_.path()) / "cluster") {
    auto started = run_process({script(), "start", dir_.string()});
    INFO(started.out + started.err);
    REQUIRE(started.exit_code == 0);
    running_ = true;
  }
  ~SlurmCluster() {
    if (running_) run_process({script(), "stop", dir_.string()});
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  std::vector<std::string> env() const { return {"SLURM_CONF=" + (dir_ / "slurm.conf").string()}; }

 private:
  static std::string script() { return std::string(TRAINER_SOURCE_DIR) + "/scripts/slurm_cluster.sh"; }
  TempDir state_;
  fs::path dir_;
  bool running_ = false;
};

std::vector<std::string> slurm_sweep(std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "-m",
                                   "data=synthetic",
                                   "data.num_workers=0",
                                   "data.num_samples=512",
                                   "trainer.max_epochs=1",
                                   "hydra/launcher=slurm",
                                   "hydra.sweep.dir=sweep"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

bool usable() {
  if (!engine_built()) {
    skip_test(kNoEngine, Skip::expected);
    return false;
  }
  if (!slurm_installed()) {
    skip_test("SLURM is not installed here (slurmctld slurmd slurm-client munge; scripts/setup.sh installs them)",
              Skip::unexpected_in_ci);
    return false;
  }
  return true;
}

}  // namespace

// sbatch installed but with no cluster to talk to (a laptop, a container): the fix is not a launcher
// option. The stand-in prints what Debian's sbatch 22.05 prints there without a slurm.conf.
TEST_CASE("slurm: an sbatch that reaches no cluster is told apart from a refused option") {
  TempDir dir;
  const fs::path bin = fs::path(dir.path()) / "bin";
  fs::create_directories(bin);
  {
    std::ofstream sbatch(bin / "sbatch");
    sbatch << "#!/bin/sh\n"
              "echo 'sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host' >&2\n"
              "echo 'sbatch: error: fetch_config: DNS SRV lookup failed' >&2\n"
              "echo 'sbatch: fatal: Could not establish a configuration source' >&2\n"
              "exit 1\n";
  }
  fs::permissions(bin / "sbatch", fs::perms::owner_all);
  const char* path = std::getenv("PATH");
  auto result = run_process(slurm_sweep({"seed=1,2"}), dir.path(),
                            {"PATH=" + bin.string() + ":" + (path != nullptr ? path : "/usr/bin:/bin")});
  INFO(result.err);
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(contains(result.err, "sbatch cannot reach a SLURM cluster from this machine (exit code 1)"));
  CHECK(contains(result.err, "Check that `sinfo` works here"));
  CHECK(contains(result.err, "hydra/launcher=basic"));
  CHECK_FALSE(contains(result.err, "Fix the hydra.launcher options"));
}

TEST_CASE("slurm: a sweep runs as a real SLURM job array; a failing job is recorded and the others finish",
          "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  // lr=1e30 gives a non-finite loss at the first check: that job fails at run time, in its task.
  auto result = run_process(slurm_sweep({"optimizer.lr=0.01,1e30,0.02", "hydra.launcher.array_parallelism=2",
                                         "hydra.launcher.timeout_min=10"}),
                            dir.path(), cluster.env());
  INFO(result.err);
  CHECK(result.exit_code == 1);  // one job failed
  check_no_crash(result);
  CHECK(contains(result.err, "submitted SLURM job array"));
  CHECK(contains(result.err, "1 of 3 jobs failed"));
  CHECK(status_of(sweep, 0) == "done");
  CHECK(status_of(sweep, 1) == "failed");
  CHECK(status_of(sweep, 2) == "done");

  const std::string script = read_file(sweep / ".sweep" / "slurm" / "array.sbatch");
  CHECK(contains(script, "#SBATCH --array=0-2%2\n"));
  CHECK(contains(script, "#SBATCH --time=10\n"));
  CHECK(contains(script, "sweep run-job"));
  for (int job : {0, 2}) {
    const fs::path run = sweep / std::to_string(job);
    CHECK(fs::exists(run / "metrics.csv"));
    CHECK(fs::exists(run / "checkpoints" / "last.ckpt"));
    CHECK(fs::exists(run / ".hydra" / "config.yaml"));
    // The array task's own log, written by SLURM from the script's lines.
    CHECK(contains(read_file(sweep / ".sweep" / "slurm" / "logs" / (std::to_string(job) + ".out")), "[slurm]"));
  }
  CHECK(contains(read_file(sweep / ".sweep" / "status" / "1.yaml"), "the loss was not finite"));
  CsvTable table = read_csv(sweep / "sweep_summary.csv");
  CHECK(table.rows.size() == 3);
  CHECK(contains(read_file(sweep / "sweep_summary.md"), "Best job: #"));
}

TEST_CASE("slurm: wait=false submits and returns; the array finishes on its own; sweep summary reports it",
          "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto submitted = run_process(slurm_sweep({"seed=1,2", "hydra.launcher.wait=false"}), dir.path(), cluster.env());
  INFO(submitted.err);
  CHECK(submitted.exit_code == 0);
  CHECK(contains(submitted.err, "not waiting (hydra.launcher.wait=false)"));

  bool ended = false;
  for (int i = 0; i < 1200 && !ended; ++i) {  // up to 2 minutes
    ended = status_of(sweep, 0) == "done" && status_of(sweep, 1) == "done";
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(ended);
  auto summary = run_process({TRAINER_BINARY, "sweep", "summary", "sweep"}, dir.path());
  INFO(summary.out + summary.err);
  CHECK(summary.exit_code == 0);
  CHECK(contains(summary.out, "seed=1"));
  CHECK(contains(summary.out, "seed=2"));
  CHECK(contains(summary.out, "done"));
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

TEST_CASE("slurm: Optuna's trials are SLURM jobs of their own, submitted as slots free, and the study completes",
          "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  // docs/slurm.md's command on real Fashion-MNIST (the shipped TPE search over lr, batch size and
  // weight decay), with 4 short trials.
  auto result = run_process(
      {TRAINER_BINARY, "fit", "hparams_search=fashion_mnist_optuna", "hydra/launcher=slurm", "hydra.sweeper.n_jobs=2",
       "hydra.launcher.timeout_min=10", "hydra.sweeper.n_trials=4", "hydra.sweeper.sampler.n_startup_trials=2",
       "trainer.max_epochs=1", "trainer.limit_train_batches=0.05", "trainer.limit_val_batches=0.2",
       "test_after_fit=false", "data.num_workers=0", "hydra.sweep.dir=sweep"},
      dir.path(), cluster.env());
  INFO(result.err);
  CHECK(result.exit_code == 0);
  check_no_crash(result);
  CHECK(contains(result.err, "2 at a time"));
  // Trials 0 and 1 fill the two slots; trial 2 is asked for only once one of them has ended.
  const size_t second = result.err.find("[sweep] #1 submitted as SLURM job ");
  const size_t first_end = result.err.find(" done in ");
  const size_t third = result.err.find("[sweep] #2 submitted as SLURM job ");
  REQUIRE(second != std::string::npos);
  REQUIRE(first_end != std::string::npos);
  REQUIRE(third != std::string::npos);
  CHECK(second < first_end);
  CHECK(first_end < third);
  const std::string submitted = read_file(sweep / ".sweep" / "slurm" / "submitted.txt");
  for (int trial = 0; trial < 4; ++trial) {
    CHECK(contains(submitted, " trial " + std::to_string(trial) + "\n"));
    CHECK(status_of(sweep, trial) == "done");
    CHECK(contains(read_file(sweep / ".sweep" / "slurm" / ("trial_" + std::to_string(trial) + ".sbatch")),
                   "#SBATCH --array=" + std::to_string(trial) + "\n"));
    CHECK(contains(read_file(sweep / ".sweep" / "slurm" / "logs" / (std::to_string(trial) + ".out")), "[slurm]"));
  }
  const std::string study = read_file(sweep / ".sweep" / "study.yaml");
  CHECK(count(study, "state: complete") == 4);
  CHECK(contains(read_file(sweep / "optimization_results.yaml"), "best_value: "));
}

TEST_CASE("slurm: a trial the pruner stops under SLURM gets SIGTERM, keeps last.ckpt and is pruned, not failed",
          "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  // As e2e/optuna's pruning case: lr 0.01 for trials 0 and 1, then 1e-8, which falls behind at the
  // first rung; epochs of 64k samples (about 1.5 s on 2 cores) leave the pruned trial's last three
  // epochs to outlast the launcher's look every second (16k-sample epochs ran out first once the
  // step had become twice as fast).
  auto result =
      run_process(slurm_sweep({"hydra/sweeper=optuna", "data.num_samples=65536", "trainer.max_epochs=4",
                               "trainer.deterministic=true", "test_after_fit=false", "optimizer.lr=choice(0.01,1e-8)",
                               "hydra.sweeper.n_trials=3", "hydra.sweeper.n_jobs=1", "hydra.sweeper.sampler.seed=20",
                               "hydra.sweeper.sampler.n_startup_trials=6",
                               "+hydra.sweeper.pruner._target_=optuna.pruners.SuccessiveHalvingPruner",
                               "+hydra.sweeper.pruner.reduction_factor=2", "hydra.launcher.timeout_min=10"}),
                  dir.path(), cluster.env());
  INFO(result.err);
  CHECK(result.exit_code == 0);
  check_no_crash(result);
  CHECK(status_of(sweep, 0) == "done");
  CHECK(status_of(sweep, 1) == "done");
  CHECK(status_of(sweep, 2) == "stopped_early");
  CHECK(fs::exists(sweep / "2" / "checkpoints" / "last.ckpt"));
  const std::string study = read_file(sweep / ".sweep" / "study.yaml");
  CHECK(count(study, "state: pruned") == 1);
  CHECK(count(study, "state: complete") == 2);
  CHECK(contains(result.err, "1 pruned, 0 failed"));
}

TEST_CASE("slurm: Ctrl-C on an Optuna study under SLURM checkpoints its running trials; sweep resume finishes them",
          "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  const ScopedEnv slurm_conf("SLURM_CONF", cluster.env().front().substr(std::string("SLURM_CONF=").size()));
  bool signalled = false;
  // Epochs of 16k samples: both trials are mid-run, each past its first epoch's checkpoint, when the
  // sweep gets SIGINT.
  auto first = run_and_signal(
      slurm_sweep({"hydra/sweeper=optuna", "optimizer.lr=tag(log, interval(1e-3, 1e-1))", "data.num_samples=16384",
                   "trainer.max_epochs=8", "test_after_fit=false", "hydra.sweeper.n_trials=2", "hydra.sweeper.n_jobs=2",
                   "hydra.launcher.timeout_min=10"}),
      dir.path(),
      [&] {
        std::error_code ec;
        return fs::exists(sweep / "0" / "checkpoints" / "last.ckpt", ec) &&
               fs::exists(sweep / "1" / "checkpoints" / "last.ckpt", ec);
      },
      SIGINT, &signalled);
  INFO(first.err);
  REQUIRE(signalled);
  CHECK(first.exit_code == 130);
  check_no_crash(first);
  CHECK(contains(first.err, "interrupted: no more trials are submitted"));
  CHECK(status_of(sweep, 0) == "interrupted");
  CHECK(count(read_file(sweep / ".sweep" / "study.yaml"), "state: running") == 2);

  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, dir.path(), cluster.env());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "(resuming from last.ckpt)"));
  CHECK(count(read_file(sweep / ".sweep" / "study.yaml"), "state: complete") == 2);
  CHECK(status_of(sweep, 0) == "done");
  CHECK(status_of(sweep, 1) == "done");
}

TEST_CASE("slurm: a trial that ends after its Optuna sweep was killed is told to the study on resume, not rerun",
          "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  const ScopedEnv slurm_conf("SLURM_CONF", cluster.env().front().substr(std::string("SLURM_CONF=").size()));
  const std::vector<std::string> argv = slurm_sweep(
      {"hydra/sweeper=optuna", "optimizer.lr=tag(log, interval(1e-3, 1e-1))", "data.num_samples=4096",
       "trainer.max_epochs=3", "test_after_fit=false", "hydra.sweeper.n_trials=1", "hydra.launcher.timeout_min=10"});
  // SIGKILL: the sweep passes nothing on; its trial, a SLURM job, runs to its end unwatched.
  bool signalled = false;
  auto killed = run_and_signal(
      argv, dir.path(), [&] { return status_of(sweep, 0) == "running"; }, SIGKILL, &signalled);
  REQUIRE(signalled);
  for (int i = 0; i < 1200 && status_of(sweep, 0) != "done"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(status_of(sweep, 0) == "done");
  CHECK(contains(read_file(sweep / ".sweep" / "study.yaml"), "state: running"));

  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "[optuna] trial #0: val/acc"));
  CHECK_FALSE(contains(resumed.err, "submitted as SLURM job"));  // not run again
  CHECK(count(read_file(sweep / ".sweep" / "study.yaml"), "state: complete") == 1);
  CHECK(fs::exists(sweep / "optimization_results.yaml"));
}

// Data parallel under srun: SLURM starts both tasks (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
// SLURM_STEP_NODELIST); the binary reads them, rendezvouses on the first node of the step at a
// port drawn from the job and step ids (dist_env.h: slurm_port), and trains as trainer's own
// launcher does.
TEST_CASE("slurm: srun --ntasks 2 runs one data-parallel job with the weights of trainer.devices=2", "[may-skip]") {
  if (!usable()) return;
  SlurmCluster cluster;
  TempDir dir;
  const fs::path root(dir.path());
  auto fit = [&](const std::string& run, std::vector<std::string> extra) {
    std::vector<std::string> argv = {TRAINER_BINARY,
                                     "fit",
                                     "data=synthetic",
                                     "data.num_samples=1024",
                                     "data.val_fraction=0.125",
                                     "model.dropout=0",
                                     "optimizer=sgd",
                                     "optimizer.momentum=0",
                                     "optimizer.nesterov=false",
                                     "data.batch_size=32",
                                     "trainer.max_steps=10",
                                     "trainer.num_sanity_val_steps=0",
                                     "trainer.deterministic=true",
                                     "test_after_fit=false",
                                     "hydra.run.dir=" + (root / run).string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  std::vector<std::string> srun = {"/usr/bin/srun", "--ntasks", "2", "--cpus-per-task", "1"};
  const std::vector<std::string> job = fit("srun", {});
  srun.insert(srun.end(), job.begin(), job.end());
  auto under_srun = run_process(srun, dir.path(), cluster.env());
  INFO(under_srun.err);
  REQUIRE(under_srun.exit_code == 0);
  CHECK(contains(under_srun.err, "rank 0 of 2 (gloo"));
  CHECK(contains(under_srun.err, "slurm)"));
  CHECK(!contains(under_srun.err, "started ranks"));  // SLURM started them

  auto launched = run_process(fit("launched", {"trainer.devices=2"}), dir.path());
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  CHECK(largest_difference(exported_weights(root / "srun"), exported_weights(root / "launched")) <= 1e-5);
}
