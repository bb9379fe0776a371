#include "trainer/launch/job_runner.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "trainer/launch/job_status.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

// The engine reports a stop by SIGINT/SIGTERM as an error placed at "signal <N>" (its text
// begins "signal <N>: ").
int stop_signal_of(const Error& error) {
  const std::string text = error.what();
  if (text.rfind("signal ", 0) != 0) return 0;
  size_t end = 7;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  if (end == 7 || end >= text.size() || text[end] != ':') return 0;
  return std::atoi(text.c_str() + 7);
}

}  // namespace

int run_sweep_job(const std::string& sweep_dir, int number, const JobBody& body) {
  JobRecord record = read_job_record(sweep_dir, number);
  const std::optional<JobStatus> before = read_job_status(sweep_dir, number);
  if (before && before->state == JobState::kRunning && before->pid != getpid() && job_process_alive(*before)) {
    throw Error("job " + std::to_string(number), "already running as process " + std::to_string(before->pid),
                "Wait for it to end, or stop it first (kill " + std::to_string(before->pid) + ").");
  }
  JobStatus status;
  std::error_code ec;
  if (before && (before->state == JobState::kRunning || before->state == JobState::kInterrupted) &&
      fs::exists(fs::path(record.job.run_dir) / "checkpoints" / "last.ckpt", ec) && record.config.is_map() &&
      record.config.find("ckpt_path") != nullptr) {
    record.config.set("ckpt_path", config::Node::string("last"));
    status.resumed = true;
  }
  status.state = JobState::kRunning;
  status.pid = static_cast<int>(getpid());
  status.host = host_name();
  status.start_epoch_s = now_epoch_s();
  status.start_time = iso_time(status.start_epoch_s);
  write_job_status(sweep_dir, number, status);

  int code = 0;
  try {
    body(record);
    status.state = JobState::kDone;
  } catch (const Error& error) {
    const int signal_number = stop_signal_of(error);
    status.state = signal_number != 0 ? JobState::kInterrupted : JobState::kFailed;
    code = signal_number != 0 ? 128 + signal_number : 1;
    status.error = error.what();
    std::cerr << "Error: " << error.what() << "\n";
  } catch (const std::exception& error) {
    status.state = JobState::kFailed;
    code = 1;
    status.error = error.what();
    std::cerr << "Error: " << error.what() << "\n";
  }
  const double end = now_epoch_s();
  status.end_time = iso_time(end);
  status.duration_s = end - status.start_epoch_s;
  status.exit_code = code;
  write_job_status(sweep_dir, number, status);
  return code;
}

}  // namespace trainer::launch
