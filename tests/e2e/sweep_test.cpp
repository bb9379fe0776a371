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
  CHECK(contains(result.err, "#1 stopped early by ASHA after 1 epoch(s)"));
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
