// A sweep job's status file, <sweep_dir>/.sweep/status/<N>.yaml, written atomically by the job
// process itself (so it holds under any launcher, SLURM included): `running` with pid, host and
// start time when the job starts; done | failed | interrupted | stopped_early with end time,
// duration, exit code and error message when it ends. A `running` file whose process is gone
// means the job was interrupted (killed, machine lost).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainer::launch {

enum class JobState { kPending, kRunning, kDone, kFailed, kInterrupted, kStoppedEarly };

// "pending", "running", "done", "failed", "interrupted", "stopped_early".
const char* state_name(JobState state);
JobState parse_state(const std::string& name);  // unknown names read as kFailed

struct JobStatus {
  JobState state = JobState::kPending;
  int pid = 0;
  // The process's start time (/proc/<pid>/stat, clock ticks after boot): tells the job's process,
  // forked from the sweep with the sweep's command line, from a later one given its pid. 0: not
  // recorded (a status of an older trainer).
  int64_t pid_start = 0;
  std::string host;
  std::string start_time;    // ISO 8601 UTC
  double start_epoch_s = 0;  // seconds since 1970, for durations
  std::string end_time;      // empty while running
  double duration_s = 0;
  int exit_code = 0;
  std::string error;     // the job's one-paragraph error, when it failed
  bool resumed = false;  // started from the run dir's last checkpoint
};

std::string job_status_path(const std::string& sweep_dir, int number);

void write_job_status(const std::string& sweep_dir, int number, const JobStatus& status);

// nullopt when the job has no status file yet (never started). Throws trainer::Error for a file
// that cannot be read.
std::optional<JobStatus> read_job_status(const std::string& sweep_dir, int number);

// The state to act on: a `running` job whose process is gone from this host reads as interrupted
// (one running on another host cannot be checked and stays running).
JobState effective_state(const std::optional<JobStatus>& status);

// Whether the status's process still runs on this host as a trainer job (stopped counts; a zombie
// does not).
bool job_process_alive(const JobStatus& status);

// The start time of process `pid` (/proc/<pid>/stat's 22nd field); -1 when it is gone or a zombie.
int64_t process_start_ticks(int pid);

std::string host_name();
double now_epoch_s();
std::string iso_time(double epoch_s);

}  // namespace trainer::launch
