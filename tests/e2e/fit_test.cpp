// The real trainer binary training real models on the synthetic dataset (fast); Fashion-MNIST only
// appears here as the dataset missing from a data.root (the error). Training on the real
// Fashion-MNIST is fashion_mnist_accuracy_test.cpp. Skipped in builds without the engine
// (TRAINER_LIBTORCH=none).
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;
using namespace trainer::testing;

namespace {

std::vector<std::string> fast_fit(const std::string& run_dir) {
  return {TRAINER_BINARY,
          "fit",
          "data=synthetic",
          "data.num_samples=2048",
          "data.num_workers=0",
          "trainer.max_epochs=2",
          "trainer.deterministic=true",
          "trainer.log_every_n_steps=5",
          "hydra.run.dir=" + run_dir};
}

}  // namespace

TEST_CASE("fit trains, validates, checkpoints and tests on synthetic data") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(fast_fit("run"), dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const fs::path run = fs::path(dir.path()) / "run";
  CHECK(printed(result.out, "test/acc") > 0.5);  // 10 classes: chance is 0.1
  CHECK(fs::exists(run / "checkpoints" / "last.ckpt"));
  int best_files = 0;  // save_top_k=1: exactly one epoch_NNN.ckpt survives
  for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
    best_files += entry.path().filename().string().rfind("epoch_", 0) == 0;
  }
  CHECK(best_files == 1);
  const std::string csv = read_file(run / "metrics.csv");
  CHECK(csv.rfind("epoch,step,lr-Adam,train/loss,train/acc,samples_per_sec", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') >= 5);
  const std::string log = read_file(run / "trainer.log");
  CHECK(log.find("epoch 1 done") != std::string::npos);
  CHECK(log.find("intra-op thread") != std::string::npos);
}

TEST_CASE("trainer.enable_checkpointing=false trains and tests, and leaves no checkpoints/ directory") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  std::vector<std::string> argv = fast_fit("run");
  argv.push_back("trainer.enable_checkpointing=false");
  auto result = run_process(argv, dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(printed(result.out, "test/acc") > 0.5);
  const fs::path run = fs::path(dir.path()) / "run";
  CHECK(fs::exists(run / "metrics.csv"));
  // The directory made for the checkpoint directory's lock goes again, empty (it stayed).
  CHECK_FALSE(fs::exists(run / "checkpoints"));
}

TEST_CASE("num_sanity_val_steps -1 validates every batch before fit and gradient_clip_val 0 clips nothing") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 2048 samples, 205 of them validation: 4 batches of 64 (the red team's key audit found -1 ran none).
  const auto run_with = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = fast_fit(name);
    argv.insert(argv.end(), {"data.batch_size=64", "trainer.max_epochs=1", "test_after_fit=false"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto result = run_process(argv, dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result;
  };
  CHECK(run_with("all", {"trainer.num_sanity_val_steps=-1"})
            .err.find("sanity check: 4 validation batches ran before training") != std::string::npos);
  CHECK(run_with("two", {"trainer.num_sanity_val_steps=2"})
            .err.find("sanity check: 2 validation batches ran before training") != std::string::npos);
  CHECK(run_with("none", {"trainer.num_sanity_val_steps=0"}).err.find("sanity check") == std::string::npos);
  // Lightning: gradient_clip_val 0 is no clipping (it clipped every gradient to 0, so nothing
  // trained): the same losses as without the key ("two" ran with the default sanity steps, as these).
  const fs::path base(dir.path());
  const auto losses = [&](const std::string& name) {
    const CsvTable table = read_csv(base / name / "metrics.csv");
    return table.last("train/loss") + " " + table.last("val/loss");
  };
  run_with("clip0", {"trainer.gradient_clip_val=0"});
  run_with("clip0v", {"trainer.gradient_clip_val=0", "trainer.gradient_clip_algorithm=value"});
  run_with("clip_small", {"trainer.gradient_clip_val=0.001"});
  CHECK(losses("clip0") == losses("two"));
  CHECK(losses("clip0v") == losses("two"));
  CHECK(losses("clip_small") != losses("two"));  // a clip that bites changes them
}

TEST_CASE("a run stopped mid-epoch and resumed ends with exactly the same test metrics") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto whole = run_process(fast_fit("whole"), dir.path());
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);

  // 2048 samples, 10% validation, batch 128: 15 batches an epoch. Stop after 20 steps (epoch 1,
  // batch 5), then resume from the last checkpoint with no step limit.
  auto first = fast_fit("split");
  first.push_back("trainer.max_steps=20");
  first.push_back("test_after_fit=false");
  auto stopped = run_process(first, dir.path());
  INFO(stopped.err);
  REQUIRE(stopped.exit_code == 0);
  auto second = fast_fit("split");
  second.push_back("ckpt_path=last");
  auto resumed = run_process(second, dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("resumed from") != std::string::npos);
  CHECK(printed(resumed.out, "test/loss") == printed(whole.out, "test/loss"));
  CHECK(printed(resumed.out, "test/acc") == printed(whole.out, "test/acc"));
}

TEST_CASE("bad input stops with a clear error and a non-zero exit") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto missing = run_process({TRAINER_BINARY, "fit", "data.root=/nonexistent", "hydra.run.dir=r"}, dir.path());
  CHECK(missing.exit_code == 1);
  check_no_crash(missing);
  CHECK(missing.err.find("dataset-fashion-mnist") != std::string::npos);

  auto optimizer =
      run_process({TRAINER_BINARY, "fit", "data=synthetic", "optimizer.name=adagrad", "hydra.run.dir=r2"}, dir.path());
  CHECK(optimizer.exit_code == 1);
  check_no_crash(optimizer);
  CHECK(optimizer.err.find("adagrad") != std::string::npos);

  auto shape =
      run_process({TRAINER_BINARY, "fit", "data=synthetic", "model.input_size=100", "hydra.run.dir=r3"}, dir.path());
  CHECK(shape.exit_code == 1);
  check_no_crash(shape);
  CHECK(shape.err.find("784") != std::string::npos);

  auto nesterov = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "optimizer=sgd", "optimizer.momentum=0", "hydra.run.dir=r6"},
      dir.path());
  CHECK(nesterov.exit_code == 1);
  check_no_crash(nesterov);
  CHECK(nesterov.err.find("optimizer.nesterov") != std::string::npos);
  CHECK(nesterov.err.find("frame #") == std::string::npos);  // one paragraph, no C++ stack

  auto benchmark = run_process({TRAINER_BINARY, "fit", "data=synthetic", "trainer.deterministic=true",
                                "trainer.benchmark=true", "hydra.run.dir=r5"},
                               dir.path());
  CHECK(benchmark.exit_code == 1);
  check_no_crash(benchmark);
  CHECK(benchmark.err.find("trainer.benchmark") != std::string::npos);
  CHECK(benchmark.err.find("deterministic") != std::string::npos);

  // Epoch 0 trains well; then the learning rate jumps by 1e9 and the loss turns NaN. Fit stops
  // with a clear error, and last.ckpt still holds the good weights of epoch 0.
  auto diverged = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=2048", "data.num_workers=0", "optimizer=sgd",
       "scheduler=step", "scheduler.step_size=1", "scheduler.gamma=1e9", "trainer.max_epochs=3", "hydra.run.dir=r4"},
      dir.path());
  CHECK(diverged.exit_code == 1);
  check_no_crash(diverged);
  CHECK(diverged.err.find("not finite") != std::string::npos);
  CHECK(diverged.err.find("last good checkpoint") != std::string::npos);
  CHECK(diverged.err.find("epoch 1 done") == std::string::npos);
  auto good = run_process({TRAINER_BINARY, "validate", "data=synthetic", "data.num_samples=2048", "data.num_workers=0",
                           "ckpt_path=last", "hydra.run.dir=r4"},
                          dir.path());
  INFO(good.err);
  CHECK(good.exit_code == 0);
  CHECK(printed(good.out, "val/acc") > 0.5);
}

TEST_CASE("-m runs every job in hydra.sweep.dir/subdir, and a failing job does not stop the rest") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(
      {TRAINER_BINARY, "fit", "-m", "data=synthetic", "debug=fdr", "model.input_size=5,784", "hydra.sweep.dir=sweep"},
      dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);  // one job failed
  check_no_crash(result);
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  CHECK(fs::exists(sweep / "multirun.yaml"));
  CHECK(read_file(sweep / "0" / ".hydra" / "overrides.yaml") ==
        "- data=synthetic\n- debug=fdr\n- model.input_size=5\n");
  CHECK(read_file(sweep / "1" / ".hydra" / "overrides.yaml") ==
        "- data=synthetic\n- debug=fdr\n- model.input_size=784\n");
  CHECK(result.err.find("#0 failed") != std::string::npos);
  CHECK(result.err.find("#1 done") != std::string::npos);
  CHECK(result.err.find("expects 5 inputs per sample") != std::string::npos);
  CHECK(read_file(sweep / "1" / "trainer.log").find("test/acc") != std::string::npos);          // job 1 ran to the end
  CHECK(read_file(sweep / "1" / "trainer.log").find("expects 5 inputs") == std::string::npos);  // own log per job
}
