// What hydra/launcher=slurm writes before submitting (docs/slurm.md), as pure functions:
//   <sweep_dir>/.sweep/slurm/array.sbatch   one job-array script: #SBATCH lines from the launcher
//                                           options, the setup lines, and a body running
//                                           `<exe> sweep run-job <sweep_dir> $SLURM_ARRAY_TASK_ID`
//                                           (array index = job number) that passes the pre-emption
//                                           signal (USR1, signal_delay_s before the time limit) on
//                                           to the job as SIGTERM, so it writes last.ckpt and ends
//                                           `interrupted`; with max_num_timeout > 0 the task then
//                                           requeues itself and resumes from that checkpoint.
//   <sweep_dir>/.sweep/slurm/commands.txt   each job's command line, one job a paragraph
//   <sweep_dir>/.sweep/slurm/logs/<N>.out|err   each array task's stdout/stderr (appended to)
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/launch/sweep_plan.h"

namespace trainer::launch {

// hydra.launcher for slurm / submitit_slurm, with submitit's option names.
struct SlurmOptions {
  std::string job_name = "trainer";  // name
  int timeout_min = 60;              // --time (minutes)
  int nodes = 1;
  int tasks_per_node = 1;
  std::optional<int> cpus_per_task, gpus_per_node, cpus_per_gpu, gpus_per_task;
  std::optional<double> mem_gb;          // --mem
  std::string mem_per_gpu, mem_per_cpu;  // SLURM's own syntax (e.g. 4G); empty: not set
  std::string partition, qos, comment, constraint, exclude, gres, account;
  int signal_delay_s = 120;     // --signal=B:USR1@signal_delay_s; 0: no pre-emption signal
  int max_num_timeout = 0;      // times a task stopped by that signal requeues itself
  int array_parallelism = 256;  // %N on --array (at most N tasks at once)
  // additional_parameters: extra sbatch options, key (underscores become dashes) and value;
  // a value of true gives a bare flag (--key).
  std::vector<std::pair<std::string, std::string>> additional_parameters;
  std::vector<std::string> setup;      // shell lines run before the job (module load, source ...)
  std::vector<std::string> srun_args;  // when given, the job runs under `srun <srun_args>`
  bool wait = true;                    // wait for the array to end (print progress), or submit and return
  bool fail_fast = false;              // while waiting: cancel the tasks not started at the first failure
};

// Reads a hydra.launcher node whose interpolations are resolved. Throws trainer::Error naming
// hydra.launcher.<key> for a value of the wrong type, an unknown key, or a value that cannot go
// into an #SBATCH line (a line break).
SlurmOptions slurm_launcher_options(const config::Node& launcher);

// SLURM's array index list for the job numbers: sorted, runs of consecutive numbers as ranges
// ("0-3,5,7-9").
std::string slurm_array_indices(std::vector<int> numbers);

// The files of a sweep's SLURM launch.
std::string slurm_dir(const std::string& sweep_dir);            // <sweep_dir>/.sweep/slurm
std::string slurm_script_path(const std::string& sweep_dir);    // .../array.sbatch
std::string slurm_commands_path(const std::string& sweep_dir);  // .../commands.txt
std::string slurm_log_dir(const std::string& sweep_dir);        // .../logs

// The job-array script running the jobs numbered in `todo` (array index = job number).
std::string slurm_array_script(const SlurmOptions& options, const SweepPlan& plan, const std::vector<int>& todo);

// Each job's command line, for reading and for running one by hand: "# job N: <overrides>"
// then the command.
std::string slurm_job_commands(const SweepPlan& plan, const std::vector<int>& todo);

// `text` as one shell word ('...' with embedded quotes escaped); plain words stay as they are.
std::string shell_quote(const std::string& text);

}  // namespace trainer::launch
