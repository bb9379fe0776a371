// Runs sweep jobs as child processes of this one (fork + exec of `<exe> sweep run-job DIR N`):
// hydra/launcher=basic one at a time; hydra/launcher=local or joblib n_jobs at once (-1: one per
// usable core). With several at once, each job gets its own share of the cores (CPU affinity plus
// OMP_NUM_THREADS/MKL_NUM_THREADS, so the engine's intra-op thread count is that share) and,
// with gpus_per_job > 0, its own devices through CUDA_VISIBLE_DEVICES. Each job's stdout and
// stderr go to stdout.log / stderr.log in its run dir. One progress line per job start and end
// (status, duration, final monitored metric, ETA). fail_fast stops launching at the first failure;
// SIGINT/SIGTERM stop launching and pass SIGTERM to the running jobs, which checkpoint and end as
// `interrupted` (resumable). Under hydra/sweeper=asha, jobs whose metric falls below their rung's
// cut are stopped early (SIGTERM; status stopped_early) and their slots start new jobs.
#pragma once

#include <string>

#include "trainer/config/node.h"
#include "trainer/launch/launcher.h"
#include "trainer/util/usable_cores.h"

namespace trainer::launch {

struct LocalLauncherOptions {
  std::string name = "local";  // for messages: basic, local, joblib
  int n_jobs = 1;              // -1: one per usable core
  int gpus_per_job = 0;
  bool fail_fast = false;
};

// Reads n_jobs, gpus_per_job and fail_fast from a hydra.launcher node (missing keys keep the
// defaults; `basic` always runs one job at a time). Throws trainer::Error naming the bad key.
LocalLauncherOptions local_launcher_options(const config::Node& launcher, const std::string& name);

class LocalLauncher : public Launcher {
 public:
  explicit LocalLauncher(LocalLauncherOptions options);
  void launch(const SweepPlan& plan, const std::vector<int>& todo) override;
  // launch(), then the jobs `source` makes, started as slots free. `plan` is the plan the source
  // appends its jobs to.
  void launch(const SweepPlan& plan, const std::vector<int>& todo, JobSource* source);
  bool interrupted() const override { return interrupted_; }

 private:
  LocalLauncherOptions options_;
  bool interrupted_ = false;
};

// How many jobs run at once and how many cores each gets: slots = n_jobs (-1: cores), never more
// than the jobs to run; threads = max(1, cores / n_jobs), n_jobs never more than the sweep's
// `planned_jobs`. A resume with fewer jobs left runs fewer at once, each with the threads the
// uninterrupted sweep gave it (another intra-op thread count changes a job's results).
struct SlotLayout {
  int slots = 1;
  int threads_per_job = 1;
};
SlotLayout slot_layout(int n_jobs, int cores, int jobs_to_run, int planned_jobs);

// The CPU ids usable by this process (its affinity mask): util's usable_cpus.
using ::trainer::usable_cpus;

// Device ids for CUDA_VISIBLE_DEVICES: this process's CUDA_VISIBLE_DEVICES list when set, else
// /dev/nvidia0..N.
std::vector<std::string> visible_gpus();

}  // namespace trainer::launch
