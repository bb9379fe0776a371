// ASHA early stopping end to end: the real trainer binary runs the same sweep as a full grid and
// under hydra/sweeper=asha (local launcher, two jobs at a time). The clearly bad configs (tiny
// learning rates) are stopped at the first rung with their checkpoint kept, fewer epochs are
// spent, and the best job is the same. Skipped in builds without the engine.
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

constexpr int kJobs = 4;
constexpr int kEpochs = 4;

// Jobs 0-1 learn (lr 0.01, 1e-4); jobs 2-3 barely move (lr 1e-7, 1e-8). Epochs of 32k samples
// (about 0.8 s each on 2 cores) outlast the launcher's half-second polling, so a cut job is still running
// when its SIGTERM comes (a job that already ended keeps its status). val/loss is monitored:
// on synthetic data val/acc reaches 1.0 for every job that learns, val/loss still ranks them.
std::vector<std::string> sweep(const std::string& sweep_dir, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "-m",
                                   "data=synthetic",
                                   "data.num_samples=32768",
                                   "data.num_workers=0",
                                   "trainer.max_epochs=" + std::to_string(kEpochs),
                                   "trainer.deterministic=true",
                                   "test_after_fit=false",
                                   "callbacks.model_checkpoint.monitor=val/loss",
                                   "callbacks.model_checkpoint.mode=min",
                                   "optimizer.lr=0.01,0.0001,1e-7,1e-8",
                                   "hydra/launcher=local",
                                   "hydra.launcher.n_jobs=2",
                                   "hydra.sweep.dir=" + sweep_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

struct JobResult {
  int epochs = 0;  // epochs completed (rows with a val/loss)
  double best = std::numeric_limits<double>::infinity();
  std::string status;
};

JobResult job_result(const fs::path& sweep_dir, int number) {
  JobResult out;
  const CsvTable csv = read_csv(sweep_dir / std::to_string(number) / "metrics.csv");
  size_t column = csv.columns.size();
  for (size_t k = 0; k < csv.columns.size(); ++k) {
    if (csv.columns[k] == "val/loss") column = k;
  }
  for (const auto& row : csv.rows) {
    if (column < row.size() && !row[column].empty()) {
      ++out.epochs;
      out.best = std::min(out.best, std::stod(row[column]));
    }
  }
  const std::string status = read_file(sweep_dir / ".sweep" / "status" / (std::to_string(number) + ".yaml"));
  const size_t at = status.find("status: ");
  if (at != std::string::npos) out.status = status.substr(at + 8, status.find('\n', at) - at - 8);
  return out;
}

int best_job(const std::vector<JobResult>& jobs) {
  int best = 0;
  for (int k = 1; k < static_cast<int>(jobs.size()); ++k) {
    if (jobs[k].best < jobs[best].best) best = k;
  }
  return best;
}

}  // namespace

TEST_CASE("ASHA stops the clearly bad jobs, spends fewer epochs than the grid and finds its best job") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path grid_dir = fs::path(dir.path()) / "grid";
  const fs::path asha_dir = fs::path(dir.path()) / "asha";

  const ProcessResult grid = run_process(sweep(grid_dir.string(), {}), dir.path());
  INFO(grid.out << grid.err);
  REQUIRE(grid.exit_code == 0);
  const ProcessResult asha =
      run_process(sweep(asha_dir.string(), {"hydra/sweeper=asha", "hydra.sweeper.max_t=4",
                                            "hydra.sweeper.grace_period=1", "hydra.sweeper.reduction_factor=2"}),
                  dir.path());
  INFO(asha.out << asha.err);
  REQUIRE(asha.exit_code == 0);

  std::vector<JobResult> grid_jobs, asha_jobs;
  int grid_epochs = 0, asha_epochs = 0;
  for (int n = 0; n < kJobs; ++n) {
    grid_jobs.push_back(job_result(grid_dir, n));
    asha_jobs.push_back(job_result(asha_dir, n));
    INFO("job " << n << ": grid " << grid_jobs[n].status << " " << grid_jobs[n].epochs << " epochs, asha "
                << asha_jobs[n].status << " " << asha_jobs[n].epochs << " epochs");
    CHECK(grid_jobs[n].status == "done");
    CHECK(grid_jobs[n].epochs == kEpochs);
    grid_epochs += grid_jobs[n].epochs;
    asha_epochs += asha_jobs[n].epochs;
  }
  // The tiny learning rates are cut at the first rung (epoch 1; SIGTERM may land in epoch 2),
  // ending like an interrupted run: status stopped_early, last.ckpt kept.
  for (int n : {2, 3}) {
    INFO("job " << n);
    CHECK(asha_jobs[n].status == "stopped_early");
    CHECK(asha_jobs[n].epochs >= 1);
    CHECK(asha_jobs[n].epochs < kEpochs);
    CHECK(fs::exists(asha_dir / std::to_string(n) / "checkpoints" / "last.ckpt"));
  }
  CHECK(asha_jobs[0].status == "done");
  CHECK(asha_jobs[0].epochs == kEpochs);
  CHECK(asha_epochs < grid_epochs);
  CHECK(best_job(asha_jobs) == best_job(grid_jobs));
  CHECK(best_job(grid_jobs) == 0);
}

// A resumed job that had passed ASHA's rungs was judged again at the first of them as it resumed,
// against results recorded there after it, and stopped: a decision the sweep, uninterrupted, never
// made. The scene: job 0 (lr 0, the worst) passed every rung first; job 1 (the best) came after.
// Job 0 is then made interrupted at its first epoch (its epoch_000.ckpt as last.ckpt) and resumed.
TEST_CASE("ASHA: a resumed job is not stopped again at rungs it passed before it was interrupted") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep_dir = fs::path(dir.path()) / "sweep";
  auto first = run_process(
      {TRAINER_BINARY, "fit", "-m", "hydra/sweeper=asha", "hydra.sweeper.max_t=60", "hydra.sweeper.grace_period=1",
       "hydra.sweeper.reduction_factor=2", "data=synthetic", "data.num_samples=256", "data.num_workers=0",
       "trainer.max_epochs=60", "test_after_fit=false", "optimizer.lr=0,0.01", "hydra.sweep.dir=" + sweep_dir.string()},
      dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(contains(first.err, "[sweep] #0 done"));  // first at every rung: never cut
  const fs::path checkpoints = sweep_dir / "0" / "checkpoints";
  REQUIRE(fs::exists(checkpoints / "epoch_000.ckpt"));
  fs::copy_file(checkpoints / "epoch_000.ckpt", checkpoints / "last.ckpt", fs::copy_options::overwrite_existing);
  const fs::path status = sweep_dir / ".sweep" / "status" / "0.yaml";
  std::string text = read_file(status);
  REQUIRE(text.find("status: done") != std::string::npos);
  text.replace(text.find("status: done"), 12, "status: interrupted");
  write_text(status, text);

  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", sweep_dir.string()}, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "[sweep] #0 started (resuming from last.ckpt)"));
  CHECK_FALSE(contains(resumed.err, "stopped early by ASHA"));
  CHECK(contains(resumed.err, "[sweep] #0 done"));
  CHECK(contains(read_file(status), "status: done"));
}
