// Launchers run the jobs of a planned sweep (sweep_plan.h), each as its own process:
//   <executable> sweep run-job <sweep_dir> <N>
// The job process writes its own status file (job_status.h); launchers read outcomes from there.
// Chosen by hydra.launcher._target_ (hydra/launcher=basic|local|joblib|slurm), see docs/sweeps.md.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// A sweeper that makes its jobs while the sweep runs (hydra/sweeper=optuna). After the planned
// jobs, the launcher asks it for the next one whenever a slot is free, and tells it of every job's
// end (its status written) before asking again.
class JobSource {
 public:
  virtual ~JobSource();
  // The next job, its record written and appended to the plan's jobs (the plan the launcher was
  // given); nullopt when no more will come.
  virtual std::optional<int> next_job() = 0;
  virtual void job_ended(int number) = 0;
  // How many more jobs next_job() may give at most (sizes the launcher's slots).
  virtual int remaining() const = 0;
  // How many jobs may run at once (the sweeper's own limit; the launcher's n_jobs also applies).
  virtual int parallel() const = 0;
  // With watches(), the launcher asks prune() for each running job every half second; true stops
  // the job (SIGTERM: it writes last.ckpt and ends), recorded as stopped_early.
  virtual bool watches() const { return false; }
  virtual bool prune(int /*number*/) { return false; }
};

class Launcher {
 public:
  virtual ~Launcher();
  // Runs the jobs numbered in `todo` and returns when they have ended (or, with fail_fast or
  // after Ctrl-C/SIGTERM, when the launched ones have ended and no more will start).
  virtual void launch(const SweepPlan& plan, const std::vector<int>& todo) = 0;
  // True when launch() stopped early because the sweep was interrupted (SIGINT/SIGTERM).
  virtual bool interrupted() const { return false; }
  // True when launch() handed the jobs to a scheduler and returned without waiting for them
  // (hydra/launcher=slurm with wait=false, or no sbatch here): the sweep's outcome is not known yet.
  virtual bool detached() const { return false; }
};

// Picks the launcher named by plan.launcher's _target_:
//   ...BasicLauncher                          one job process at a time;
//   trainer.launcher.LocalLauncher, ...JoblibLauncher   n_jobs processes at once;
//   ...SlurmLauncher                          a SLURM job array (slurm_launcher.h).
// Throws trainer::Error naming hydra.launcher._target_ for any other.
std::unique_ptr<Launcher> make_launcher(const SweepPlan& plan);

// Refuses a hydra.launcher key the chosen launcher does not read (`+hydra.launcher.n_job=1`), as
// Hydra's structured configs do; make_launcher checks too, the planner before anything is written.
void check_launcher_settings(const config::Node& launcher);

// How this program runs job N of a planned sweep inside the calling process (what
// `<exe> sweep run-job DIR N` does); returns the job's exit code. When one is set (the trainer CLI
// sets it once its engine is loaded), the local launchers start each job process with fork() alone:
// the job begins with LibTorch already mapped instead of executing the program again, which saves
// the library's load (~0.35 s a job with Debian's LibTorch). Unset: fork + exec of run-job.
using InProcessJob = std::function<int(const std::string& sweep_dir, int number)>;
void set_in_process_job(InProcessJob job);
const InProcessJob& in_process_job();

}  // namespace trainer::launch
