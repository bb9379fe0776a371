// Plans a sweep (-m): every job is composed (and, for a real run, schema-checked and resolved)
// before the first job starts; the errors of all bad jobs are reported together and nothing runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "trainer/config/composer.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// Expands the sweep with the sweeper of hydra.sweeper and composes each job (hydra.job.num/id
// set), handing it to `visit` while no job has failed. With `check_for` a command (fit, test, ...),
// each job's config is also checked for that command (check_job_schema, check_job_sections) and
// resolved as its run would resolve it; empty: not checked. Throws one trainer::Error listing every
// bad job (the first 20) when any is bad.
void compose_sweep(const config::Composer& composer, const std::vector<config::Override>& overrides,
                   const std::string& check_for,
                   const std::function<void(const config::SweepJob&, config::ComposeResult&&)>& visit);

// Composes `jobs` (hydra.job.num/id set from each number) as compose_sweep does, checked or not.
void compose_jobs(const config::Composer& composer, const std::vector<config::SweepJob>& jobs,
                  const std::string& check_for,
                  const std::function<void(const config::SweepJob&, config::ComposeResult&&)>& visit);

// A planned sweep held in memory: the plan and each job's composed config, in job order.
struct ComposedSweep {
  SweepPlan plan;
  std::vector<config::Node> configs;
};

// compose_sweep with checks, then the sweep dir (hydra.sweep.dir of the first job) and each job's
// run dir (<sweep_dir>/<hydra.sweep.subdir>). Writes nothing. Empty plan.jobs for an empty sweep.
// A fit sweep whose jobs would share a checkpoint directory (callbacks.model_checkpoint.dirpath
// without the job in it) is refused: trainer::Error naming the directory and both jobs.
ComposedSweep plan_sweep(const config::Composer& composer, const std::string& command,
                         const std::vector<config::Override>& overrides);

// plan_sweep for jobs whose overrides are given (the Optuna sweeper's trials): composed and
// checked, placed, shared checkpoint directories refused.
ComposedSweep plan_jobs(const config::Composer& composer, const std::string& command,
                        const std::vector<config::SweepJob>& jobs);

// Fills the plan of a composed sweep from its configs: the sweep dir (hydra.sweep.dir of the first
// job, resolved once), launcher, sweeper and each job's run dir; refuses jobs that would share a
// checkpoint directory.
void place_jobs(ComposedSweep& sweep, const std::vector<config::SweepJob>& jobs);

// A composed job's run dir: <sweep_dir>/<hydra.sweep.subdir>, resolved in `ctx` (its hydra node
// set from `config`; pass the sweep's context for one timestamp across its jobs).
std::string job_run_dir(const config::Node& config, const std::string& sweep_dir, config::ResolveContext ctx = {});

// Moves a planned sweep to `sweep_dir`: its plan, its jobs' run dirs and their configs'
// hydra.sweep.dir (a time-named directory another sweep took in the same second).
void move_sweep(ComposedSweep& sweep, const std::string& sweep_dir);

// Before a new fit sweep writes anything: no job's checkpoint directory holds checkpoints of
// another run (launch::refuse_overwriting_checkpoints for each job without ckpt_path).
void refuse_overwriting_checkpoints(const ComposedSweep& sweep);

// Writes the job records, multirun.yaml and .sweep/plan.yaml of a composed sweep.
void write_sweep_plan(const ComposedSweep& sweep);

// Where the jobs of `sweep`, composed now, differ from the configs its directory's plan recorded
// (a config file edited since), one line per key of the first jobs that differ ("job 0: data.path:
// bad.csv then, good.csv now"); empty when none. The hydra node is not compared.
std::vector<std::string> config_changes(const ComposedSweep& sweep);

}  // namespace trainer::launch
