#include "trainer/launch/job_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "trainer/formats/checkpoint_file.h"
#include "trainer/launch/engine_result.h"
#include "trainer/launch/job_status.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace fs = std::filesystem;

namespace trainer::launch {

namespace {

// The engine's advice for a run it stopped or lost (engine/trainer.cpp, distributed/job_ranks.cpp)
// is a single run's: a sweep's job continues through its sweep, which knows the job's config.
std::string sweep_advice(std::string message, const std::string& sweep_dir) {
  const std::string single = "Resume with the same command plus ckpt_path=last and hydra.run.dir=";
  const size_t at = message.find(single);
  if (at == std::string::npos) return message;
  // The sentence ends at a full stop followed by a blank, a new line (the rank's output) or nothing.
  size_t end = at + single.size();
  while (end < message.size() &&
         !(message[end] == '.' && (end + 1 == message.size() || message[end + 1] == ' ' || message[end + 1] == '\n'))) {
    ++end;
  }
  end = std::min(end + 1, message.size());
  return message.replace(
      at, end - at,
      "Resume the sweep with trainer sweep resume " + sweep_dir + " (this job continues from its last.ckpt).");
}

}  // namespace

std::string checkpoint_to_continue_from(const std::optional<JobStatus>& before, const std::string& run_dir) {
  // An interrupted job, and a failed one that got as far as a checkpoint (its data went missing, a
  // full disk), go on from it: a new start would replace its checkpoints and its metrics.
  if (!before || (before->state != JobState::kRunning && before->state != JobState::kInterrupted &&
                  before->state != JobState::kFailed)) {
    return "";
  }
  const fs::path checkpoints = fs::path(run_dir) / "checkpoints";
  std::error_code ec;
  if (fs::exists(checkpoints / "last.ckpt", ec)) return "last";
  // No last.ckpt: the newest checkpoint.
  const std::vector<std::string> found = formats::checkpoints_newest_first(checkpoints.string());
  return found.empty() ? std::string() : found.front();
}

int run_sweep_job(const std::string& sweep_dir, int number, const JobBody& body) {
  JobRecord record = read_job_record(sweep_dir, number);
  const std::optional<JobStatus> before = read_job_status(sweep_dir, number);
  if (before && before->state == JobState::kRunning && before->pid != getpid() && job_process_alive(*before)) {
    throw Error("job " + std::to_string(number), "already running as process " + std::to_string(before->pid),
                "Wait for it to end, or stop it first (kill " + std::to_string(before->pid) + ").");
  }
  JobStatus status;
  if (const std::string checkpoint = checkpoint_to_continue_from(before, record.job.run_dir);
      !checkpoint.empty() && record.config.is_map() && record.config.find("ckpt_path") != nullptr) {
    record.config.set("ckpt_path", config::Node::string(checkpoint));
    status.resumed = true;
  }
  status.state = JobState::kRunning;
  status.pid = static_cast<int>(getpid());
  status.pid_start = process_start_ticks(status.pid);
  status.host = host_name();
  status.start_epoch_s = now_epoch_s();
  status.start_time = iso_time(status.start_epoch_s);
  write_job_status(sweep_dir, number, status);

  int code = 0;
  try {
    body(record);
    status.state = JobState::kDone;
  } catch (const EngineFailure& failure) {
    // The engine's fields say whether it stopped for a signal; its message is only shown.
    const EngineResult& result = failure.result();
    const bool interrupted = result.outcome == JobOutcome::kInterrupted;
    status.state = interrupted ? JobState::kInterrupted : JobState::kFailed;
    code = interrupted ? 128 + result.stop_signal : 1;
    status.error = sweep_advice(failure.what(), sweep_dir);
    std::cerr << "Error: " << status.error << "\n";
  } catch (const std::exception& error) {
    status.state = JobState::kFailed;
    code = 1;
    status.error = error.what();
    std::cerr << "Error: " << error.what() << "\n";
  }
  // The job's log ends with why it stopped, as its console does.
  if (!status.error.empty()) log::write_file_only(log::Level::kError, "Error: " + status.error);
  const double end = now_epoch_s();
  status.end_time = iso_time(end);
  // A resumed job's time counts its earlier attempts too (the summary's duration_s is the job's).
  status.duration_s = end - status.start_epoch_s + (status.resumed && before ? before->duration_s : 0.0);
  status.exit_code = code;
  write_job_status(sweep_dir, number, status);
  return code;
}

}  // namespace trainer::launch
