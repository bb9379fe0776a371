// The job process of a sweep (`<exe> sweep run-job <sweep_dir> <N>`): runs job N from its record
// and writes its own status file (job_status.h) at start and end.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "trainer/launch/job_status.h"
#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// Runs the record's config (through the engine; throws EngineFailure when the engine's job did not
// finish, trainer::Error for what fails before it).
using JobBody = std::function<void(JobRecord& record)>;

// The checkpoint a job's next attempt goes on from ("" for none): where its last attempt ended
// `interrupted` or `failed` (or its status says `running` for a process that is gone), "last" when
// `run_dir` holds checkpoints/last.ckpt, else the newest other checkpoint there (a disk that filled
// while last.ckpt was written leaves the epoch's other one), by its path.
std::string checkpoint_to_continue_from(const std::optional<JobStatus>& before, const std::string& run_dir);

// Reads job N's record; when the job continues from a checkpoint (above) and its config has the
// ckpt_path key, sets ckpt_path to it so it resumes.
// Writes status running, runs `body`, writes done / failed / interrupted (an EngineFailure whose
// outcome is interrupted: the engine stopped for SIGINT/SIGTERM and wrote last.ckpt; its message
// is not looked at). Returns the exit code: 0 done, 1 failed, 128+signal when interrupted.
int run_sweep_job(const std::string& sweep_dir, int number, const JobBody& body);

}  // namespace trainer::launch
