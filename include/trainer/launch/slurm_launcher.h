// hydra/launcher=slurm (and submitit_slurm): runs a sweep as one SLURM job array. Each array task
// runs `<executable> sweep run-job <sweep_dir> $SLURM_ARRAY_TASK_ID` (array index = job number).
// See docs/slurm.md.
#pragma once

#include <memory>

#include "trainer/launch/launcher.h"

namespace trainer::launch {

std::unique_ptr<Launcher> make_slurm_launcher(const SweepPlan& plan);

}  // namespace trainer::launch
