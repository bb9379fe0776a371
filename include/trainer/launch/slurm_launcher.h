// hydra/launcher=slurm (and submitit_slurm): runs a sweep as one SLURM job array. Each array task
// runs `<executable> sweep run-job <sweep_dir> $SLURM_ARRAY_TASK_ID` (array index = job number).
// Optuna's trials, asked for one by one, are submitted one by one instead. See docs/slurm.md.
#pragma once

#include <memory>
#include <vector>

#include "trainer/launch/launcher.h"

namespace trainer::launch {

std::unique_ptr<Launcher> make_slurm_launcher(const SweepPlan& plan);

// hydra/sweeper=optuna with hydra/launcher=slurm: runs the jobs numbered in `todo` (interrupted
// trials of a resumed study), then the trials `source` makes, each submitted as a one-task array of
// its own (`<sweep_dir>/.sweep/slurm/trial_<N>.sbatch`, array index = trial number) as soon as fewer
// than `at_once` are queued or running, and tells the source of each end before asking again. With
// a pruner (source.watches()), running trials the source prunes are sent SIGTERM through
// `scancel --signal=TERM --full`: they write last.ckpt and end `stopped_early`. Ctrl-C/SIGTERM stops
// submitting and sends the same signal to the trials still queued or running, which end
// `interrupted` (resumable); returns true then.
bool launch_slurm_trials(const SweepPlan& plan, const std::vector<int>& todo, JobSource& source, int at_once);

// hydra.launcher.array_parallelism of a slurm launcher node (its default when unset or not an int).
int slurm_array_parallelism(const config::Node& launcher);

}  // namespace trainer::launch
