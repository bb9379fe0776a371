// Sweeps (-m) with the real trainer binary: every job checked before any runs, job processes run
// by the basic and local launchers, failures isolated, fail_fast, resume after the sweep process
// was killed, refusal of a changed job list, and the summary files. Tiny synthetic runs.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

std::vector<std::string> sweep_command(std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY, "fit", "-m", "data=synthetic", "data.num_workers=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::string status_of(const fs::path& sweep, int job) {
  const std::string text = read_file(sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml"));
  const size_t start = text.find("status: ");
  if (start == std::string::npos) return "";
  return text.substr(start + 8, text.find('\n', start) - start - 8);
}

}  // namespace

TEST_CASE("sweep: every job is checked before any runs; all bad jobs are listed and nothing runs") {
  TempDir dir;
  // A debug option with a misspelt trainer key: composes, but fails the schema check.
  fs::create_directories(fs::path(dir.path()) / "extra" / "debug");
  std::ofstream(fs::path(dir.path()) / "extra" / "debug" / "typo.yaml")
      << "# @package _global_\ntrainer:\n  max_epoch: 1\n";
  auto result = run_process(
      sweep_command({"--config-dir", "extra", "debug=fdr,typo", "model=mlp,bogus", "hydra.sweep.dir=sweep"}),
      dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  CHECK(contains(result.err, "3 of 4 sweep jobs are not valid; nothing was run"));
  CHECK_FALSE(contains(result.err, "job 0:"));
  // job 3 has both problems; composing it stops at model=bogus, as job 1's does: one entry for both
  CHECK(contains(result.err, "jobs 1, 3: override 'model=bogus'"));
  CHECK(contains(result.err, "job 2: "));  // trainer.max_epoch
  CHECK(contains(result.err, "max_epoch"));
  CHECK(contains(result.err, "max_epochs"));  // did you mean
  CHECK(contains(result.err, "bogus"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep"));  // nothing written, nothing run
}

// A job whose mandatory key is still ??? (model.path of model=torchscript) failed as it started,
// after the jobs before it had run (and under SLURM, after the array was submitted).
TEST_CASE("sweep: a job with a mandatory key left at ??? is refused at planning, naming the key") {
  TempDir dir;
  auto result = run_process(
      {TRAINER_BINARY, "fit", "-m", "model=mlp,torchscript", "data=synthetic,image_folder", "hydra.sweep.dir=sweep"},
      dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  CHECK(contains(result.err, "3 of 4 sweep jobs are not valid; nothing was run"));
  CHECK(contains(result.err, "job 1: config: mandatory value(s) left at ???:\n  data.root (data=image_folder): "));
  CHECK(contains(result.err,
                 "job 2: config: mandatory value(s) left at ???:\n  model.path (model=torchscript): "
                 "the saved TorchScript file"));
  CHECK(contains(result.err, "on the command line (model.path=...)"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep"));
}

// The engine refused these once the job had started: after its directory, log and first loggers
// were made, and in a sweep in each such job after the ones before it had run.
TEST_CASE("an unknown model, dataset, logger or callback name is refused before anything is written") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);  // a program's own are asked of the engine
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.name=mpl",
       "model.name (override 'model.name=mpl'): unknown model 'mpl'; nothing was run. Did you "
       "mean 'mlp'? Known models: cnn, mlp, resnet, torchscript. A C++ program adds its own with "
       "TRAINER_REGISTER_MODEL"},
      {"data.name=fashon_mnist", "unknown dataset 'fashon_mnist'; nothing was run. Did you mean 'fashion_mnist'?"},
      {"+logger.wandb.project=x", "logger.wandb (override '+logger.wandb.project=x'): unknown logger 'wandb'"},
      {"+callbacks.rich_progress_bar={}",
       "unknown callback 'rich_progress_bar'; nothing was run. Known callbacks: "
       "device_stats_monitor, early_stopping, lr_monitor"},
  };
  for (const auto& [override_text, said] : cases) {
    auto result = run_process({TRAINER_BINARY, "fit", override_text, "hydra.run.dir=run"}, dir.path());
    INFO(result.err);
    CHECK(result.exit_code == 1);
    check_no_crash(result);
    CHECK(contains(result.err, said));
    CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));
  }
  // In a sweep, at planning: no job ran before the one that names it.
  // A null entry switches a callback off, whatever its name: not refused.
  auto sweep = run_process(
      sweep_command({"debug=fdr", "+callbacks.mine=null", "model.name=mlp,mpl", "hydra.sweep.dir=sweep"}), dir.path());
  INFO(sweep.err);
  CHECK(sweep.exit_code == 1);
  CHECK(contains(sweep.err, "1 of 2 sweep jobs are not valid; nothing was run:\n  job 1: model.name"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep"));
}

TEST_CASE("sweep: invalid jobs are grouped by error, the widest first; past 20 errors the rest are counted") {
  TempDir dir;
  // 22 unknown models: 22 distinct errors, each in the 2 jobs of its model; model=mlp is valid.
  std::string models = "model=mlp";
  for (int i = 1; i <= 22; ++i) models += ",nosuch" + std::to_string(i);
  auto result = run_process(sweep_command({models, "seed=1,2", "hydra.sweep.dir=sweep"}), dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  CHECK(contains(result.err, "44 of 46 sweep jobs are not valid; nothing was run"));
  CHECK(contains(result.err, "jobs 2, 3: override 'model=nosuch1'"));
  CHECK(contains(result.err, "jobs 40, 41: override 'model=nosuch20'"));
  CHECK_FALSE(contains(result.err, "'model=nosuch21'"));
  CHECK(contains(result.err, "and 2 other error(s), in 4 more job(s)"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep"));
}

TEST_CASE("sweep: the local launcher runs n_jobs=2 job processes, each with its share of the cores") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(sweep_command({"debug=fdr", "hydra/launcher=local", "hydra.launcher.n_jobs=2",
                                           "optimizer.lr=0.1,0.01", "hydra.sweep.dir=sweep"}),
                            dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 0);
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  CHECK(contains(result.err, "2 at a time"));
  for (int job : {0, 1}) {
    const fs::path run = sweep / std::to_string(job);
    CHECK(status_of(sweep, job) == "done");
    CHECK(fs::exists(run / "stdout.log"));
    CHECK(contains(read_file(run / "stdout.log"), "test/acc="));  // the job's own stdout
    CHECK(contains(read_file(run / "trainer.log"), "optimizer.lr") == false);
    CHECK(fs::exists(run / ".hydra" / "overrides.yaml"));
    CHECK(fs::exists(sweep / ".sweep" / "jobs" / (std::to_string(job) + ".yaml")));
    if (sysconf(_SC_NPROCESSORS_ONLN) == 2) {
      // Two jobs on two cores: the engine of each runs one intra-op thread.
      CHECK(contains(read_file(run / "trainer.log"), "runtime tuning: 1 intra-op threads"));
    }
  }
  CHECK(read_file(sweep / "1" / ".hydra" / "overrides.yaml") ==
        "- data=synthetic\n- data.num_workers=0\n- debug=fdr\n- optimizer.lr=0.01\n");
  CHECK(contains(result.err, "#0 done"));
  CHECK(contains(result.err, "#1 done"));
  if (sysconf(_SC_NPROCESSORS_ONLN) == 2) {
    // The one job a resume has left keeps its share (1 thread), as the launch line says: it ran
    // with both cores, so a job resumed mid-run did not end bit for bit.
    fs::remove_all(sweep / "1");
    auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
    INFO(resumed.err);
    CHECK(resumed.exit_code == 0);
    CHECK(contains(resumed.err, "1 thread(s) each"));
    CHECK(contains(read_file(sweep / "1" / "trainer.log"), "runtime tuning: 1 intra-op threads"));
  }
}

TEST_CASE("sweep: a csv logger writing elsewhere than each job's metrics.csv is a warning before any job runs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // The summary reads <job>/metrics.csv: with logger.csv.name=foo.csv it listed every job done,
  // with blank metrics and no best job, without a word.
  auto result = run_process(sweep_command({"data.num_samples=128", "trainer.max_epochs=1", "seed=1,2",
                                           "logger.csv.name=foo.csv", "hydra.sweep.dir=sweep"}),
                            dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 0);
  const fs::path job0 = fs::path(dir.path()) / "sweep" / "0";
  const size_t warned = result.err.find("logger.csv writes job 0's metrics to " + (job0 / "foo.csv").string() +
                                        ", not to " + (job0 / "metrics.csv").string());
  REQUIRE(warned != std::string::npos);
  CHECK(warned < result.err.find("#0 "));  // before the jobs
  CHECK(fs::exists(job0 / "foo.csv"));
}

TEST_CASE("sweep: a failing job does not stop the others, the sweep exits non-zero, the summary says so") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const auto command =
      sweep_command({"data.num_samples=512", "trainer.max_epochs=2", "hydra/launcher=local", "hydra.launcher.n_jobs=2",
                     "model.input_size=5,784,784", "hydra.sweep.dir=sweep"});
  auto result = run_process(command, dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  CHECK(status_of(sweep, 0) == "failed");
  CHECK(status_of(sweep, 1) == "done");
  CHECK(status_of(sweep, 2) == "done");
  CHECK(contains(result.err, "#0 failed"));
  CHECK(contains(result.err, "the mlp model expects 5 inputs per sample"));
  CHECK(contains(result.err, "1 of 3 jobs failed (0)"));
  CHECK(contains(result.err, "best job: #"));

  // The summary: one row per job with the monitored metric (val/acc, max) read from metrics.csv.
  const std::string csv = read_file(sweep / "sweep_summary.csv");
  CHECK(contains(csv, "job,status,overrides,metric,mode,best,final,test/acc,test/loss,epochs,duration_s\n"));
  CHECK(contains(csv,
                 "\n0,failed,data=synthetic data.num_workers=0 data.num_samples=512 trainer.max_epochs=2 "
                 "model.input_size=5,val/acc,max,,,,,0,"));
  CsvTable table = read_csv(sweep / "sweep_summary.csv");
  REQUIRE(table.rows.size() == 3);
  for (int job : {1, 2}) {
    const auto& row = table.rows[static_cast<size_t>(job)];
    CHECK(row[1] == "done");
    CHECK(!row[5].empty());  // best
    CHECK(!row[6].empty());  // final
    CHECK(!row[7].empty());  // test/acc (test_after_fit)
    CHECK(row[9] == "2");    // epochs
    CsvTable metrics = read_csv(sweep / std::to_string(job) / "metrics.csv");
    CHECK(std::stod(row[6]) == Approx(std::stod(metrics.last("val/acc"))).epsilon(1e-5));
  }
  const std::string md = read_file(sweep / "sweep_summary.md");
  CHECK(contains(md, "3 jobs: 2 done, 1 failed"));
  CHECK(contains(md, "Best job: #"));
  CHECK(contains(md, "- job 0: "));
  CHECK(contains(md, "the mlp model expects 5 inputs per sample"));
  CHECK(fs::exists(sweep / "sweep_metrics.png"));

  // `trainer sweep summary` prints the same table.
  auto summary = run_process({TRAINER_BINARY, "sweep", "summary", "sweep"}, dir.path());
  CHECK(summary.exit_code == 0);
  CHECK(summary.out == md);

  // `trainer sweep resume` re-runs only the failed job (it fails again).
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 1);
  check_no_crash(resumed);
  CHECK(contains(resumed.err, "2 of 3 jobs already ended, 1 to run"));
  CHECK(contains(resumed.err, "#0 failed"));
  CHECK_FALSE(contains(resumed.err, "#1 started"));

  // Moved elsewhere, the sweep is not resumed (its plan names the old directories: the jobs would
  // run there); its summary reads the finished jobs where they are now.
  const std::string after_resume = read_file(sweep / "sweep_summary.md");  // job 0's new duration
  const fs::path moved = fs::path(dir.path()) / "moved";
  fs::rename(sweep, moved);
  auto not_here = run_process({TRAINER_BINARY, "sweep", "resume", "moved"}, dir.path());
  check_clean_error(not_here);
  CHECK(contains(not_here.err, "Error: " + moved.string() + ": this sweep was planned in " + sweep.string()));
  CHECK(contains(not_here.err, "Move it back to " + sweep.string()));
  CHECK_FALSE(fs::exists(sweep));
  auto moved_summary = run_process({TRAINER_BINARY, "sweep", "summary", "moved"}, dir.path());
  INFO(moved_summary.err);
  CHECK(moved_summary.exit_code == 0);
  CHECK(moved_summary.out == after_resume);
}

TEST_CASE("sweep: a job killed from outside is interrupted and a crashed one failed; the summary says why") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto pid_of = [&](int job) -> pid_t {
    const std::string text = read_file(sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml"));
    const size_t at = text.find("pid: ");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::stol(text.substr(at + 5)));
  };
  // Job 0 gets SIGKILL (what the out-of-memory killer sends), job 1 SIGABRT (a crash; not SIGSEGV,
  // which the sanitizer build's handler turns into exit code 1), each once it runs; job 2 runs to
  // its end.
  std::vector<bool> sent(2, false);
  bool signalled = false;
  const ProcessResult result = run_and_signal(
      sweep_command({"data.num_samples=1024", "trainer.max_epochs=4", "hydra/launcher=local", "hydra.launcher.n_jobs=1",
                     "seed=1,2,3", "hydra.sweep.dir=sweep"}),
      dir.path(),
      [&] {
        for (int job : {0, 1}) {
          if (sent[static_cast<size_t>(job)] || status_of(sweep, job) != "running" || pid_of(job) == 0) continue;
          ::kill(pid_of(job), job == 0 ? SIGKILL : SIGABRT);
          sent[static_cast<size_t>(job)] = true;
        }
        return false;
      },
      SIGTERM, &signalled);
  INFO(result.err);
  REQUIRE(sent[0]);
  REQUIRE(sent[1]);
  CHECK(result.exit_code == 1);
  CHECK(status_of(sweep, 0) == "interrupted");
  CHECK(status_of(sweep, 1) == "failed");
  CHECK(status_of(sweep, 2) == "done");
  CHECK(
      contains(read_file(sweep / ".sweep" / "status" / "0.yaml"), "killed by signal 9 (Killed): killed from outside"));
  CHECK(contains(result.err, "#0 interrupted in "));
  // The progress counts it apart: it ended, but a resume continues it.
  CHECK(contains(result.err, "1/3 ended, 1 interrupted (a resume continues them)"));
  CHECK(contains(result.err, "3 job(s) ended in "));
  CHECK(contains(result.err, ", 1 failed, 1 interrupted\n"));
  CHECK(contains(result.err,
                 "the job process was killed by signal 9 (Killed): killed from outside (the kernel's "
                 "out-of-memory killer, see dmesg, or a kill command); see " +
                     (sweep / "0" / "stderr.log").string()));
  const std::string summary = read_file(sweep / "sweep_summary.md");
  CHECK(contains(summary, "## Errors"));
  CHECK(contains(summary, "- job 0 (interrupted): the job process was killed by signal 9 (Killed)"));
  CHECK(contains(summary, "- job 1: the job process was killed by signal 6 (Aborted): it aborted"));
  CHECK(contains(result.err, "1 of 3 jobs failed (1); 1 did not finish (0: interrupted or never started)"));
}

TEST_CASE("sweep: fail_fast=true stops launching at the first failure") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(
      sweep_command({"debug=fdr", "+hydra.launcher.fail_fast=true", "model.input_size=5,784", "hydra.sweep.dir=sweep"}),
      dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  CHECK(status_of(sweep, 0) == "failed");
  CHECK_FALSE(fs::exists(sweep / ".sweep" / "status" / "1.yaml"));
  CHECK_FALSE(fs::exists(sweep / "1"));
  CHECK(contains(result.err, "fail_fast"));
  CHECK(contains(result.err, "1 of 2 jobs failed (0); 1 did not finish (1: interrupted or never started)"));
}

TEST_CASE("sweep: a sweep killed in its first job leaves its summary") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  bool signalled = false;
  auto killed = run_and_signal(
      sweep_command({"data.num_samples=65536", "trainer.max_epochs=3", "seed=1,2", "hydra.sweep.dir=sweep"}),
      dir.path(), [&] { return status_of(sweep, 0) == "running"; }, SIGKILL, &signalled);
  REQUIRE(signalled);
  CHECK(killed.exit_code == 128 + SIGKILL);
  const std::string summary = read_file(sweep / "sweep_summary.md");
  CHECK(contains(summary, "2 jobs: "));
  CHECK(contains(summary, "| 1 | pending |"));
}

TEST_CASE("sweep: killed with SIGKILL mid-way, the same command resumes it; a changed job list is refused") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto command = [](const std::string& seeds) {
    return sweep_command({"data.num_samples=1024", "trainer.max_epochs=6", "callbacks.model_checkpoint.save_top_k=0",
                          "seed=" + seeds, "hydra.sweep.dir=sweep"});
  };
  auto pid_of = [&](int job) -> pid_t {
    const std::string text = read_file(sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml"));
    const size_t at = text.find("pid: ");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::stol(text.substr(at + 5)));
  };
  // Killed once job 1 has written a checkpoint (job 0 is done by then). Job 1's process, forked from
  // the sweep's with the sweep's command line, is stopped first, so that it outlives the sweep. This
  // test process adopts it: were it an orphan of init, its process group would be orphaned with a
  // stopped member, which the kernel ends with SIGHUP.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  bool signalled = false;
  pid_t job1 = 0;
  auto killed = run_and_signal(
      command("1,2,3"), dir.path(),
      [&] {
        std::error_code ec;
        if (!fs::exists(sweep / "1" / "checkpoints" / "last.ckpt", ec) || status_of(sweep, 1) != "running") {
          return false;
        }
        job1 = pid_of(1);
        return job1 > 0 && ::kill(job1, SIGSTOP) == 0;
      },
      SIGKILL, &signalled);
  REQUIRE(signalled);
  CHECK(killed.exit_code == 128 + SIGKILL);
  // While it lives, the sweep is not resumed: job 1 would run twice, in one directory.
  auto early = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  INFO(early.err);
  ::kill(job1, SIGCONT);
  int job1_status = 0;
  ::waitpid(job1, &job1_status, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  CHECK(early.exit_code == 1);
  check_clean_error(early);
  CHECK(contains(early.err, "jobs of this sweep are still running: 1 (pid " + std::to_string(job1)));
  CHECK_FALSE(contains(early.err, "started"));
  // The orphaned job process got SIGTERM (parent-death signal): it checkpoints and records itself.
  for (int i = 0; i < 600 && status_of(sweep, 1) == "running"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(status_of(sweep, 0) == "done");
  CHECK(status_of(sweep, 1) == "interrupted");
  // Its advice is the sweep's (a single run's, ckpt_path=last with its run directory, would run it
  // without the sweep's bookkeeping).
  CHECK(contains(read_file(sweep / "1" / "stderr.log"), "Resume the sweep with trainer sweep resume"));
  CHECK_FALSE(contains(read_file(sweep / "1" / "stderr.log"), "plus ckpt_path=last"));
  CHECK_FALSE(fs::exists(sweep / ".sweep" / "status" / "2.yaml"));
  const std::string job0_status = read_file(sweep / ".sweep" / "status" / "0.yaml");
  auto duration_of = [&](int job) {
    const std::string text = read_file(sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml"));
    const size_t at = text.find("duration_s: ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + 12));
  };
  const double first_attempt = duration_of(1);
  CHECK(first_attempt > 0);

  // Another job list on the same directory is refused, with the differences, and runs nothing.
  auto changed = run_process(command("1,2,4"), dir.path());
  CHECK(changed.exit_code == 1);
  check_no_crash(changed);
  CHECK(contains(changed.err, "different job list"));
  CHECK(contains(changed.err,
                 "job 2: data=synthetic data.num_workers=0 data.num_samples=1024 trainer.max_epochs=6 "
                 "callbacks.model_checkpoint.save_top_k=0 seed=3 on disk, data=synthetic "
                 "data.num_workers=0 data.num_samples=1024 trainer.max_epochs=6 "
                 "callbacks.model_checkpoint.save_top_k=0 seed=4 now"));
  CHECK_FALSE(fs::exists(sweep / ".sweep" / "status" / "2.yaml"));

  // The same command: job 0 skipped, job 1 resumed from its last.ckpt, job 2 run; numbers kept.
  auto resumed = run_process(command("1,2,3"), dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "1 of 3 jobs already ended, 2 to run"));
  CHECK_FALSE(contains(resumed.err, "#0 started"));
  CHECK(contains(resumed.err, "#1 started (resuming from last.ckpt)"));
  CHECK(contains(resumed.err, "#2 started: "));
  CHECK(read_file(sweep / ".sweep" / "status" / "0.yaml") == job0_status);
  for (int job : {0, 1, 2}) CHECK(status_of(sweep, job) == "done");
  CHECK(contains(read_file(sweep / ".sweep" / "status" / "1.yaml"), "resumed: true"));
  CHECK(duration_of(1) > first_attempt);  // both attempts' time
  CHECK(contains(read_file(sweep / "1" / "trainer.log"), "resumed from"));
  CHECK(contains(read_file(sweep / "2" / ".hydra" / "overrides.yaml"), "seed=3"));
  // Job 1 trained 6 epochs in all: epochs 0..5 each logged val/acc once in metrics.csv.
  CsvTable table = read_csv(sweep / "sweep_summary.csv");
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[1][9] == "6");
}

TEST_CASE("sweep: a second sweep in the directory of a running one is refused and the jobs stay its own") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "busy";
  auto command = [](const std::string& seeds) {
    return sweep_command({"data.num_samples=1024", "trainer.max_epochs=4", "callbacks.model_checkpoint.save_top_k=0",
                          "seed=" + seeds, "hydra.sweep.dir=busy"});
  };
  // While job 0 of the first sweep trains: another job list, the same command (a script started
  // twice), and trainer sweep resume, each in the same directory.
  std::vector<ProcessResult> refused;
  bool signalled = false;
  const ProcessResult first = run_and_signal(
      command("1,2"), dir.path(),
      [&] {
        if (!refused.empty() || status_of(sweep, 0) != "running") return false;
        refused.push_back(run_process(command("7,8"), dir.path()));
        refused.push_back(run_process(command("1,2"), dir.path()));
        refused.push_back(run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, dir.path()));
        return false;
      },
      SIGTERM, &signalled);
  INFO(first.err);
  CHECK(first.exit_code == 0);
  REQUIRE(refused.size() == 3);
  for (const ProcessResult& other : refused) {
    INFO(other.err);
    check_clean_error(other);
    CHECK(contains(other.err, "hydra.sweep.dir=" + sweep.string() +
                                  ": another trainer sweep is running in this "
                                  "directory (pid "));
    CHECK(contains(other.err, "nothing was run"));
  }
  // The first sweep's jobs ran once each, with its own overrides.
  CHECK(contains(read_file(sweep / "0" / ".hydra" / "overrides.yaml"), "seed=1"));
  CHECK(contains(read_file(sweep / "1" / ".hydra" / "overrides.yaml"), "seed=2"));
  for (int job : {0, 1}) {
    CHECK(status_of(sweep, job) == "done");
    const std::string log = read_file(sweep / std::to_string(job) / "trainer.log");
    CHECK(log.find("first training step") == log.rfind("first training step"));
  }
  CHECK_FALSE(fs::exists(sweep / "2"));
  // Once it ended, the directory is free: the same command finds every job ended.
  const ProcessResult again = run_process(command("1,2"), dir.path());
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(contains(again.err, "2 of 2 jobs already ended, 0 to run"));
}

TEST_CASE("sweep: ASHA stops the clearly bad jobs early and keeps the best one") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // lr=1e-7 barely moves from chance: cut at the first rung by job 0's result there. Epochs of
  // 256 small steps (~0.25 s) so a job cannot finish all 10 between two of the launcher's
  // 0.5 s looks at its metrics.csv.
  auto result =
      run_process(sweep_command({"data.num_samples=4096", "data.batch_size=16", "trainer.max_epochs=10",
                                 "hydra/sweeper=asha", "hydra.sweeper.max_t=10", "hydra.sweeper.reduction_factor=2",
                                 "optimizer.lr=0.001,1e-7,1e-7", "hydra.sweep.dir=sweep"}),
                  dir.path(), {},
                  // 4.5 min for job 0 alone on the 2-core machine at load 13 (epochs of
                  // 27 s): more than the default timeout.
                  std::chrono::seconds(900));
  INFO(result.err);
  CHECK(result.exit_code == 0);
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  CHECK(status_of(sweep, 0) == "done");
  CHECK(status_of(sweep, 1) == "stopped_early");
  CHECK(status_of(sweep, 2) == "stopped_early");
  CHECK(contains(result.err, "#1 stopped early by ASHA at the rung of 1 epoch(s), val/acc "));
  CHECK(fs::exists(sweep / "1" / "checkpoints" / "last.ckpt"));  // the checkpoint is kept
  CsvTable table = read_csv(sweep / "sweep_summary.csv");
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[0][9] == "10");
  int total_epochs = 0;
  for (const auto& row : table.rows) total_epochs += std::stoi(row[9]);
  CHECK(total_epochs < 30);  // fewer than the full grid's 3 x 10
  CHECK(std::stoi(table.rows[1][9]) < 10);
  CHECK(contains(read_file(sweep / "sweep_summary.md"), "Best job: #0 "));
  // A resumed ASHA sweep does not run stopped jobs again.
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "3 of 3 jobs already ended, 0 to run"));
}

TEST_CASE("sweep: SIGTERM to the sweep stops its jobs with a checkpoint; trainer sweep resume finishes them") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  bool signalled = false;
  auto stopped = run_and_signal(
      sweep_command({"data.num_samples=1024", "trainer.max_epochs=12", "hydra/launcher=local",
                     "hydra.launcher.n_jobs=2", "seed=1,2,3", "hydra.sweep.dir=sweep"}),
      dir.path(),
      [&] {
        std::error_code ec;
        return fs::exists(sweep / "0" / "checkpoints" / "last.ckpt", ec) && status_of(sweep, 0) == "running";
      },
      SIGTERM, &signalled);
  INFO(stopped.err);
  REQUIRE(signalled);
  CHECK(stopped.exit_code == 130);
  CHECK(contains(stopped.err, "resume with: trainer sweep resume " + fs::canonical(sweep).string()));
  // The running jobs ended before the sweep did; job 2 never started.
  CHECK(status_of(sweep, 0) == "interrupted");
  CHECK(contains(read_file(sweep / ".sweep" / "status" / "0.yaml"), "checkpoint was written"));
  CHECK_FALSE(fs::exists(sweep / ".sweep" / "status" / "2.yaml"));
  CHECK(contains(read_file(sweep / "sweep_summary.md"), "interrupted"));

  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "#0 started (resuming from last.ckpt)"));
  for (int job : {0, 1, 2}) CHECK(status_of(sweep, job) == "done");
}

// Job processes are forks of the sweep process (engine loaded once, no exec): a job must compute
// exactly what a fresh `trainer fit` process computes with the same overrides.
TEST_CASE("sweep: a job forked from the sweep process ends with the same weights as a plain run") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> settings = {"data.num_samples=1024", "trainer.max_epochs=2",
                                             "trainer.deterministic=true"};
  std::vector<std::string> sweep_args = sweep_command(settings);
  // The basic launcher: each job has every core, as the plain run has (same thread count).
  sweep_args.insert(sweep_args.end(), {"seed=5,6", "hydra.sweep.dir=sweep"});
  auto swept = run_process(sweep_args, dir.path());
  INFO(swept.err);
  REQUIRE(swept.exit_code == 0);
  CHECK(contains(swept.err, "each forked from this process with the engine loaded"));

  std::vector<std::string> single = {TRAINER_BINARY,       "fit",    "data=synthetic",
                                     "data.num_workers=0", "seed=6", "hydra.run.dir=single"};
  single.insert(single.end(), settings.begin(), settings.end());
  auto plain = run_process(single, dir.path());
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);

  auto weights = [&](const std::string& run) {
    const fs::path path = fs::path(dir.path()) / run;
    auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=" + path.string(),
                                 "export_path=" + (path / "final.safetensors").string()});
    INFO(exported.err);
    REQUIRE(exported.exit_code == 0);
    return read_file(path / "final.safetensors");
  };
  const std::string from_sweep = weights("sweep/1");
  CHECK(from_sweep.size() > 900000);  // 235,146 float32 parameters
  CHECK((from_sweep == weights("single")));
  CHECK((from_sweep != weights("sweep/0")));  // seed 5 differs: the comparison can fail
}

TEST_CASE("sweep: --help explains resume and summary; words after the directory are refused, nothing runs") {
  TempDir dir;
  for (const std::vector<std::string>& help : std::vector<std::vector<std::string>>{
           {"sweep", "--help"}, {"sweep", "-h"}, {"sweep", "resume", "--help"}, {"sweep", "summary", "--help"}}) {
    std::vector<std::string> argv = {TRAINER_BINARY};
    argv.insert(argv.end(), help.begin(), help.end());
    auto result = run_process(argv, dir.path());
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "Usage: trainer sweep resume DIR"));
    CHECK(contains(result.out, "summary  print the sweep's summary table"));
  }
  struct Case {
    std::vector<std::string> args;
    std::string given;
  };
  for (const Case& c : std::vector<Case>{{{"resume", "sweep", "--cfg", "job"}, "'--cfg job'"},
                                         {{"resume", "sweep", "seed=5"}, "'seed=5'"},
                                         {{"summary", "sweep", "other"}, "'other'"}}) {
    std::vector<std::string> argv = {TRAINER_BINARY, "sweep"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto result = run_process(argv, dir.path());
    INFO(result.err);
    CHECK(result.exit_code == 1);
    check_clean_error(result);
    CHECK(contains(result.err, "Error: command line: trainer sweep " + c.args.front() +
                                   " takes a sweep directory and nothing else, but was also given " + c.given));
    CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep"));
  }
}

TEST_CASE(
    "sweep: a job that failed after a checkpoint goes on from it, and a resume from elsewhere runs the jobs "
    "where the sweep was planned") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const fs::path data = "/usr/share/datasets/fashion-mnist";  // configs/paths/default.yaml
  if (!fs::exists(data / "train-images-idx3-ubyte.gz")) {
    return skip_test("Fashion-MNIST is not installed (dataset-fashion-mnist)", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  const fs::path sweep = root / "sweep";
  fs::create_directory_symlink(data, root / "fm");  // the data, by a path relative to the sweep's start
  bool signalled = false;
  auto stopped = run_and_signal(
      {TRAINER_BINARY, "fit", "-m", "seed=1,2", "data.root=fm", "trainer.max_epochs=12",
       "trainer.limit_train_batches=100", "trainer.limit_val_batches=2", "trainer.limit_test_batches=2",
       "hydra.sweep.dir=sweep"},
      root.string(),
      [&] {
        std::error_code ec;
        return fs::exists(sweep / "0" / "checkpoints" / "last.ckpt", ec) && status_of(sweep, 0) == "running";
      },
      SIGTERM, &signalled);
  INFO(stopped.err);
  REQUIRE(signalled);
  REQUIRE(status_of(sweep, 0) == "interrupted");

  // The data is gone for a while: the resumed job fails, its checkpoint stays.
  fs::remove(root / "fm");
  auto missing = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, root.string());
  INFO(missing.err);
  CHECK(missing.exit_code == 1);
  REQUIRE(status_of(sweep, 0) == "failed");
  REQUIRE(fs::exists(sweep / "0" / "checkpoints" / "last.ckpt"));

  // Back again, resumed from another directory: job 0 reads fm where the sweep started and goes
  // on from its last.ckpt (a new start replaced it and moved its rows to metrics.csv.1).
  fs::create_directory_symlink(data, root / "fm");
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, "/");
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "sweep resume: in " + fs::canonical(root).string() + ", where the sweep was planned"));
  CHECK(contains(resumed.err, "#0 started (resuming from last.ckpt)"));
  for (int job : {0, 1}) CHECK(status_of(sweep, job) == "done");
  CHECK_FALSE(fs::exists(sweep / "0" / "metrics.csv.1"));
}

// A disk that filled while last.ckpt was written leaves the epoch's other checkpoint: the failed
// job goes on from the newest one (it started again from scratch, replacing it, and said its
// earlier attempt "left no checkpoint").
TEST_CASE("sweep: a failed job without last.ckpt goes on from its newest checkpoint, not from scratch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const fs::path sweep = root / "sweep";
  auto ran = run_process(sweep_command({"data.num_samples=512", "trainer.max_epochs=3", "test_after_fit=false",
                                        "callbacks.model_checkpoint.save_top_k=2", "seed=1", "hydra.sweep.dir=sweep"}),
                         root.string());
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  // The state the full disk left: last.ckpt not written, the job failed.
  const fs::path checkpoints = sweep / "0" / "checkpoints";
  REQUIRE(fs::remove(checkpoints / "last.ckpt"));
  std::string newest;
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    if (newest.empty() || fs::last_write_time(entry.path()) > fs::last_write_time(checkpoints / newest)) {
      newest = entry.path().filename().string();
    }
  }
  REQUIRE(!newest.empty());
  const fs::path status_file = sweep / ".sweep" / "status" / "0.yaml";
  std::string status = read_file(status_file);
  REQUIRE(status.find("status: done") != std::string::npos);
  status.replace(status.find("status: done"), 12, "status: failed");
  write_text(status_file, status);

  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, root.string());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "#0 started (resuming from " + newest + ")"));
  CHECK(status_of(sweep, 0) == "done");
  CHECK(fs::exists(checkpoints / newest));
  CHECK(contains(read_file(status_file), "resumed: true"));
  CHECK_FALSE(fs::exists(sweep / "0" / "metrics.csv.1"));
  CHECK_FALSE(contains(resumed.err, "left no checkpoint"));
}

// Jobs that fail on a full disk cannot write their error, and the sweep cannot write its summary:
// the sweep still says that they failed, why their stderr.log is empty, and how to resume (only
// the summary's failure was said).
TEST_CASE("sweep: on a full disk the sweep says its jobs failed and why their logs are empty") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const SmallDisk disk(root / "disk", 16);
  if (!disk.mounted()) return skip_test("cannot mount a tmpfs here (not root)", Skip::unexpected_in_ci);
  const fs::path sweep = root / "disk" / "sweep";
  auto ran = run_process(
      sweep_command({"data.num_samples=256", "trainer.max_epochs=1", "test_after_fit=false", "seed=1,2",
                     "hydra/launcher=local", "hydra.launcher.n_jobs=2", "hydra.sweep.dir=" + sweep.string()}),
      root.string());
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  // Both jobs to run again (failed, their checkpoints gone), on a disk with no room left.
  for (int job : {0, 1}) {
    fs::remove_all(sweep / std::to_string(job));
    const fs::path status_file = sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml");
    std::string status = read_file(status_file);
    status.replace(status.find("status: done"), 12, "status: failed");
    write_text(status_file, status);
  }
  fs::remove(sweep / "sweep_summary.csv");
  fs::remove(sweep / "sweep_summary.md");
  disk.fill_leaving(0);
  auto full = run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, root.string());
  disk.empty_filler();
  INFO(full.err);
  CHECK(full.exit_code == 1);
  check_no_crash(full);
  CHECK(contains(full.err, "the disk is likely full, and the job's error could not be written"));
  CHECK(contains(full.err, "[sweep] warning: summary not written: "));
  CHECK(contains(full.err, "2 of 2 jobs "));
  CHECK(contains(full.err, "`trainer sweep resume " + sweep.string() +
                               "` re-runs failed and remaining jobs (and "
                               "writes the summary), once the disk has room."));
  // With room again, the resume finishes them.
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, root.string());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(fs::exists(sweep / "sweep_summary.md"));
}

TEST_CASE("sweep: a second Ctrl-C kills a job that does not stop, and the sweep resumes it from its checkpoint") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  pid_t job = 0;
  const auto started = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::steady_clock::now() - started; };
  std::chrono::steady_clock::duration first_at{};
  size_t sent = 0;
  // Job 0 hangs (SIGSTOP stands for a deadlock) once it has a checkpoint; then Ctrl-C twice.
  const ProcessResult result = run_and_signal_each(
      sweep_command({"data.num_samples=1024", "trainer.max_epochs=40", "seed=1,2", "hydra.sweep.dir=sweep"}),
      dir.path(),
      {{[&] {
          std::error_code ec;
          if (!fs::exists(sweep / "0" / "checkpoints" / "last.ckpt", ec) || status_of(sweep, 0) != "running") {
            return false;
          }
          const std::string text = read_file(sweep / ".sweep" / "status" / "0.yaml");
          job = static_cast<pid_t>(std::stol(text.substr(text.find("pid: ") + 5)));
          ::kill(job, SIGSTOP);
          first_at = since();
          return true;
        },
        SIGINT},
       {[&] { return since() - first_at > std::chrono::seconds(1); }, SIGINT}},
      &sent, std::chrono::seconds(120));
  INFO(result.err);
  REQUIRE(sent == 2);
  CHECK(result.exit_code == 130);
  CHECK(contains(result.err, "[sweep] interrupted again: killing the 1 running job(s)"));
  CHECK(status_of(sweep, 0) == "interrupted");
  CHECK(since() < std::chrono::seconds(60));  // it waited for the stopped job for good
  // The sweep's own SIGKILL is named as such, not as the out-of-memory killer or a kill command.
  CHECK(contains(read_file(sweep / "sweep_summary.md"),
                 "- job 0 (interrupted): killed by the sweep on its second interrupt (Ctrl-C or SIGTERM)"));
  CHECK_FALSE(contains(result.err, "out-of-memory"));

  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  // No job had ended: the resume still says what it does.
  CHECK(contains(resumed.err, "/sweep: 0 of 2 jobs already ended, 2 to run (1 continues from its checkpoint)"));
  CHECK(contains(resumed.err, "#0 started (resuming from last.ckpt)"));
  CHECK(status_of(sweep, 0) == "done");
}

TEST_CASE("sweep: a resumed job that cannot write its status is reported as this attempt ended, not the last") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto first = run_process(sweep_command({"data.num_samples=256", "trainer.max_epochs=1", "model.input_size=5",
                                          "seed=1", "hydra.sweep.dir=sweep"}),
                           dir.path());
  INFO(first.err);
  REQUIRE(status_of(sweep, 0) == "failed");
  // An immutable status file stands for a full disk: the resumed job cannot replace it.
  const fs::path status = sweep / ".sweep" / "status" / "0.yaml";
  if (run_process({"/usr/bin/chattr", "+i", status.string()}).exit_code != 0) {
    return skip_test("chattr +i is not available here (not root, or the file system lacks it)", Skip::expected);
  }
  struct Mutable {
    fs::path path;
    ~Mutable() { run_process({"/usr/bin/chattr", "-i", path.string()}); }
  } restore{status};
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 1);
  check_no_crash(resumed);
  // The last attempt's outcome (its error about input_size) is not this one's.
  CHECK(contains(resumed.err, "#0 failed in "));
  CHECK(contains(resumed.err, "the job process exited with code 1 before writing its status; see " +
                                  (sweep / "0" / "stderr.log").string()));
  CHECK(contains(resumed.err, "[sweep] #0: cannot record how it ended:"));
}

TEST_CASE("sweep: a launcher or sweeper setting it does not read is refused before anything runs, as in Hydra") {
  TempDir dir;
  auto local = run_process({TRAINER_BINARY, "fit", "-m", "hydra/launcher=local", "+hydra.launcher.n_job=1", "seed=1,2",
                            "hydra.sweep.dir=sweep"},
                           dir.path());
  check_clean_error(local);
  CHECK(contains(local.err,
                 "hydra.launcher.n_job: 'n_job' is not a setting of the local launcher (its settings: "
                 "n_jobs, gpus_per_job, fail_fast); it would change nothing, and Hydra refuses it too. "
                 "Did you mean hydra.launcher.n_jobs?"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep"));

  auto basic = run_process(
      {TRAINER_BINARY, "fit", "-m", "+hydra.launcher.failfast=true", "seed=1,2", "hydra.sweep.dir=sweep"}, dir.path());
  check_clean_error(basic);
  CHECK(contains(basic.err, "'failfast' is not a setting of the basic launcher (its settings: fail_fast)"));
  CHECK(contains(basic.err, "Did you mean hydra.launcher.fail_fast?"));

  auto sweeper = run_process({TRAINER_BINARY, "fit", "-m", "hydra/sweeper=random", "+hydra.sweeper.num_sample=3",
                              "optimizer.lr=interval(0.001,0.01)", "--cfg", "job"},
                             dir.path());
  check_clean_error(sweeper);
  CHECK(contains(sweeper.err,
                 "'num_sample' is not a setting of the random sweeper (its settings: num_samples, seed, "
                 "params)"));

  // hydra.launcher=slurm (a dot for the group's slash) is a value where the launcher's settings go:
  // Hydra refuses it, and the sweep would have run on this machine with the default launcher.
  for (const auto& [given, group] : {std::pair<std::string, std::string>{"hydra.launcher=slurm", "hydra/launcher"},
                                     {"hydra.sweeper=optuna", "hydra/sweeper"}}) {
    auto dotted = run_process({TRAINER_BINARY, "fit", "-m", given, "seed=1,2", "hydra.sweep.dir=sweep"}, dir.path());
    INFO(given);
    check_clean_error(dotted);
    const std::string value = given.substr(given.find('=') + 1);
    CHECK(contains(dotted.err, "is '" + value + "', a value where Hydra takes the plugin's settings"));
    CHECK(contains(dotted.err, "a slash rather than a dot: " + group + "=" + value));
    CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep" / "0"));
  }

  // ASHA without num_samples runs the grid: interval() needs a number of jobs.
  auto asha = run_process(
      {TRAINER_BINARY, "fit", "-m", "hydra/sweeper=asha", "optimizer.lr=interval(0.001,0.01)", "--cfg", "job"},
      dir.path());
  check_clean_error(asha);
  CHECK(contains(asha.err, "the ASHA sweeper draws from it only with a number of jobs"));
  CHECK(contains(asha.err, "set hydra.sweeper.num_samples=N"));
}

TEST_CASE("sweep: a finished job whose directory was deleted runs again on resume; the csv summary keeps every digit") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto first = run_process(
      sweep_command({"data.num_samples=256", "trainer.max_epochs=1", "seed=1,2", "hydra.sweep.dir=sweep"}), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  // sweep_summary.csv holds metrics.csv's value as it is written (it rounded to 6 digits).
  const CsvTable table = read_csv(sweep / "sweep_summary.csv");
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0][6] == read_csv(sweep / "0" / "metrics.csv").last("val/acc"));

  fs::remove_all(sweep / "1");
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", "sweep"}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "[sweep] #1 ended done before, but its directory " + (sweep / "1").string() +
                                  " is gone: it runs again"));
  CHECK(fs::exists(sweep / "1" / "metrics.csv"));
  CHECK(contains(read_file(sweep / "sweep_summary.md"), "2 jobs: 2 done"));
}

TEST_CASE("sweep: a sweep into a single run's directory is refused and the run still resumes; no csv logger warns") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> small = {"data=synthetic", "data.num_workers=0", "data.num_samples=256",
                                          "trainer.max_epochs=1"};
  std::vector<std::string> single = {TRAINER_BINARY, "fit", "hydra.run.dir=run"};
  single.insert(single.end(), small.begin(), small.end());
  auto run = run_process(single, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto into_run = run_process(sweep_command({"seed=1,2", "hydra.sweep.dir=run"}), dir.path());
  check_clean_error(into_run);
  CHECK(contains(into_run.err, "hydra.sweep.dir=" + (fs::path(dir.path()) / "run").string() +
                                   ": this is a single run's directory (it holds .hydra/)"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / "0"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / ".sweep"));
  single.insert(single.end(), {"ckpt_path=last", "trainer.max_epochs=2"});
  auto resumed = run_process(single, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);

  // Without a csv logger the summary has nothing to read: said before any job runs.
  auto no_csv = run_process(sweep_command({"data.num_samples=256", "trainer.max_epochs=1", "logger=tensorboard",
                                           "seed=1,2", "hydra.sweep.dir=quiet"}),
                            dir.path());
  INFO(no_csv.err);
  CHECK(no_csv.exit_code == 0);
  CHECK(contains(no_csv.err, "no csv logger in this sweep (logger.csv is not set)"));
  CHECK(no_csv.err.find("no csv logger") < no_csv.err.find("#0 started"));
}

// A job's own warnings (here no validation) reached only its trainer.log: the console showed
// "done" lines and a summary with no best job "yet". Each is said once as the first job that gave
// it ends; one the sweep said at planning is not repeated.
TEST_CASE("sweep: a job's warnings are said on the sweep's console once, as the job ends") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(sweep_command({"data.num_samples=256", "trainer.max_epochs=1", "test_after_fit=false",
                                           "trainer.limit_val_batches=0", "callbacks.model_checkpoint=null", "seed=1,2",
                                           "hydra.sweep.dir=sweep"}),
                            dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 0);
  const std::string said = "[sweep] #0 warned: no validation in this fit: trainer.limit_val_batches leaves no batch";
  CHECK(contains(result.err, said));
  CHECK_FALSE(contains(result.err, "[sweep] #1 warned: no validation"));  // once
  CHECK(contains(result.err, "[every job] callbacks.model_checkpoint is null"));
  CHECK_FALSE(contains(result.err, "warned: callbacks.model_checkpoint is null"));  // said at planning
  CHECK(result.err.find(said) > result.err.find("[sweep] #0 done"));
  CHECK(contains(read_file(fs::path(dir.path()) / "sweep" / "sweep_summary.md"),
                 "Best job: none (no job logged val/loss; see their trainer.log)."));
}

// The same sweep command run again after a config file was edited ran the jobs' planned configs (the
// failed jobs failed again on the old data path), without a word.
TEST_CASE("sweep: the same command after a config file changed is refused, naming what changed") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path extra = fs::path(dir.path()) / "extra" / "data";
  fs::create_directories(extra);
  write_text(extra / "small.yaml", "defaults:\n  - synthetic\nnum_samples: 256\n");
  const std::vector<std::string> command = {TRAINER_BINARY,
                                            "fit",
                                            "-m",
                                            "--config-dir",
                                            "extra",
                                            "data=small",
                                            "trainer.max_epochs=1",
                                            "test_after_fit=false",
                                            "seed=1,2",
                                            "hydra.sweep.dir=sweep"};
  auto first = run_process(command, dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  write_text(extra / "small.yaml", "defaults:\n  - synthetic\nnum_samples: 128\n");
  auto again = run_process(command, dir.path());
  INFO(again.err);
  CHECK(again.exit_code == 1);
  check_no_crash(again);
  CHECK(contains(again.err, "planned with other config files: its jobs run the configs they were planned with"));
  CHECK(contains(again.err, "job 0: data.num_samples: 256 when planned, 128 now"));
  CHECK(contains(again.err, "job 1: data.num_samples: 256 when planned, 128 now"));
  CHECK(contains(again.err, "Resume it as planned with trainer sweep resume "));
  // Unchanged, the same command resumes (nothing left to run).
  write_text(extra / "small.yaml", "defaults:\n  - synthetic\nnum_samples: 256\n");
  auto same = run_process(command, dir.path());
  INFO(same.err);
  CHECK(same.exit_code == 0);
}
