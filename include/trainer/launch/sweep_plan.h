// A sweep on disk, written before its first job starts (docs/sweeps.md):
//   <sweep_dir>/multirun.yaml              the first job's composed config, as Hydra writes it
//   <sweep_dir>/.sweep/plan.yaml           command and every job's number, overrides and run dir
//                                          (written last: its presence means the plan is complete)
//   <sweep_dir>/.sweep/jobs/<N>.yaml       job N's record: command, number, overrides, run_dir and
//                                          its composed config (hydra node included, unresolved)
// Jobs run from their records, so config files edited during a sweep change nothing.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::launch {

struct PlannedJob {
  int number = 0;
  std::vector<std::string> overrides;  // all of them, as the sweeper gave them
  std::string run_dir;                 // absolute
};

struct SweepPlan {
  std::string sweep_dir;  // absolute
  std::string command;    // fit | validate | test
  std::vector<PlannedJob> jobs;
  config::Node launcher;   // hydra.launcher of the first job
  config::Node sweeper;    // hydra.sweeper of the first job
  std::string executable;  // the program that runs `sweep run-job` (this process's executable)
};

// One job's record: what the job process runs.
struct JobRecord {
  std::string command;
  PlannedJob job;
  config::Node config;  // composed, with the hydra node, unresolved
};

std::string sweep_state_dir(const std::string& sweep_dir);  // <sweep_dir>/.sweep
std::string job_record_path(const std::string& sweep_dir, int number);

// The overrides that are not Hydra's own (what .hydra/overrides.yaml holds), joined by spaces.
std::string task_overrides_text(const std::vector<std::string>& overrides);

// Writes job N's record (renamed into place, not fsynced: thousands are written at planning time).
void write_job_record(const std::string& sweep_dir, const JobRecord& record);

// Writes multirun.yaml (from `first_config`) and .sweep/plan.yaml, atomically, after every record.
void write_plan_index(const SweepPlan& plan, const config::Node& first_config);

// True when `sweep_dir` holds a complete plan (.sweep/plan.yaml).
bool has_sweep_plan(const std::string& sweep_dir);

// Reads the plan of a sweep directory: plan.yaml plus the launcher and sweeper nodes of
// multirun.yaml. Throws trainer::Error naming the file and how to fix it, and when the sweep was
// planned in another directory (moved or copied: its jobs would run and read there), unless
// `moved_for_reading` (a summary): its jobs' directories are then taken below `sweep_dir`.
SweepPlan read_sweep_plan(const std::string& sweep_dir, bool moved_for_reading = false);

JobRecord read_job_record(const std::string& sweep_dir, int number);

// Differences between a planned job list and the one on disk, one line each ("job 3: a=1 b=2 on
// disk, a=1 b=3 now"); empty when they match. Hydra's own overrides (hydra.launcher.*, ...) are not
// compared, so a sweep can be resumed with other launcher settings.
std::vector<std::string> plan_differences(const SweepPlan& on_disk, const SweepPlan& now);

// A single fit in a sweep job's directory (hydra.run.dir=<sweep>/<job>) would replace the job's
// .hydra record with its own config, so the sweep's plan and summary no longer described it:
// trainer::Error naming the job and `trainer sweep resume`. Looks for the plan up to four
// directories up (hydra.sweep.subdir may nest).
void refuse_sweep_job_directory(const std::string& run_dir);

// This process's executable (/proc/self/exe).
std::string self_executable();

}  // namespace trainer::launch
