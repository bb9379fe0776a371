// trainer.strategy=pipeline with real processes on CPU (Gloo): a model cut into stages, one
// process each, its batches cut into micro-batches. A pipeline's step is one process's step with
// gradient accumulation over the same micro-batches, so the two end with the same weights.
// Skipped without the engine.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// Plain SGD, no dropout: 1024 synthetic samples, 1/8 held out, 896 training samples (14 batches
// of 64). Checkpoints on (the default), so the weights are read back through trainer export.
std::vector<std::string> fit_command(const fs::path& run_dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=1024",
                                   "data.val_fraction=0.125",
                                   "model.dropout=0",
                                   "optimizer=sgd",
                                   "optimizer.weight_decay=0",
                                   "trainer.num_sanity_val_steps=0",
                                   "trainer.enable_progress_bar=false",
                                   "trainer.deterministic=true",
                                   "test_after_fit=false",
                                   "hydra.run.dir=" + run_dir.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

ProcessResult run_ok(const std::vector<std::string>& argv) {
  ProcessResult result = run_process(argv);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  return result;
}

// The same weights, and training moved them far more than the difference.
void check_same_training(const fs::path& a, const fs::path& b, const fs::path& start, double tolerance) {
  const Weights wa = exported_weights(a);
  const Weights wb = exported_weights(b);
  const double largest = largest_difference(wa, wb);
  const double moved = largest_difference(wa, exported_weights(start));
  INFO("largest difference " << largest << ", largest change by training " << moved);
  CHECK(largest <= tolerance);
  CHECK(moved > 1e-3);
}

}  // namespace

TEST_CASE(
    "2-stage GPipe and 1F1B runs of the mlp end with the weights of one process accumulating the same "
    "micro-batches") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  run_ok(fit_command(root / "start", {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"}));
  // One process: batches of 16, four to a step.
  run_ok(
      fit_command(root / "one", {"data.batch_size=16", "trainer.accumulate_grad_batches=4", "trainer.max_epochs=2"}));
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    SECTION(schedule) {
      const fs::path run = root / schedule;
      ProcessResult two = run_ok(fit_command(
          run, {"data.batch_size=64", "trainer.max_epochs=2", "trainer.devices=2", "trainer.strategy=pipeline",
                "trainer.pipeline.microbatches=4", "trainer.pipeline.schedule=" + schedule}));
      CHECK(two.err.find("pipeline: 2 stages, " + schedule + " schedule, 4 micro-batches of 16 samples per batch") !=
            std::string::npos);
      CHECK(two.err.find("stage 0 of 2: layers.0 .. layers.2 (200,960 parameters)") != std::string::npos);
      CHECK(two.err.find("stage 1 of 2: layers.3 .. layers.5 (34,186 parameters)") != std::string::npos);
      CHECK(two.err.find("share of each stage's schedule spent idle") != std::string::npos);
      check_same_training(root / "one", run, root / "start", 1e-5);
      // The validation through the pipeline matches one process's.
      const CsvTable a = read_csv(root / "one" / "metrics.csv");
      const CsvTable b = read_csv(run / "metrics.csv");
      REQUIRE(!a.last("val/loss").empty());
      CHECK(std::fabs(std::stod(a.last("val/loss")) - std::stod(b.last("val/loss"))) < 1e-5);
      CHECK(a.last("val/acc") == b.last("val/acc"));
      CHECK(std::fabs(std::stod(a.last("train/loss_epoch")) - std::stod(b.last("train/loss_epoch"))) < 1e-5);
    }
  }
}

TEST_CASE(
    "cnn and resnet, batch norm per micro-batch: a pipeline ends with the weights and running statistics of "
    "one process accumulating the same micro-batches") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  struct Model {
    std::string name;
    std::vector<std::string> args;
    std::string statistic;  // a running mean in the second stage
  };
  const std::vector<Model> models = {
      {"cnn", {"model=cnn", "model.channels=[4,8]", "model.hidden_size=16"}, "features.5.running_mean"},
      // In float64: ten blocks of batch norm over 8 random samples amplify float32's rounding (one
      // process runs 2 threads, each stage 1, so sums run in another order) from 1e-8 after the
      // first step to 0.2 after the eighth; float64's stays far below the tolerance.
      {"resnet",
       {"model=resnet", "model.depth=18", "model.width=4", "trainer.pipeline.split_points=[layer3.0]", "precision=64"},
       "layer4.1.bn2.running_mean"}};
  for (const Model& model : models) {
    SECTION(model.name) {
      auto command = [&](const std::string& name, std::vector<std::string> extra) {
        extra.insert(extra.end(), model.args.begin(), model.args.end());
        extra.push_back("data.num_samples=512");
        std::vector<std::string> argv = fit_command(root / name, extra);
        if (model.name == "resnet") argv.erase(std::find(argv.begin(), argv.end(), "model.dropout=0"));  // none
        return argv;
      };
      run_ok(command("start", {"data.batch_size=32", "trainer.max_steps=1", "optimizer.lr=0"}));
      run_ok(command("one", {"data.batch_size=8", "trainer.accumulate_grad_batches=4", "trainer.max_steps=8"}));
      ProcessResult two = run_ok(command("two", {"data.batch_size=32", "trainer.max_steps=8", "trainer.devices=2",
                                                 "trainer.strategy=pipeline", "trainer.pipeline.microbatches=4"}));
      CHECK(two.err.find("pipeline: 2 stages, 1f1b schedule, 4 micro-batches of 8 samples") != std::string::npos);
      const Weights one = exported_weights(root / "one");
      const Weights pipelined = exported_weights(root / "two");
      REQUIRE(one.count(model.statistic) == 1);
      const double moved = largest_difference(one, exported_weights(root / "start"));
      const double largest = largest_difference(one, pipelined);
      INFO("largest difference " << largest << ", largest change by training " << moved);
      CHECK(largest <= 1e-5);
      CHECK(moved > 1e-3);
    }
  }
}

TEST_CASE("2 stages x 2 replicas on 4 processes end with the weights of one process on the whole batch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  run_ok(fit_command(root / "start", {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"}));
  run_ok(fit_command(root / "one", {"data.batch_size=64", "trainer.max_epochs=1"}));
  // Each replica takes half of every batch of 64, in two micro-batches of 16.
  ProcessResult four = run_ok(fit_command(
      root / "four", {"data.batch_size=32", "trainer.max_epochs=1", "trainer.devices=4", "trainer.strategy=pipeline",
                      "trainer.pipeline.stages=2", "trainer.pipeline.microbatches=2"}));
  CHECK(four.err.find("pipeline: 2 data-parallel replicas of 2 stages") != std::string::npos);
  check_same_training(root / "one", root / "four", root / "start", 1e-5);
}

TEST_CASE("a pipeline killed with SIGKILL resumes exactly, each stage from its own part of the checkpoint") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // Dropout on: each stage's random draws must continue from its own saved generator.
  auto command = [&](const fs::path& run, std::vector<std::string> extra) {
    std::vector<std::string> argv = {TRAINER_BINARY,
                                     "fit",
                                     "data=synthetic",
                                     "data.num_samples=2048",
                                     "data.batch_size=64",
                                     "trainer.max_epochs=3",
                                     "trainer.deterministic=true",
                                     "trainer.enable_progress_bar=false",
                                     "trainer.devices=2",
                                     "trainer.strategy=pipeline",
                                     "callbacks.model_checkpoint.every_n_train_steps=10",
                                     "callbacks.model_checkpoint.save_top_k=0",
                                     "hydra.run.dir=" + run.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  ProcessResult whole = run_ok(command(root / "whole", {}));
  const fs::path last = root / "killed" / "checkpoints" / "last.ckpt";
  bool killed = false;
  ProcessResult first = run_and_signal(
      command(root / "killed", {}), dir.path(), [&] { return fs::exists(last); }, SIGKILL, &killed);
  REQUIRE(killed);
  CHECK(first.exit_code == 128 + SIGKILL);
  // The main file and stage 1's part of the same step, and nothing else of stage 1's.
  std::vector<std::string> parts;
  for (const auto& entry : fs::directory_iterator(last.parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("last.ckpt.stage1-step", 0) == 0) parts.push_back(name);
  }
  CHECK(!parts.empty());
  CHECK(parts.size() <= 2);  // the newest, and the one before it while the main file is replaced
  ProcessResult resumed = run_ok(command(root / "killed", {"ckpt_path=last"}));
  CHECK(resumed.err.find("resumed from ") != std::string::npos);
  const Weights a = exported_weights(root / "whole");
  const Weights b = exported_weights(root / "killed");
  CHECK(largest_difference(a, b) == 0.0);
  CHECK(printed(whole.out, "test/loss") == printed(resumed.out, "test/loss"));
  const CsvTable ma = read_csv(root / "whole" / "metrics.csv");
  const CsvTable mb = read_csv(root / "killed" / "metrics.csv");
  CHECK(ma.last("val/loss") == mb.last("val/loss"));
}

TEST_CASE("a killed stage ends the pipeline with an error naming it") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "killed";
  pid_t killed = -1;
  bool unused = false;
  auto result = run_and_signal(
      fit_command(
          run, {"data.num_samples=65536", "data.batch_size=32", "trainer.max_epochs=20", "trainer.log_every_n_steps=10",
                "trainer.devices=2", "trainer.strategy=pipeline", "trainer.dist_timeout=120"}),
      dir.path(),
      [&] {
        if (killed < 0 && read_file(run / "trainer.log").find(" step 20 ") != std::string::npos) {
          killed = find_rank(run.string(), 1);
          if (killed > 0) kill(killed, SIGKILL);
        }
        return false;
      },
      SIGTERM, &unused);
  INFO(result.err);
  REQUIRE(killed > 0);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  const std::string error = result.err.substr(result.err.rfind("\nError: ") + 1);
  CHECK(error.find("rank 1 (pipeline stage 1, pid " + std::to_string(killed) + ") was killed by signal 9") !=
        std::string::npos);
  CHECK(result.err.find("fit finished") == std::string::npos);
}

TEST_CASE("pipeline mistakes are refused before anything runs, naming the keys and the fix") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "bad";
  auto refused = [&](std::vector<std::string> extra, const std::string& expected) {
    extra.push_back("trainer.strategy=pipeline");
    auto result = run_process(fit_command(run, extra), dir.path());
    INFO(result.err);
    CHECK(result.exit_code != 0);
    check_clean_error(result);
    CHECK(result.err.find(expected) != std::string::npos);
  };
  refused({"trainer.devices=1"}, "trainer.strategy=pipeline cuts the model into stages, one process each");
  refused({"trainer.devices=3", "trainer.pipeline.stages=2"},
          "3 processes (trainer.devices) do not make whole pipelines of 2 stages");
  refused({"trainer.devices=2", "data.batch_size=30", "trainer.pipeline.microbatches=4"},
          "a batch of 30 samples (data.batch_size) does not split into 4 equal micro-batches");
  refused({"trainer.devices=2", "trainer.pipeline.split_points=[layers.3,layers.4]"},
          "2 split point(s) make 3 stages, but the pipeline has 2");
  refused({"trainer.devices=2", "trainer.pipeline.split_points=[layers.9]"},
          "'layers.9' is not a module where the mlp model can be cut");
  refused({"trainer.devices=2", "trainer.pipeline.schedule=interleaved"}, "trainer.pipeline.schedule");
}
