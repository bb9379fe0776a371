// Job status files: written and read back; a `running` job whose process is gone is interrupted.
#include "trainer/launch/job_status.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;

namespace {

// The pid of a process that has ended (so nothing runs under it for a while).
int ended_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return static_cast<int>(pid);
}

}  // namespace

TEST_CASE("a status file reads back as written") {
  TempDir dir("trainer-job-status");
  CHECK_FALSE(read_job_status(dir.path, 4).has_value());
  CHECK(effective_state(read_job_status(dir.path, 4)) == JobState::kPending);
  JobStatus status;
  status.state = JobState::kFailed;
  status.pid = 1234;
  status.host = "node-1";
  status.start_epoch_s = 1700000000.5;
  status.start_time = iso_time(status.start_epoch_s);
  status.end_time = iso_time(1700000010.0);
  status.duration_s = 9.5;
  status.exit_code = 1;
  status.error = "optimizer.name: unknown optimizer 'bogus'";
  status.resumed = true;
  write_job_status(dir.path, 4, status);
  CHECK(fs::exists(fs::path(dir.path) / ".sweep" / "status" / "4.yaml"));
  auto read = read_job_status(dir.path, 4);
  REQUIRE(read.has_value());
  CHECK(read->state == JobState::kFailed);
  CHECK(read->pid == 1234);
  CHECK(read->host == "node-1");
  CHECK(read->start_time == "2023-11-14T22:13:20Z");
  CHECK(read->start_epoch_s == status.start_epoch_s);
  CHECK(read->duration_s == 9.5);
  CHECK(read->exit_code == 1);
  CHECK(read->error == status.error);
  CHECK(read->resumed);
  CHECK(effective_state(read) == JobState::kFailed);
}

TEST_CASE("a running job whose process is gone reads as interrupted") {
  TempDir dir("trainer-job-status");
  JobStatus status;
  status.state = JobState::kRunning;
  status.host = host_name();
  status.pid = ended_pid();
  write_job_status(dir.path, 0, status);
  CHECK(effective_state(read_job_status(dir.path, 0)) == JobState::kInterrupted);

  // A live process that is not a job process (a reused pid) does not count as the job either.
  status.pid = static_cast<int>(getpid());
  write_job_status(dir.path, 0, status);
  CHECK_FALSE(job_process_alive(status));
  CHECK(effective_state(read_job_status(dir.path, 0)) == JobState::kInterrupted);

  // On another host the process cannot be checked: still running.
  status.host = "elsewhere";
  write_job_status(dir.path, 0, status);
  CHECK(effective_state(read_job_status(dir.path, 0)) == JobState::kRunning);
}

TEST_CASE("state names round-trip") {
  for (JobState state : {JobState::kPending, JobState::kRunning, JobState::kDone, JobState::kFailed,
                         JobState::kInterrupted, JobState::kStoppedEarly}) {
    CHECK(parse_state(state_name(state)) == state);
  }
  CHECK(std::string(state_name(JobState::kStoppedEarly)) == "stopped_early");
}
