// LR schedules over a whole run, read back from metrics.csv: a schedule that spans the run
// (onecycle, warmup_cosine, cosine with t_max<=0) uses the run's length in its own unit, so with
// interval=epoch it rises and falls over the epochs (it used to take the run's optimizer steps
// as its horizon and barely move), and with interval=step over the steps.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// lr-SGD at each logged row of `run`'s metrics.csv, in order.
std::vector<double> learning_rates(const TempDir& dir, const std::string& run, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=512",
                                   "data.num_workers=0",
                                   "optimizer=sgd",
                                   "optimizer.lr=0.1",
                                   "trainer.limit_train_batches=5",
                                   "trainer.limit_val_batches=0",
                                   "hydra.run.dir=" + run};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto result = run_process(argv, dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CsvTable csv = read_csv(fs::path(dir.path()) / run / "metrics.csv");
  size_t column = 0;
  while (column < csv.columns.size() && csv.columns[column] != "lr-SGD") ++column;
  REQUIRE(column < csv.columns.size());
  std::vector<double> rates;
  for (const auto& row : csv.rows) {
    if (column < row.size() && !row[column].empty()) rates.push_back(std::stod(row[column]));
  }
  return rates;
}

}  // namespace

TEST_CASE("onecycle per epoch rises to max_lr and falls over the run's epochs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const auto rates = learning_rates(
      dir, "onecycle_epoch",
      {"scheduler=onecycle", "scheduler.interval=epoch", "scheduler.max_lr=1.0", "scheduler.pct_start=0.6",
       "trainer.max_epochs=5", "callbacks.lr_monitor.logging_interval=epoch"});
  REQUIRE(rates.size() == 5);
  // Epoch 0 starts at max_lr/25 (PyTorch's div_factor), the peak comes at epoch 2 (0.6 * 5 - 1), the last
  // epoch is far below it.
  CHECK(rates[0] == Approx(0.04).epsilon(1e-3));
  double peak = 0;
  for (double rate : rates) peak = std::max(peak, rate);
  CHECK(peak == Approx(1.0).epsilon(1e-3));
  CHECK(rates.back() < 0.5);
}

TEST_CASE("cosine with t_max=-1 per epoch anneals to eta_min over the run's epochs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const auto rates =
      learning_rates(dir, "cosine_epoch",
                     {"scheduler=cosine", "scheduler.interval=epoch", "scheduler.t_max=-1", "scheduler.eta_min=0.0",
                      "trainer.max_epochs=4", "callbacks.lr_monitor.logging_interval=epoch"});
  REQUIRE(rates.size() == 4);
  CHECK(rates[0] == Approx(0.1));
  // cos over 4 epochs: 0.1, 0.0854, 0.05, 0.0146.
  CHECK(rates[2] == Approx(0.05).epsilon(1e-3));
  CHECK(rates[3] == Approx(0.1 * (1 + std::cos(3.14159265358979 * 3 / 4)) / 2).epsilon(1e-3));
}

TEST_CASE("cosine with t_max shorter than the run rises again past it as PyTorch's CosineAnnealingLR") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const auto rates =
      learning_rates(dir, "cosine_past",
                     {"scheduler=cosine", "scheduler.interval=epoch", "scheduler.t_max=2", "scheduler.eta_min=0.0",
                      "trainer.max_epochs=4", "callbacks.lr_monitor.logging_interval=epoch"});
  REQUIRE(rates.size() == 4);
  // torch 2.11: CosineAnnealingLR(T_max=2) gives 0.1, 0.05, 0.0, 0.05 (it was held at 0.0).
  CHECK(rates[1] == Approx(0.05).epsilon(1e-3));
  CHECK(rates[2] == Approx(0.0).margin(1e-9));
  CHECK(rates[3] == Approx(0.05).epsilon(1e-3));
}

TEST_CASE("a warm-up as long as the run warns that the rate never reaches optimizer.lr") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto run = [&](const std::string& name, const std::string& warmup) {
    return run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=512", "trainer.max_epochs=1",
                        "test_after_fit=false", "scheduler=warmup_cosine", "scheduler.warmup_steps=" + warmup,
                        "hydra.run.dir=" + name},
                       dir.path());
  };
  const auto long_warmup = run("long", "500");  // the schedule's default, against 4 optimizer steps
  INFO(long_warmup.err);
  REQUIRE(long_warmup.exit_code == 0);
  CHECK(long_warmup.err.find("scheduler.warmup_steps=500 is not shorter than the run's 4 optimizer steps: the rate "
                             "climbs the whole run and ends at 8e-06, never reaching optimizer.lr=0.001") !=
        std::string::npos);
  const auto short_warmup = run("short", "2");
  REQUIRE(short_warmup.exit_code == 0);
  CHECK(short_warmup.err.find("scheduler.warmup_steps") == std::string::npos);
}

TEST_CASE("the LR monitor per step logs the rate each step used, as Lightning logs it before the batch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const auto rates = learning_rates(
      dir, "step_rates",
      {"scheduler=step", "scheduler.interval=step", "scheduler.step_size=1", "scheduler.gamma=0.5",
       "trainer.max_epochs=1", "trainer.log_every_n_steps=1", "callbacks.lr_monitor.logging_interval=step"});
  // Steps 1..4 (460 training samples in batches of 128) ran at 0.1, 0.05, 0.025 and 0.0125: the
  // first rate was never logged, and 0.00625, which no step used, was.
  REQUIRE(rates.size() == 4);
  CHECK(rates[0] == Approx(0.1));
  CHECK(rates[1] == Approx(0.05));
  CHECK(rates[3] == Approx(0.1 / 8));
}

TEST_CASE("cosine per step with the shipped t_max (the epoch count) warns that it counts steps") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto warned =
      run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=512", "trainer.max_epochs=2",
                   "test_after_fit=false", "scheduler=cosine", "scheduler.interval=step", "hydra.run.dir=steps"},
                  dir.path());
  INFO(warned.err);
  REQUIRE(warned.exit_code == 0);
  CHECK(contains(warned.err,
                 "scheduler.t_max=2 with scheduler.interval=step counts optimizer steps: the rate reaches "
                 "eta_min at step 2 and climbs back, a cycle every 4 steps, in epochs of 4 steps. Set "
                 "scheduler.t_max=-1 (the run's 8 steps) or a number of steps."));
  auto whole = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=512", "trainer.max_epochs=2", "test_after_fit=false",
       "scheduler=cosine", "scheduler.interval=step", "scheduler.t_max=-1", "hydra.run.dir=whole"},
      dir.path());
  REQUIRE(whole.exit_code == 0);
  CHECK_FALSE(contains(whole.err, "scheduler.t_max"));
}
