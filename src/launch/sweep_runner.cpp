#include "trainer/launch/sweep_runner.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "trainer/launch/job_runner.h"
#include "trainer/launch/job_status.h"
#include "trainer/launch/launcher.h"
#include "trainer/launch/mlflow_sweep_run.h"
#include "trainer/launch/sweep_summary.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

// "0, 3, 7" (the first 20, then "... and N more").
std::string number_list(const std::vector<int>& numbers) {
  std::string out;
  for (size_t i = 0; i < numbers.size() && i < 20; ++i) out += (i == 0 ? "" : ", ") + std::to_string(numbers[i]);
  if (numbers.size() > 20) out += ", ... and " + std::to_string(numbers.size() - 20) + " more";
  return out;
}

}  // namespace

std::vector<int> jobs_to_run(const SweepPlan& plan) {
  std::vector<int> todo;
  std::string busy;
  for (const PlannedJob& job : plan.jobs) {
    const std::optional<JobStatus> status = read_job_status(plan.sweep_dir, job.number);
    switch (effective_state(status)) {
      case JobState::kDone:
      case JobState::kStoppedEarly: {
        // A finished job whose directory was deleted since (to run it again, or by mistake) has
        // no result left to summarise: it runs again, as a new job.
        std::error_code ec;
        if (!job.run_dir.empty() && !fs::exists(job.run_dir, ec) && !ec) {
          std::cerr << "[sweep] #" << job.number << " ended " << state_name(effective_state(status))
                    << " before, but its directory " << job.run_dir << " is gone: it runs again" << std::endl;
          todo.push_back(job.number);
        }
        break;
      }
      case JobState::kRunning:
        busy += (busy.empty() ? "" : ", ") + std::to_string(job.number) + " (pid " + std::to_string(status->pid) +
                " on " + status->host + ")";
        break;
      default:
        todo.push_back(job.number);
    }
  }
  if (!busy.empty()) {
    throw Error(plan.sweep_dir, "jobs of this sweep are still running: " + busy,
                "Wait for them to end (or stop them) before resuming the sweep.");
  }
  return todo;
}

int run_sweep_plan(const SweepPlan& plan) {
  const std::vector<int> todo = jobs_to_run(plan);
  // A sweep that ran before says what its resume does, even when no job had ended yet.
  int continued = 0, restarted = 0;
  for (const PlannedJob& job : plan.jobs) {
    if (std::find(todo.begin(), todo.end(), job.number) == todo.end()) continue;
    const std::optional<JobStatus> status = read_job_status(plan.sweep_dir, job.number);
    if (!status) continue;
    ++(checkpoint_to_continue_from(status, job.run_dir).empty() ? restarted : continued);
  }
  if (todo.size() < plan.jobs.size() || continued + restarted > 0) {
    std::string how;
    if (continued > 0) {
      how +=
          std::to_string(continued) + (continued == 1 ? " continues from its" : " continue from their") + " checkpoint";
    }
    if (restarted > 0) {
      how += (how.empty() ? "" : ", ") + std::to_string(restarted) + " started before " +
             (restarted == 1 ? "runs" : "run") + " again from the start";
    }
    std::cerr << "[sweep] resuming " << plan.sweep_dir << ": " << plan.jobs.size() - todo.size() << " of "
              << plan.jobs.size() << " jobs already ended, " << todo.size() << " to run"
              << (how.empty() ? "" : " (" + how + ")") << std::endl;
  }
  std::unique_ptr<Launcher> launcher = make_launcher(plan);
  log::discard_early_lines();  // the sweep's warnings, said on its console, are not its jobs' (forked from here)
  launcher->launch(plan, todo);
  if (launcher->detached()) return 0;  // submitted, not waited for: `trainer sweep summary` tells later
  // A summary that cannot be written (a full disk) is said, and the jobs' outcome still is: it
  // hid that jobs had failed, and the resume that re-runs them.
  SweepSummary summary;
  std::string unwritten;
  try {
    summary = write_sweep_summary(plan);
  } catch (const Error& error) {
    unwritten = error.what();
    std::cerr << "[sweep] warning: summary not written: " << unwritten << std::endl;
    summary = summarize_sweep(plan);
  }
  if (summary.best >= 0) std::cerr << "[sweep] best job: " << best_job_text(summary) << std::endl;
  if (unwritten.empty()) std::cerr << "[sweep] summary: " << plan.sweep_dir << "/sweep_summary.md" << std::endl;
  const bool any_failed = std::any_of(summary.jobs.begin(), summary.jobs.end(),
                                      [](const JobSummary& job) { return job.state == JobState::kFailed; });
  end_mlflow_sweep_run(plan.sweep_dir, launcher->interrupted() ? tracking::MlflowRunStatus::kKilled
                                       : any_failed            ? tracking::MlflowRunStatus::kFailed
                                                               : tracking::MlflowRunStatus::kFinished);
  if (launcher->interrupted()) return 130;
  std::vector<int> failed, not_run;
  for (const JobSummary& job : summary.jobs) {
    if (job.state == JobState::kFailed) {
      failed.push_back(job.job.number);
    } else if (job.state != JobState::kDone && job.state != JobState::kStoppedEarly) {
      not_run.push_back(job.job.number);
    }
  }
  if (!failed.empty() || !not_run.empty()) {
    // "1 of 3 jobs failed (0); 1 did not finish (2)", or either half alone.
    const std::string of_all = " of " + std::to_string(summary.jobs.size()) + " jobs ";
    std::string problem;
    if (!failed.empty()) problem = std::to_string(failed.size()) + of_all + "failed (" + number_list(failed) + ")";
    if (!not_run.empty()) {
      problem +=
          problem.empty() ? std::to_string(not_run.size()) + of_all : "; " + std::to_string(not_run.size()) + " ";
      problem += "did not finish (" + number_list(not_run) + ": interrupted or never started)";
    }
    throw Error("sweep " + plan.sweep_dir, problem,
                "See each job's error above and its stderr.log in its run dir; `trainer sweep resume " +
                    plan.sweep_dir + "` re-runs failed and remaining jobs" +
                    (unwritten.empty() ? std::string(".") : " (and writes the summary), once the disk has room."));
  }
  if (!unwritten.empty()) {
    throw Error("sweep " + plan.sweep_dir, "every job ended, but the summary could not be written: " + unwritten,
                "Free space, then write it with `trainer sweep summary " + plan.sweep_dir + "`.");
  }
  return 0;
}

int resume_sweep(const std::string& sweep_dir) { return run_sweep_plan(read_sweep_plan(sweep_dir)); }

std::string sweep_summary_text(const std::string& sweep_dir) {
  const SweepPlan plan = read_sweep_plan(sweep_dir, /*moved_for_reading=*/true);
  try {
    return summary_markdown(write_sweep_summary(plan));
  } catch (const Error&) {
    return summary_markdown(summarize_sweep(plan));  // a sweep dir this user cannot write to
  }
}

}  // namespace trainer::launch
