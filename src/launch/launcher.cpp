#include "trainer/launch/launcher.h"

#include <string>

#include "trainer/config/known_settings.h"
#include "trainer/launch/local_launcher.h"
#include "trainer/util/error.h"

#if __has_include("trainer/launch/slurm_launcher.h")
#include "trainer/launch/slurm_launcher.h"
#define TRAINER_HAVE_SLURM_LAUNCHER 1
#endif

namespace trainer::launch {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Launcher::~Launcher() = default;
JobSource::~JobSource() = default;

namespace {
InProcessJob& in_process_job_slot() {
  static InProcessJob job;
  return job;
}
}  // namespace

void set_in_process_job(InProcessJob job) { in_process_job_slot() = std::move(job); }
const InProcessJob& in_process_job() { return in_process_job_slot(); }

namespace {

std::string launcher_target(const config::Node& launcher) {
  if (const config::Node* node = launcher.is_map() ? launcher.find("_target_") : nullptr;
      node != nullptr && node->is_string()) {
    return node->as_string();
  }
  return "hydra._internal.core_plugins.basic_launcher.BasicLauncher";
}

}  // namespace

void check_launcher_settings(const config::Node& launcher) {
  config::refuse_plugin_value(launcher, "hydra.launcher", "hydra/launcher");
  const std::string target = launcher_target(launcher);
  if (ends_with(target, ".BasicLauncher")) {
    // Hydra's basic launcher has no setting; trainer reads fail_fast (docs/sweeps.md).
    config::refuse_unknown_settings(launcher, "hydra.launcher", "the basic launcher", {"_target_", "fail_fast"});
  } else if (target == "trainer.launcher.LocalLauncher") {
    config::refuse_unknown_settings(launcher, "hydra.launcher", "the local launcher",
                                    {"_target_", "n_jobs", "gpus_per_job", "fail_fast"});
  } else if (ends_with(target, ".JoblibLauncher")) {
    // hydra-joblib-launcher's settings; trainer reads n_jobs, gpus_per_job and fail_fast.
    config::refuse_unknown_settings(
        launcher, "hydra.launcher", "the joblib launcher",
        {"_target_", "n_jobs", "backend", "prefer", "require", "verbose", "timeout", "pre_dispatch", "batch_size",
         "temp_folder", "max_nbytes", "mmap_mode", "fail_fast", "gpus_per_job"});
  }
}

std::unique_ptr<Launcher> make_launcher(const SweepPlan& plan) {
  const std::string target = launcher_target(plan.launcher);
  check_launcher_settings(plan.launcher);
  if (ends_with(target, ".BasicLauncher")) {
    return std::make_unique<LocalLauncher>(local_launcher_options(plan.launcher, "basic"));
  }
  if (target == "trainer.launcher.LocalLauncher") {
    return std::make_unique<LocalLauncher>(local_launcher_options(plan.launcher, "local"));
  }
  if (ends_with(target, ".JoblibLauncher")) {
    return std::make_unique<LocalLauncher>(local_launcher_options(plan.launcher, "joblib"));
  }
#ifdef TRAINER_HAVE_SLURM_LAUNCHER
  if (ends_with(target, ".SlurmLauncher")) return make_slurm_launcher(plan);
#endif
  throw Error("hydra.launcher._target_", "trainer has no launcher '" + target + "'",
              "Pick one with hydra/launcher=basic, local, joblib or slurm.");
}

}  // namespace trainer::launch
