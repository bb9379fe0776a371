// The sweep summary: metrics.csv read as the CSV logger writes it, the table and the best job.
#include "trainer/launch/sweep_summary.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/launch/job_status.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// As the CSV logger writes it: a row per logging call, metrics empty where not logged.
const char* kMetrics =
    "epoch,step,lr-Adam,train/loss_epoch,val/loss,val/acc,test/acc\n"
    "0,0,0.001,,,,\n"
    "0,4,,2.19,1.85,0.82,\n"
    "1,4,0.001,,,,\n"
    "1,8,,1.65,1.21,0.95,\n"
    "2,12,,1.60,1.30,0.90,\n"
    ",,,,,,0.97\n";

void finished(const std::string& dir, int number, JobState state, double seconds) {
  JobStatus status;
  status.state = state;
  status.start_time = iso_time(1700000000);
  status.end_time = iso_time(1700000000 + seconds);
  status.duration_s = seconds;
  if (state == JobState::kFailed) status.error = "boom | bad";
  write_job_status(dir, number, status);
}

}  // namespace

TEST_CASE("a metric's history: best by mode, last, epochs") {
  TempDir dir("trainer-sweep-summary");
  const fs::path csv = fs::path(dir.path) / "metrics.csv";
  write(csv, kMetrics);
  MetricHistory acc = read_metric_history(csv.string(), "val/acc", "max");
  REQUIRE(acc.points.size() == 3);
  CHECK(acc.points[1] == std::make_pair(1.0, 0.95));
  CHECK(*acc.best == 0.95);
  CHECK(*acc.last == 0.90);
  CHECK(acc.epochs == 3);
  MetricHistory loss = read_metric_history(csv.string(), "val/loss", "min");
  CHECK(*loss.best == 1.21);
  CHECK(*loss.last == 1.30);
  CHECK_FALSE(read_metric_history(csv.string(), "val/f1", "max").best.has_value());
  CHECK(read_metric_history((fs::path(dir.path) / "none.csv").string(), "val/acc", "max").points.empty());
}

TEST_CASE("the summary lists every job and names the best") {
  TempDir dir("trainer-sweep-summary");
  SweepPlan plan;
  plan.sweep_dir = dir.path;
  plan.command = "fit";
  plan.jobs = {{0, {"optimizer.lr=0.1", "hydra.launcher.n_jobs=2"}, dir.path + "/0"},
               {1, {"optimizer.lr=0.01"}, dir.path + "/1"},
               {2, {"optimizer.lr=x,y"}, dir.path + "/2"},
               {3, {"optimizer.lr=0.5"}, dir.path + "/3"}};
  write(fs::path(dir.path) / "multirun.yaml",
        "callbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\nhydra: {}\n");
  write(fs::path(dir.path) / "0" / "metrics.csv", kMetrics);
  write(fs::path(dir.path) / "1" / "metrics.csv", "epoch,val/acc\n0,0.5\n1,0.97\n");
  finished(dir.path, 0, JobState::kDone, 12.25);
  finished(dir.path, 1, JobState::kStoppedEarly, 3);
  finished(dir.path, 2, JobState::kFailed, 1);

  SweepSummary summary = write_sweep_summary(plan);
  CHECK(summary.metric == "val/acc");
  CHECK(summary.mode == "max");
  REQUIRE(summary.best == 1);
  std::ifstream csv_in(fs::path(dir.path) / "sweep_summary.csv");
  std::string csv((std::istreambuf_iterator<char>(csv_in)), std::istreambuf_iterator<char>());
  CHECK(csv ==
        "job,status,overrides,metric,mode,best,final,test/acc,test/loss,epochs,duration_s\n"
        "0,done,optimizer.lr=0.1,val/acc,max,0.95,0.9,0.97,,3,12.2\n"
        "1,stopped_early,optimizer.lr=0.01,val/acc,max,0.97,0.97,,,2,3.0\n"
        "2,failed,\"optimizer.lr=x,y\",val/acc,max,,,,,0,1.0\n"
        "3,pending,optimizer.lr=0.5,val/acc,max,,,,,0,0.0\n");
  std::ifstream md_in(fs::path(dir.path) / "sweep_summary.md");
  std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  CHECK(md.find("4 jobs: 1 done, 1 stopped_early, 1 failed, 1 pending") != std::string::npos);
  CHECK(md.find("| 0 | done | optimizer.lr=0.1 | 0.95 | 0.9 | 0.97 |  | 3 | 12.2 |") != std::string::npos);
  CHECK(md.find("Best job: #1 (val/acc max 0.97): optimizer.lr=0.01") != std::string::npos);
  CHECK(md.find("- job 2: boom \\| bad") != std::string::npos);
  // The plot of the jobs with a history: a PNG file (its drawing is tested with write_metric_plot).
  std::ifstream png(fs::path(dir.path) / "sweep_metrics.png", std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  CHECK(std::string(magic + 1, 3) == "PNG");
}

TEST_CASE("with no monitor in the config the summary reports val/loss, lower is better") {
  TempDir dir("trainer-sweep-summary");
  write(fs::path(dir.path) / "multirun.yaml", "hydra: {}\n");
  CHECK(sweep_monitor(dir.path) == std::make_pair(std::string("val/loss"), std::string("min")));
}

TEST_CASE("a regression sweep reports what its jobs watch: the loss for an accuracy monitor, and test/r2") {
  TempDir dir("trainer-sweep-summary");
  SweepPlan plan;
  plan.sweep_dir = dir.path;
  plan.command = "fit";
  plan.jobs = {{0, {"model.hidden_sizes=[8]"}, dir.path + "/0"}, {1, {"model.hidden_sizes=[64]"}, dir.path + "/1"}};
  write(fs::path(dir.path) / "multirun.yaml",
        "data:\n  name: csv\n  task: regression\ncallbacks:\n  model_checkpoint:\n    monitor: val/acc\n"
        "    mode: max\nhydra: {}\n");
  write(fs::path(dir.path) / "0" / "metrics.csv",
        "epoch,val/loss,val/r2,test/r2,test/loss\n0,0.9,0.1,,\n1,0.7,0.3,,\n,,,0.25,0.75\n");
  write(fs::path(dir.path) / "1" / "metrics.csv",
        "epoch,val/loss,val/r2,test/r2,test/loss\n0,0.6,0.4,,\n,,,0.38,0.62\n");
  finished(dir.path, 0, JobState::kDone, 2);
  finished(dir.path, 1, JobState::kDone, 2);
  const SweepSummary summary = write_sweep_summary(plan);
  CHECK(summary.metric == "val/loss");
  CHECK(summary.mode == "min");
  CHECK(summary.best == 1);
  CHECK(summary_csv(summary) ==
        "job,status,overrides,metric,mode,best,final,test/r2,test/loss,epochs,duration_s\n"
        "0,done,model.hidden_sizes=[8],val/loss,min,0.7,0.7,0.25,0.75,2,2.0\n"
        "1,done,model.hidden_sizes=[64],val/loss,min,0.6,0.6,0.38,0.62,1,2.0\n");
  // A monitor the regression logs stands as it is.
  write(fs::path(dir.path) / "multirun.yaml",
        "data:\n  task: regression\ncallbacks:\n  model_checkpoint:\n    monitor: val/r2\n    mode: max\n");
  CHECK(sweep_monitor(dir.path) == std::make_pair(std::string("val/r2"), std::string("max")));
  // A classification sweep keeps val/acc and test/acc.
  write(fs::path(dir.path) / "multirun.yaml",
        "data:\n  task: classification\ncallbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\n");
  CHECK(sweep_monitor(dir.path) == std::make_pair(std::string("val/acc"), std::string("max")));
  CHECK(sweep_test_score(dir.path) == "test/acc");
}

TEST_CASE("a running, interrupted or failed job is never named best, however good its metric so far") {
  TempDir dir("trainer-sweep-summary");
  SweepPlan plan;
  plan.sweep_dir = dir.path;
  plan.command = "fit";
  plan.jobs = {{0, {"optimizer.lr=0.1"}, dir.path + "/0"},
               {1, {"optimizer.lr=0.01"}, dir.path + "/1"},
               {2, {"optimizer.lr=0.5"}, dir.path + "/2"},
               {3, {"optimizer.lr=0.9"}, dir.path + "/3"}};
  write(fs::path(dir.path) / "multirun.yaml",
        "callbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\nhydra: {}\n");
  write(fs::path(dir.path) / "0" / "metrics.csv", "epoch,val/acc,test/acc,test/loss\n0,0.6,,\n1,0.7,,\n,,0.69,0.8\n");
  write(fs::path(dir.path) / "1" / "metrics.csv", "epoch,val/acc\n0,0.99\n");
  write(fs::path(dir.path) / "2" / "metrics.csv", "epoch,val/acc\n0,0.98\n");
  write(fs::path(dir.path) / "3" / "metrics.csv", "epoch,val/acc\n0,0.97\n");
  finished(dir.path, 0, JobState::kDone, 5);
  finished(dir.path, 1, JobState::kInterrupted, 1);
  finished(dir.path, 2, JobState::kFailed, 1);
  finished(dir.path, 3, JobState::kRunning, 1);
  SweepSummary summary = write_sweep_summary(plan);
  REQUIRE(summary.best == 0);
  std::ifstream md_in(fs::path(dir.path) / "sweep_summary.md");
  std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  CHECK(md.find("Best job: #0 (val/acc max 0.7): optimizer.lr=0.1") != std::string::npos);
  CHECK(md.find("| 0 | done | optimizer.lr=0.1 | 0.7 | 0.7 | 0.69 | 0.8 |") != std::string::npos);
  // With no job ended with a value, an interrupted one's may come yet: "none yet", not "no job logged".
  fs::remove(fs::path(dir.path) / "0" / "metrics.csv");
  finished(dir.path, 3, JobState::kFailed, 1);
  write_sweep_summary(plan);
  std::ifstream again_in(fs::path(dir.path) / "sweep_summary.md");
  md.assign((std::istreambuf_iterator<char>(again_in)), std::istreambuf_iterator<char>());
  CHECK(md.find("Best job: none yet (no job has ended with a value of val/acc).") != std::string::npos);
}

TEST_CASE("an Optuna study's best job is the one its objective judged best: the final value, or a _best's best") {
  TempDir dir("trainer-sweep-summary");
  SweepPlan plan;
  plan.sweep_dir = dir.path;
  plan.command = "fit";
  plan.jobs = {{0, {"optimizer.lr=0.1"}, dir.path + "/0"}, {1, {"optimizer.lr=0.01"}, dir.path + "/1"}};
  // Job 0 peaked at 0.9 and ended at 0.6; job 1 ended at its best, 0.8.
  write(fs::path(dir.path) / "0" / "metrics.csv", "epoch,val/acc\n0,0.5\n1,0.9\n2,0.6\n");
  write(fs::path(dir.path) / "1" / "metrics.csv", "epoch,val/acc\n0,0.7\n1,0.8\n");
  finished(dir.path, 0, JobState::kDone, 2);
  finished(dir.path, 1, JobState::kDone, 2);
  const auto study = [&](const std::string& objective) {
    write(fs::path(dir.path) / "multirun.yaml",
          "optimized_metric: " + objective +
              "\ncallbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\nhydra:\n  sweeper:\n"
              "    _target_: hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper\n"
              "    direction: maximize\n    n_trials: 2\n");
    return write_sweep_summary(plan);
  };
  // The study's objective val/acc is each trial's last value: job 1 (0.8) beat job 0 (0.6).
  SweepSummary summary = study("val/acc");
  CHECK(summary.best_by == BestBy::kFinalValue);
  CHECK(summary.best == 1);
  CHECK(best_job_text(summary) == "#1 (val/acc max, final 0.8): optimizer.lr=0.01");
  std::ifstream md_in(fs::path(dir.path) / "sweep_summary.md");
  std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  CHECK(md.find("Best job: #1 (val/acc max, final 0.8): optimizer.lr=0.01") != std::string::npos);
  CHECK(md.find("judges each trial by its final val/acc") != std::string::npos);
  // The template's val/acc_best is the best over the epochs: job 0 (0.9).
  summary = study("val/acc_best");
  CHECK(summary.best_by == BestBy::kBestValue);
  CHECK(summary.best == 0);
  CHECK(best_job_text(summary) == "#0 (val/acc max 0.9): optimizer.lr=0.1");

  // A study stopped after 2 of its 5 trials: the 3 it never made are counted, not left out.
  write(fs::path(dir.path) / "multirun.yaml",
        "optimized_metric: val/acc\nhydra:\n  sweeper:\n"
        "    _target_: hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper\n"
        "    direction: maximize\n    n_trials: 5\n");
  summary = write_sweep_summary(plan);
  CHECK(summary.study_trials == 5);
  std::ifstream stopped_in(fs::path(dir.path) / "sweep_summary.md");
  const std::string stopped((std::istreambuf_iterator<char>(stopped_in)), std::istreambuf_iterator<char>());
  CHECK(stopped.find("2 jobs: 2 done; 3 of the study's 5 trials not started.") != std::string::npos);
}

TEST_CASE("an Optuna study's pruned trial is never its best job, as the study counts complete trials only") {
  TempDir dir("trainer-sweep-summary");
  SweepPlan plan;
  plan.sweep_dir = dir.path;
  plan.command = "fit";
  plan.jobs = {{0, {"optimizer.lr=0.1"}, dir.path + "/0"}, {1, {"optimizer.lr=0.01"}, dir.path + "/1"}};
  // Job 0 was pruned at 0.9 (a higher value than job 1's); job 1 completed at 0.8.
  write(fs::path(dir.path) / "0" / "metrics.csv", "epoch,val/acc\n0,0.9\n");
  write(fs::path(dir.path) / "1" / "metrics.csv", "epoch,val/acc\n0,0.7\n1,0.8\n");
  finished(dir.path, 0, JobState::kStoppedEarly, 1);
  finished(dir.path, 1, JobState::kDone, 2);
  const std::string optuna =
      "callbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\nhydra:\n  sweeper:\n"
      "    _target_: hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper\n"
      "    direction: maximize\n    n_trials: 2\n";
  write(fs::path(dir.path) / "multirun.yaml", "optimized_metric: val/acc\n" + optuna);
  SweepSummary summary = write_sweep_summary(plan);
  CHECK_FALSE(summary.stopped_early_ranks);
  CHECK(summary.best == 1);
  CHECK(best_job_text(summary) == "#1 (val/acc max, final 0.8): optimizer.lr=0.01");
  // With every trial pruned the study has no best trial, and the summary says why.
  finished(dir.path, 1, JobState::kStoppedEarly, 2);
  summary = write_sweep_summary(plan);
  CHECK(summary.best == -1);
  std::ifstream md_in(fs::path(dir.path) / "sweep_summary.md");
  std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  CHECK(md.find("Best job: none (every trial with a value of val/acc was pruned; the study names a complete "
                "trial only).") != std::string::npos);
  // A grid sweep's job stopped early by ASHA keeps its rank (its value is the one it reached).
  write(fs::path(dir.path) / "multirun.yaml",
        "callbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\nhydra: {}\n");
  summary = write_sweep_summary(plan);
  CHECK(summary.stopped_early_ranks);
  CHECK(summary.best == 0);
}

TEST_CASE("a finished job whose directory was deleted is pending again, said, and never best") {
  TempDir dir("trainer-sweep-summary");
  SweepPlan plan;
  plan.sweep_dir = dir.path;
  plan.command = "fit";
  plan.jobs = {{0, {"optimizer.lr=0.1"}, dir.path + "/0"}, {1, {"optimizer.lr=0.01"}, dir.path + "/1"}};
  write(fs::path(dir.path) / "multirun.yaml",
        "callbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\nhydra: {}\n");
  write(fs::path(dir.path) / "0" / "metrics.csv", "epoch,val/acc\n0,0.6\n");
  finished(dir.path, 0, JobState::kDone, 2);
  finished(dir.path, 1, JobState::kDone, 2);  // its directory 1/ does not exist
  const SweepSummary summary = write_sweep_summary(plan);
  CHECK(summary.best == 0);
  CHECK(summary.jobs[1].state == JobState::kPending);
  std::ifstream md_in(fs::path(dir.path) / "sweep_summary.md");
  std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  CHECK(md.find("2 jobs: 1 done, 1 pending") != std::string::npos);
  CHECK(md.find("- job 1 (pending): ended done, but its directory " + dir.path +
                "/1 is gone: a resume runs it again") != std::string::npos);
}
