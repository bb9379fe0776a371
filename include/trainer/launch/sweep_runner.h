// Runs a planned sweep to its end: picks the jobs still to run (resume keeps numbers, skips done
// and stopped-early jobs, resumes interrupted ones, re-runs failed ones), hands them to the
// launcher of the plan, then writes the summary and names the best job.
#pragma once

#include <string>
#include <vector>

#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// The jobs to run, in job order: pending, failed and interrupted ones. Throws trainer::Error
// when a job is still running on this host.
std::vector<int> jobs_to_run(const SweepPlan& plan);

// Launches jobs_to_run(plan) and returns the sweep's exit code: 0 when every job is done (or
// stopped early), 130 when interrupted; throws trainer::Error (exit 1) naming the failed jobs.
int run_sweep_plan(const SweepPlan& plan);

// `trainer sweep resume DIR`: the plan on disk, run with its own launcher settings.
int resume_sweep(const std::string& sweep_dir);

// `trainer sweep summary DIR`: refreshes the summary files (when the directory is writable) and
// returns the table (markdown).
std::string sweep_summary_text(const std::string& sweep_dir);

}  // namespace trainer::launch
