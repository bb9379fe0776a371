// Batch-size tuning in the real trainer binary on synthetic data on the CPU (docs/tuning.md):
// `trainer tune batch_size` and `trainer fit trainer.auto_scale_batch_size=...` under a memory
// limit. The model is an MLP with a tiny hidden layer on 32x32 inputs, so a trial's memory is
// dominated by its float input batch (4 KiB a sample): the batch found is bounded by
// limit / 4 KiB, every trial's measured memory is at least its input batch, the search's last
// trials bracket the result, a larger limit gives a larger batch, and tuning changes no weights.
#include <csignal>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

constexpr double kInputMiBPerSample = 32.0 * 32.0 * 4.0 / (1024.0 * 1024.0);  // float 1x32x32

std::vector<std::string> tune_command(const std::string& mode, const std::string& limit_mb) {
  return {TRAINER_BINARY,
          "tune",
          "batch_size",
          "data=synthetic",
          "data.num_samples=1024",
          "data.image_shape=[1,32,32]",
          "model.hidden_sizes=[4]",
          "model.input_size=1024",
          "+tuner.mode=" + mode,
          "+tuner.max_memory_mb=" + limit_mb,
          "+tuner.steps_per_trial=2",
          "hydra.run.dir=run"};
}

struct Trial {
  long long batch_size;
  bool fits;
  double memory_mb;
};

// The trials listed in tune_batch_size.yaml (written by our own YAML writer, one key per line).
std::vector<Trial> read_trials(const std::string& yaml) {
  std::vector<Trial> trials;
  const std::regex entry(R"(- batch_size: (\d+)\n *fits: (true|false)\n *memory_mb: ([0-9.eE+-]+))");
  for (auto it = std::sregex_iterator(yaml.begin(), yaml.end(), entry); it != std::sregex_iterator(); ++it) {
    trials.push_back({std::stoll((*it)[1].str()), (*it)[2].str() == "true", std::stod((*it)[3].str())});
  }
  return trials;
}

const Trial* find_trial(const std::vector<Trial>& trials, long long batch_size) {
  for (const Trial& trial : trials) {
    if (trial.batch_size == batch_size) return &trial;
  }
  return nullptr;
}

// Runs a search in a fresh directory; returns the batch found after checking what every search
// must satisfy.
long long tuned(const std::string& mode, double limit_mb, std::vector<Trial>* trials_out = nullptr) {
  TempDir dir;
  auto result = run_process(tune_command(mode, std::to_string(limit_mb)), dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const long long batch_size = static_cast<long long>(printed(result.out, "tuned_batch_size"));
  CHECK(contains(result.out, "batch size search (" + mode));
  // The run's config carries the batch, and the result file the trials.
  const fs::path run = fs::path(dir.path()) / "run";
  const std::string config = read_file(run / ".hydra" / "config.yaml");
  CHECK(std::regex_search(config, std::regex("\ndata:\n(  .*\n)*  batch_size: " + std::to_string(batch_size) + "\n")));
  CHECK_FALSE(fs::exists(run / "metrics.csv"));  // a search logs no metrics
  const std::string yaml = read_file(run / "tune_batch_size.yaml");
  CHECK(contains(yaml, "mode: " + mode + "\n"));
  CHECK(contains(yaml, "batch_size: " + std::to_string(batch_size) + "\n"));
  const std::vector<Trial> trials = read_trials(yaml);
  REQUIRE(trials.size() >= 2);
  for (const Trial& trial : trials) {
    INFO("trial " << trial.batch_size << " " << trial.memory_mb << " MiB");
    // Honest measurement: a trial holds at least its float input batch; the ones that fit stay
    // within the limit.
    CHECK(trial.memory_mb >= trial.batch_size * kInputMiBPerSample);
    if (trial.fits) CHECK(trial.memory_mb <= limit_mb);
    if (!trial.fits) CHECK(trial.memory_mb > limit_mb);
  }
  // Within the limit by the input batch alone, and the largest batch that fit.
  CHECK(batch_size * kInputMiBPerSample <= limit_mb);
  for (const Trial& trial : trials) {
    if (trial.fits) CHECK(trial.batch_size <= batch_size);
  }
  if (trials_out) *trials_out = trials;
  return batch_size;
}

}  // namespace

TEST_CASE("tune batch_size: power and binsearch under a CPU memory limit") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  std::vector<Trial> power_trials;
  std::vector<Trial> binsearch_trials;
  const long long power = tuned("power", 1.0, &power_trials);
  const long long binsearch = tuned("binsearch", 1.0, &binsearch_trials);
  // power: doublings of init_val 2, ending at the first batch that did not fit (twice the result).
  CHECK((power & (power - 1)) == 0);
  REQUIRE(find_trial(power_trials, 2 * power) != nullptr);
  CHECK_FALSE(find_trial(power_trials, 2 * power)->fits);
  CHECK(power_trials.back().batch_size == 2 * power);
  // binsearch: at least power's result, and the batch one above it was tried and did not fit.
  CHECK(binsearch >= power);
  CHECK(binsearch < 2 * power);
  REQUIRE(find_trial(binsearch_trials, binsearch + 1) != nullptr);
  CHECK_FALSE(find_trial(binsearch_trials, binsearch + 1)->fits);
  // A 4x larger limit: a larger batch.
  CHECK(tuned("binsearch", 4.0) > binsearch);
}

TEST_CASE("fit with trainer.auto_scale_batch_size: searches, fits with the batch found, changes no weights") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  // Adam (state made in every trial) and dropout (the RNG drawn in every trial): tuning must undo both.
  const std::vector<std::string> common = {
      "data=synthetic",        "data.num_samples=1024", "data.image_shape=[1,32,32]",        "model.hidden_sizes=[4]",
      "model.input_size=1024", "trainer.max_epochs=1",  "trainer.enable_progress_bar=false", "hydra.run.dir=run"};
  TempDir tuned_dir;
  std::vector<std::string> auto_scaled = {TRAINER_BINARY, "fit", "trainer.auto_scale_batch_size=binsearch",
                                          "+tuner.max_memory_mb=1"};
  auto_scaled.insert(auto_scaled.end(), common.begin(), common.end());
  auto first = run_process(auto_scaled, tuned_dir.path());
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  const long long batch_size = static_cast<long long>(printed(first.out, "tuned_batch_size"));
  CHECK(batch_size != 128);  // not the configured batch, or the comparison below proves nothing
  const std::string log = read_file(fs::path(tuned_dir.path()) / "run" / "trainer.log");
  CHECK(contains(log, "fit runs with the batch size found: data.batch_size=" + std::to_string(batch_size)));
  const std::string config = read_file(fs::path(tuned_dir.path()) / "run" / ".hydra" / "config.yaml");
  CHECK(contains(config, "  batch_size: " + std::to_string(batch_size) + "\n"));

  TempDir plain_dir;
  std::vector<std::string> plain = {TRAINER_BINARY, "fit", "data.batch_size=" + std::to_string(batch_size)};
  plain.insert(plain.end(), common.begin(), common.end());
  auto second = run_process(plain, plain_dir.path());
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(printed(first.out, "test/loss") == printed(second.out, "test/loss"));
  CHECK(printed(first.out, "test/acc") == printed(second.out, "test/acc"));
}

TEST_CASE("tune batch_size: no limit on the CPU means half of MemAvailable; the training set caps the batch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result =
      run_process({TRAINER_BINARY, "tune", "batch_size", "data=synthetic", "data.num_samples=300",
                   "data.image_shape=[1,8,8]", "model.hidden_sizes=[4]", "model.input_size=64", "hydra.run.dir=run"},
                  dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  // 300 samples, val_fraction 0.1: 270 to train on; 2, 4, ..., 256, then 270 itself.
  CHECK(printed(result.out, "tuned_batch_size") == 270);
  CHECK(contains(result.out, "half of MemAvailable"));
  CHECK(contains(result.out, "training set size"));
}

TEST_CASE("tune batch_size: bad modes and values, DDP, and a first trial that does not fit are refused") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::vector<std::string> base = {
      TRAINER_BINARY, "tune", "batch_size", "data=synthetic", "data.num_samples=256", "hydra.run.dir=run"};
  auto run_with = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    TempDir dir;
    return run_process(args, dir.path());
  };
  auto bad_mode = run_with({"+tuner.mode=triple"});
  CHECK(bad_mode.exit_code != 0);
  check_no_crash(bad_mode);
  CHECK(contains(bad_mode.err, "tuner.mode (override '+tuner.mode=triple'): triple is not one of power or binsearch"));
  CHECK(contains(bad_mode.err, "power: double until a trial fails"));

  TempDir fit_dir;
  auto bad_fit_mode = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256",
                                   "trainer.auto_scale_batch_size=exhaustive", "hydra.run.dir=run"},
                                  fit_dir.path());
  CHECK(bad_fit_mode.exit_code != 0);
  check_no_crash(bad_fit_mode);
  CHECK(contains(bad_fit_mode.err, "trainer.auto_scale_batch_size"));

  // The mode named twice, differently: one of them would be ignored. Named once in
  // trainer.auto_scale_batch_size, the tune command searches in it.
  auto twice = run_with({"trainer.auto_scale_batch_size=binsearch", "+tuner.mode=power"});
  CHECK(twice.exit_code != 0);
  check_no_crash(twice);
  CHECK(contains(twice.err,
                 "tuner.mode (override '+tuner.mode=power'): trainer.auto_scale_batch_size=binsearch names "
                 "another mode for the same search"));
  auto once = run_with({"trainer.auto_scale_batch_size=binsearch", "+tuner.max_memory_mb=64", "+tuner.max_trials=3"});
  INFO(once.err);
  CHECK(once.exit_code == 0);
  CHECK(contains(once.err, "batch size search (binsearch"));

  auto zero = run_with({"+tuner.init_val=0"});
  CHECK(zero.exit_code != 0);
  check_no_crash(zero);
  CHECK(contains(
      zero.err,
      "tuner.init_val (override '+tuner.init_val=0'): 0 is out of range: the first batch size tried, at least 1"));

  auto typo = run_with({"+tuner.max_memory=10"});
  CHECK(typo.exit_code != 0);
  check_no_crash(typo);
  CHECK(contains(typo.err, "tuner.max_memory"));

  auto ddp = run_with({"trainer.accelerator=cpu", "trainer.devices=2"});
  CHECK(ddp.exit_code != 0);
  check_no_crash(ddp);
  CHECK(contains(ddp.err, "does not run in a data-parallel job (2 processes)"));
  auto pipeline = run_with({"trainer.accelerator=cpu", "trainer.devices=2", "trainer.strategy=pipeline"});
  CHECK(pipeline.exit_code != 0);
  check_no_crash(pipeline);
  CHECK(contains(pipeline.err, "does not run in a pipeline-parallel job (2 processes)"));
  CHECK_FALSE(contains(pipeline.err, "data-parallel"));

  auto too_small = run_with({"+tuner.max_memory_mb=0.01", "+tuner.init_val=64"});
  INFO(too_small.out << too_small.err);
  CHECK(too_small.exit_code != 0);
  check_no_crash(too_small);
  CHECK(contains(too_small.err, "the first batch-size trial, a batch of 64, did not fit"));
  CHECK(contains(too_small.err, "+tuner.init_val=1"));

  TempDir no_target;
  auto missing = run_process({TRAINER_BINARY, "tune"}, no_target.path());
  CHECK(missing.exit_code != 0);
  check_no_crash(missing);
}

TEST_CASE("tune batch_size: SIGTERM stops the search before its next trial, naming the largest batch that fit") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  // 20 steps a trial on up to 65,536 samples of 1x32x32: the later trials take seconds each, so
  // the search is far from done when the signal comes after the trial of 4.
  TempDir dir;
  const fs::path log = fs::path(dir.path()) / "run" / "trainer.log";
  bool signalled = false;
  const auto result = run_and_signal(
      {TRAINER_BINARY, "tune", "batch_size", "data=synthetic", "data.num_samples=65536", "data.image_shape=[1,32,32]",
       "model.hidden_sizes=[256]", "model.input_size=1024", "+tuner.max_memory_mb=8192", "+tuner.steps_per_trial=20",
       "hydra.run.dir=run"},
      dir.path(), [&] { return contains(read_file(log.string()), "batch size trial 4: fits"); }, SIGTERM, &signalled);
  INFO(result.out << result.err);
  REQUIRE(signalled);
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(result.exit_code != 128 + SIGTERM);  // handled, not killed
  CHECK(contains(result.err, "signal 15: the batch-size search stopped before its trial of "));
  CHECK(contains(result.err, "the largest batch that fit so far was "));
  CHECK(contains(result.err, "Run it again to finish the search"));
  CHECK_FALSE(contains(result.out, "tuned_batch_size="));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / "tune_batch_size.yaml"));
}

TEST_CASE("--help lists trainer tune batch_size") {
  TempDir dir;
  auto result = run_process({TRAINER_BINARY, "--help"}, dir.path());
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.out, "trainer tune batch_size [overrides...]"));
  CHECK(contains(result.out, "tune"));
}
