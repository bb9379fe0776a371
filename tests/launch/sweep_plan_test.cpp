// The sweep's plan on disk: job records and plan.yaml read back as written; plan differences.
#include "trainer/launch/sweep_plan.h"

#include <stdlib.h>

#include <filesystem>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;
using trainer::config::Node;

namespace {

SweepPlan two_jobs(const std::string& dir) {
  SweepPlan plan;
  plan.sweep_dir = dir;
  plan.command = "fit";
  plan.jobs = {{0, {"optimizer.lr=0.1", "hydra.launcher.n_jobs=2"}, dir + "/0"},
               {1, {"optimizer.lr=0.01", "hydra.launcher.n_jobs=2"}, dir + "/1"}};
  return plan;
}

Node config_for(int number) {
  return trainer::config::load_yaml_string(
             "optimizer:\n  lr: 0.1\nckpt_path: null\nout: ${hydra:runtime.output_dir}\nhydra:\n  job:\n    num: " +
                 std::to_string(number) +
                 "\n  launcher:\n    _target_: trainer.launcher.LocalLauncher\n    n_jobs: 2\n  sweeper:\n    "
                 "_target_: x.BasicSweeper\n",
             "test")
      .root;
}

}  // namespace

TEST_CASE("job records and the plan index read back as written") {
  TempDir dir("trainer-sweep-plan");
  SweepPlan plan = two_jobs(dir.path);
  CHECK_FALSE(has_sweep_plan(dir.path));
  for (const PlannedJob& job : plan.jobs) write_job_record(dir.path, JobRecord{"fit", job, config_for(job.number)});
  CHECK_FALSE(has_sweep_plan(dir.path));  // the index comes last
  write_plan_index(plan, config_for(0));
  REQUIRE(has_sweep_plan(dir.path));
  CHECK(fs::exists(fs::path(dir.path) / "multirun.yaml"));

  SweepPlan read = read_sweep_plan(dir.path);
  CHECK(read.sweep_dir == dir.path);
  CHECK(read.command == "fit");
  REQUIRE(read.jobs.size() == 2);
  CHECK(read.jobs[1].number == 1);
  CHECK(read.jobs[1].overrides == plan.jobs[1].overrides);
  CHECK(read.jobs[1].run_dir == dir.path + "/1");
  CHECK(read.launcher.find("n_jobs")->as_int() == 2);
  CHECK(read.sweeper.find("_target_")->as_string() == "x.BasicSweeper");
  CHECK(plan_differences(read, plan).empty());

  JobRecord record = read_job_record(dir.path, 1);
  CHECK(record.command == "fit");
  CHECK(record.job.overrides == plan.jobs[1].overrides);
  CHECK(record.config == config_for(1));  // unresolved, hydra node included
  CHECK(record.config.find("out")->as_string() == "${hydra:runtime.output_dir}");
}

TEST_CASE("plan differences name each changed, new and dropped job") {
  TempDir dir("trainer-sweep-plan");
  SweepPlan before = two_jobs(dir.path);
  SweepPlan now = before;
  CHECK(plan_differences(before, now).empty());
  now.jobs[0].overrides[1] = "hydra.launcher.n_jobs=1";  // launcher settings may change on resume
  CHECK(plan_differences(before, now).empty());
  now.jobs[1].overrides[0] = "optimizer.lr=0.5";
  now.jobs.push_back({2, {"optimizer.lr=0.001"}, dir.path + "/2"});
  auto lines = plan_differences(before, now);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "job 1: optimizer.lr=0.01 on disk, optimizer.lr=0.5 now");
  CHECK(lines[1] == "job 2 (optimizer.lr=0.001) is new");
  now = before;
  now.jobs.pop_back();
  now.command = "test";
  lines = plan_differences(before, now);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "command: fit on disk, test now");
  CHECK(lines[1] == "job 1 (optimizer.lr=0.01) is on disk but no longer planned");
}

TEST_CASE("reading a directory without a plan says what to do") {
  TempDir dir("trainer-sweep-plan");
  try {
    read_sweep_plan(dir.path);
    FAIL("no error");
  } catch (const trainer::Error& error) {
    CHECK(std::string(error.what()).find("plan.yaml") != std::string::npos);
  }
  CHECK_THROWS_AS(read_job_record(dir.path, 3), trainer::Error);
}

TEST_CASE("task overrides leave Hydra's own out") {
  CHECK(task_overrides_text({"a=1", "hydra.launcher.n_jobs=2", "hydra/launcher=local", "b=2"}) == "a=1 b=2");
}
