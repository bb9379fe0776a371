// The local launcher with real child processes: a small shell script stands in for the job
// process (`<exe> sweep run-job DIR N`) and writes its status file as the real one does.
#include "trainer/launch/local_launcher.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/launch/job_status.h"
#include "trainer/launch/launcher.h"
#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;
using trainer::config::Node;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Job N does what <dir>/what-N says: ok, fail, exit3 (ends without a status), wait-for-M (ends
// well only once job M has started: fails when jobs run one at a time).
const char* kFakeJob = R"SH(#!/bin/sh
dir=$3; n=$4
what=$(cat "$dir/what-$n" 2>/dev/null || echo ok)
mkdir -p "$dir/.sweep/status"
touch "$dir/started-$n"
echo "job $n omp=$OMP_NUM_THREADS cuda=$CUDA_VISIBLE_DEVICES $(grep Cpus_allowed_list /proc/self/status)" >> "$dir/jobs.log"
echo "stdout of job $n"
echo "stderr of job $n" >&2
state=done
case "$what" in
  fail) state=failed ;;
  exit3) exit 3 ;;
  wait-for-*)
    other=${what#wait-for-}; i=0
    while [ ! -e "$dir/started-$other" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
    [ -e "$dir/started-$other" ] || state=failed ;;
esac
printf 'status: %s\npid: %s\nhost: x\nstart_time: t\nstart_epoch_s: 1\nend_time: t\nduration_s: 0.5\nexit_code: 0\nerror: fake error %s\n' \
  "$state" "$$" "$n" > "$dir/.sweep/status/$n.yaml.tmp"
mv "$dir/.sweep/status/$n.yaml.tmp" "$dir/.sweep/status/$n.yaml"
[ "$state" = done ]
)SH";

SweepPlan fake_sweep(const std::string& dir, int jobs, const std::string& launcher_yaml) {
  const std::string script = dir + "/fake_job.sh";
  std::ofstream(script) << kFakeJob;
  chmod(script.c_str(), 0755);
  SweepPlan plan;
  plan.sweep_dir = dir;
  plan.command = "fit";
  plan.executable = script;
  for (int n = 0; n < jobs; ++n) plan.jobs.push_back({n, {"x=" + std::to_string(n)}, dir + "/" + std::to_string(n)});
  plan.launcher = trainer::config::load_yaml_string(launcher_yaml, "launcher").root;
  std::ofstream(dir + "/multirun.yaml") << "hydra: {}\n";
  return plan;
}

void job_does(const std::string& dir, int n, const std::string& what) {
  std::ofstream(dir + "/what-" + std::to_string(n)) << what;
}

JobState state_of(const std::string& dir, int n) { return effective_state(read_job_status(dir, n)); }

}  // namespace

TEST_CASE("slots and threads: jobs never oversubscribe the cores") {
  CHECK(slot_layout(-1, 2, 10, 10).slots == 2);
  CHECK(slot_layout(-1, 2, 10, 10).threads_per_job == 1);
  CHECK(slot_layout(2, 16, 10, 10).threads_per_job == 8);
  CHECK(slot_layout(4, 16, 2, 2).slots == 2);  // never more slots than jobs
  CHECK(slot_layout(4, 16, 2, 2).threads_per_job == 8);
  CHECK(slot_layout(8, 2, 10, 10).threads_per_job == 1);
  CHECK(slot_layout(1, 4, 10, 10).threads_per_job == 4);
}

TEST_CASE("slots and threads: a resume with fewer jobs left keeps the threads each job had") {
  // 2 of a sweep's 2 jobs at once on 2 cores: 1 thread each; one left to resume: still 1.
  CHECK(slot_layout(2, 2, 1, 2).slots == 1);
  CHECK(slot_layout(2, 2, 1, 2).threads_per_job == 1);
  // 4 at once on 16 cores, 3 of 10 left: 3 run at once with the 4 threads each had.
  CHECK(slot_layout(4, 16, 3, 10).slots == 3);
  CHECK(slot_layout(4, 16, 3, 10).threads_per_job == 4);
  // A sweep of 2 jobs with n_jobs=4 never ran more than 2: 8 threads each, then and now.
  CHECK(slot_layout(4, 16, 1, 2).threads_per_job == 8);
}

TEST_CASE("launcher options: defaults, basic runs one at a time, bad values named") {
  Node local = trainer::config::load_yaml_string("_target_: trainer.launcher.LocalLauncher\nn_jobs: 3\n", "t").root;
  CHECK(local_launcher_options(local, "local").n_jobs == 3);
  CHECK_FALSE(local_launcher_options(local, "local").fail_fast);
  CHECK(local_launcher_options(local, "basic").n_jobs == 1);
  Node bad = trainer::config::load_yaml_string("n_jobs: 0\n", "t").root;
  CHECK_THROWS_WITH(local_launcher_options(bad, "local"), Catch::Contains("hydra.launcher.n_jobs"));
  Node text = trainer::config::load_yaml_string("fail_fast: sometimes\n", "t").root;
  CHECK_THROWS_WITH(local_launcher_options(text, "local"), Catch::Contains("hydra.launcher.fail_fast"));
  SweepPlan plan;
  plan.launcher = trainer::config::load_yaml_string("_target_: my.OwnLauncher\n", "t").root;
  CHECK_THROWS_WITH(make_launcher(plan), Catch::Contains("hydra.launcher._target_"));
}

TEST_CASE("n_jobs=2 runs two job processes at once, each on its own core") {
  TempDir dir("trainer-local-launcher");
  SweepPlan plan = fake_sweep(dir.path, 2, "_target_: trainer.launcher.LocalLauncher\nn_jobs: 2\n");
  job_does(dir.path, 0, "wait-for-1");
  job_does(dir.path, 1, "wait-for-0");
  make_launcher(plan)->launch(plan, {0, 1});
  CHECK(state_of(dir.path, 0) == JobState::kDone);
  CHECK(state_of(dir.path, 1) == JobState::kDone);
  CHECK(read(fs::path(dir.path) / "0" / "stdout.log") == "stdout of job 0\n");
  CHECK(read(fs::path(dir.path) / "1" / "stderr.log") == "stderr of job 1\n");
  const std::string log = read(fs::path(dir.path) / "jobs.log");
  if (usable_cpus().size() == 2) {
    CHECK(log.find("omp=1") != std::string::npos);
    CHECK(log.find("omp=2") == std::string::npos);
    CHECK(log.find("Cpus_allowed_list:\t" + std::to_string(usable_cpus()[0]) + "\n") != std::string::npos);
    CHECK(log.find("Cpus_allowed_list:\t" + std::to_string(usable_cpus()[1]) + "\n") != std::string::npos);
  }
  CHECK(fs::exists(fs::path(dir.path) / "sweep_summary.csv"));
}

TEST_CASE("basic runs one job at a time; a failure does not stop the others") {
  TempDir dir("trainer-local-launcher");
  SweepPlan plan = fake_sweep(dir.path, 4, "_target_: hydra._internal.core_plugins.basic_launcher.BasicLauncher\n");
  job_does(dir.path, 0, "wait-for-1");  // job 1 cannot have started: it fails
  job_does(dir.path, 2, "exit3");       // ends without a status: the launcher records it
  make_launcher(plan)->launch(plan, {0, 1, 2, 3});
  CHECK(state_of(dir.path, 0) == JobState::kFailed);
  CHECK(state_of(dir.path, 1) == JobState::kDone);
  CHECK(state_of(dir.path, 2) == JobState::kFailed);
  CHECK(read_job_status(dir.path, 2)->error.find("exited with code 3") != std::string::npos);
  CHECK(read_job_status(dir.path, 2)->exit_code == 3);
  CHECK(state_of(dir.path, 3) == JobState::kDone);
  CHECK(read(fs::path(dir.path) / "jobs.log").find("omp=1") == std::string::npos);  // basic leaves threads alone
}

TEST_CASE("fail_fast stops launching at the first failure") {
  TempDir dir("trainer-local-launcher");
  SweepPlan plan = fake_sweep(dir.path, 3, "_target_: trainer.launcher.LocalLauncher\nn_jobs: 1\nfail_fast: true\n");
  job_does(dir.path, 1, "fail");
  make_launcher(plan)->launch(plan, {0, 1, 2});
  CHECK(state_of(dir.path, 0) == JobState::kDone);
  CHECK(state_of(dir.path, 1) == JobState::kFailed);
  CHECK(state_of(dir.path, 2) == JobState::kPending);  // never started
  CHECK_FALSE(fs::exists(fs::path(dir.path) / "started-2"));
}

TEST_CASE("only the jobs asked for run") {
  TempDir dir("trainer-local-launcher");
  SweepPlan plan = fake_sweep(dir.path, 3, "_target_: trainer.launcher.LocalLauncher\nn_jobs: -1\n");
  make_launcher(plan)->launch(plan, {2});
  CHECK(state_of(dir.path, 0) == JobState::kPending);
  CHECK(state_of(dir.path, 2) == JobState::kDone);
}

TEST_CASE("gpus_per_job gives each running job its own devices through CUDA_VISIBLE_DEVICES") {
  TempDir dir("trainer-local-launcher");
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = before != nullptr ? before : "";
  setenv("CUDA_VISIBLE_DEVICES", "3,5,7,9", 1);
  SECTION("two devices each: two jobs at once on disjoint devices") {
    SweepPlan plan = fake_sweep(dir.path, 2, "_target_: trainer.launcher.LocalLauncher\nn_jobs: -1\ngpus_per_job: 2\n");
    job_does(dir.path, 0, "wait-for-1");
    job_does(dir.path, 1, "wait-for-0");
    make_launcher(plan)->launch(plan, {0, 1});
    CHECK(state_of(dir.path, 0) == JobState::kDone);
    CHECK(state_of(dir.path, 1) == JobState::kDone);
    const std::string log = read(fs::path(dir.path) / "jobs.log");
    CHECK(log.find("cuda=3,5 ") != std::string::npos);
    CHECK(log.find("cuda=7,9 ") != std::string::npos);
  }
  SECTION("more devices per job than visible is refused before anything starts") {
    SweepPlan plan = fake_sweep(dir.path, 1, "_target_: trainer.launcher.LocalLauncher\ngpus_per_job: 5\n");
    CHECK_THROWS_WITH(make_launcher(plan)->launch(plan, {0}), Catch::Contains("hydra.launcher.gpus_per_job"));
    CHECK(state_of(dir.path, 0) == JobState::kPending);
  }
  if (before != nullptr) {
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
}
