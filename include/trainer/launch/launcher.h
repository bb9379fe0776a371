// Launchers run the jobs of a planned sweep (sweep_plan.h), each as its own process:
//   <executable> sweep run-job <sweep_dir> <N>
// The job process writes its own status file (job_status.h); launchers read outcomes from there.
// Chosen by hydra.launcher._target_ (hydra/launcher=basic|local|joblib|slurm), see docs/sweeps.md.
#pragma once

#include <memory>
#include <vector>

#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

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

}  // namespace trainer::launch
