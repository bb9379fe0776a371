#include "trainer/launch/launcher.h"

#include <string>

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

std::unique_ptr<Launcher> make_launcher(const SweepPlan& plan) {
  std::string target = "hydra._internal.core_plugins.basic_launcher.BasicLauncher";
  if (const config::Node* node = plan.launcher.is_map() ? plan.launcher.find("_target_") : nullptr;
      node != nullptr && node->is_string()) {
    target = node->as_string();
  }
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
