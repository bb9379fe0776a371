#include "trainer/launch/slurm_launcher.h"

#include "trainer/util/error.h"

namespace trainer::launch {
namespace {

class SlurmLauncher : public Launcher {
 public:
  void launch(const SweepPlan& /*plan*/, const std::vector<int>& /*todo*/) override {
    throw Error("hydra/launcher=slurm", "the SLURM launcher is not finished yet",
                "Use hydra/launcher=basic or local for now.");
  }
};

}  // namespace

std::unique_ptr<Launcher> make_slurm_launcher(const SweepPlan& /*plan*/) {
  return std::make_unique<SlurmLauncher>();
}

}  // namespace trainer::launch
