// Whether this process is rank 1 or higher of a data-parallel job, read from its environment
// (torchrun's RANK, SLURM's SLURM_PROCID with SLURM_NTASKS > 1, or the RANK the engine gives the
// ranks it starts): such a rank logs only warnings and errors and writes none of the run's files;
// rank 0 writes them (docs/distributed.md). Torch-free: the CLI asks before any engine is loaded.
#pragma once

namespace trainer {

bool is_secondary_rank();

}  // namespace trainer
