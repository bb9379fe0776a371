// One job run in this process: its run directory and `.hydra/` files, its log, hydra.job.chdir,
// the checks and the one resolution of its config, the engine call, and the batch a search found
// written back into `.hydra/config.yaml`. The CLI (apps/trainer) and a sweep's job process both
// come here; the engine itself is only loaded when the first job reaches it.
#pragma once

#include <string>
#include <vector>

#include "trainer/config/interpolation.h"
#include "trainer/config/node.h"
#include "trainer/launch/engine_loader.h"

namespace trainer::launch {

// The engine of this process, made on first use and kept: the entry points linked into the program
// (`in_process`, e.g. &trainer::kInProcessEngine), or libtrainer_engine.so when it is nullptr. The
// first call decides. Throws trainer::Error when the library is missing or of another build.
const EngineLoader& process_engine(const EngineEntry* in_process);

// The engine a program runs its jobs with (its `in_process` entry points, or nullptr for the
// library), said once at its start, and process_engine with it: code that plans jobs (the names
// a config picks from the engine's registries) asks the same engine the jobs will run with.
void use_engine(const EngineEntry* in_process);
const EngineLoader& process_engine();

// Whether this process is rank 1 or higher of a data-parallel job (torchrun's RANK, SLURM's
// SLURM_PROCID, or the ranks the engine starts itself): then rank 0 alone writes the .hydra
// files and the log (docs/distributed.md).
bool is_secondary_rank();

// What run_job writes into a run directory before the engine writes anything (its log and .hydra
// files, relative to the run directory), for a composed `config` with its hydra node.
std::vector<std::string> job_records(const config::Node& config);

// Runs one composed job (`config` with its hydra node) in `run_dir`: records hydra.runtime, checks
// the schema, resolves the job config once, writes the .hydra files and the log, hands the job to
// the engine (`in_process` as for process_engine) and records a batch-size search's result. Logs
// each of `notes`. Returns the engine's result of a finished job; throws EngineFailure (failed or
// interrupted: result() has the fields) or trainer::Error for what fails before the engine runs.
EngineResult run_job(const EngineEntry* in_process, const std::string& command, config::Node config,
                     const std::string& run_dir, const std::vector<std::string>& task_overrides,
                     const config::ResolveContext& base_ctx, const std::vector<std::string>& notes = {});

}  // namespace trainer::launch
