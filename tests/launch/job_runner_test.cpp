// A sweep's job process records how its job ended from the engine's fields (EngineFailure's
// result), never from the words of its message: an error that merely reads "signal 15: ..." is a
// failure, an interrupted result is `interrupted` with exit code 128+signal whatever its text.
#include "trainer/launch/job_runner.h"

#include <csignal>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/launch/engine_result.h"
#include "trainer/launch/job_status.h"
#include "trainer/launch/sweep_plan.h"
#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::Error;
using trainer::testing::TempDir;
using namespace trainer::launch;

namespace {

// Job 0 of a sweep in `sweep_dir`, its run directory inside it, its config with ckpt_path.
JobRecord planned_job(const std::string& sweep_dir) {
  JobRecord record;
  record.command = "fit";
  record.job.number = 0;
  record.job.overrides = {"optimizer.lr=0.1"};
  record.job.run_dir = (fs::path(sweep_dir) / "0").string();
  record.config =
      trainer::config::load_yaml_string("ckpt_path: null\nseed: 1\nhydra:\n  output_subdir: .hydra\n", "test").root;
  write_job_record(sweep_dir, record);
  return record;
}

EngineResult interrupted_result(int signal, const std::string& message) {
  EngineResult result;
  result.exit_code = 1;
  result.outcome = JobOutcome::kInterrupted;
  result.stop_signal = signal;
  result.message = message;
  return result;
}

}  // namespace

TEST_CASE("a finished job is done with exit code 0") {
  TempDir dir("trainer-job-runner");
  planned_job(dir.path);
  CHECK(run_sweep_job(dir.path, 0, [](JobRecord&) {}) == 0);
  const auto status = read_job_status(dir.path, 0);
  REQUIRE(status.has_value());
  CHECK(status->state == JobState::kDone);
  CHECK(status->exit_code == 0);
  CHECK(status->error.empty());
}

TEST_CASE("an error whose text begins 'signal 15:' is a failure, not an interrupt") {
  TempDir dir("trainer-job-runner");
  planned_job(dir.path);
  // As the engine's own stop message reads, but thrown as a plain error (the old launcher parsed
  // this text and took it for SIGTERM), and as an engine result that failed.
  const int plain = run_sweep_job(dir.path, 0, [](JobRecord&) {
    throw Error("signal 15", "stopped after step 3; a checkpoint was written to last.ckpt");
  });
  CHECK(plain == 1);
  auto status = read_job_status(dir.path, 0);
  REQUIRE(status.has_value());
  CHECK(status->state == JobState::kFailed);
  CHECK(status->exit_code == 1);
  CHECK(status->error.rfind("signal 15: stopped after step 3", 0) == 0);

  EngineResult failed;
  failed.exit_code = 1;
  failed.outcome = JobOutcome::kFailed;
  failed.message = "signal 15: a metric named 'signal 15' is not logged";
  const int engine_failed = run_sweep_job(dir.path, 0, [&](JobRecord&) { throw EngineFailure(failed); });
  CHECK(engine_failed == 1);
  status = read_job_status(dir.path, 0);
  REQUIRE(status.has_value());
  CHECK(status->state == JobState::kFailed);
}

TEST_CASE("an interrupted engine result is `interrupted` with 128+signal, whatever its message says") {
  TempDir dir("trainer-job-runner");
  planned_job(dir.path);
  const int code = run_sweep_job(dir.path, 0, [](JobRecord&) {
    throw EngineFailure(interrupted_result(SIGTERM, "stopped after step 7; resume with ckpt_path=last"));
  });
  CHECK(code == 128 + SIGTERM);
  auto status = read_job_status(dir.path, 0);
  REQUIRE(status.has_value());
  CHECK(status->state == JobState::kInterrupted);
  CHECK(status->exit_code == 128 + SIGTERM);
  CHECK(status->error == "stopped after step 7; resume with ckpt_path=last");

  // Run again with its last.ckpt in place: it resumes from it (ckpt_path=last) and records that.
  fs::create_directories(fs::path(dir.path) / "0" / "checkpoints");
  std::ofstream(fs::path(dir.path) / "0" / "checkpoints" / "last.ckpt") << "x";
  std::string ckpt_path;
  CHECK(run_sweep_job(dir.path, 0, [&](JobRecord& record) {
          ckpt_path = record.config.find("ckpt_path")->as_string();
          throw EngineFailure(interrupted_result(SIGINT, ""));
        }) == 128 + SIGINT);
  CHECK(ckpt_path == "last");
  status = read_job_status(dir.path, 0);
  REQUIRE(status.has_value());
  CHECK(status->state == JobState::kInterrupted);
  CHECK(status->resumed);
  CHECK(status->error == "the job failed");  // an empty message says only that
}
