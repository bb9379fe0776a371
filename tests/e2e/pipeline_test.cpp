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
      CHECK(two.err.find("activations and gradients: 1 of 1 pair(s) of neighbouring stages through shared memory "
                         "(this rank's next link: two rings of 4 slots of 16 KiB)") != std::string::npos);
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
  SECTION("through Gloo (transport=process_group)") {
    const fs::path run = root / "gloo";
    ProcessResult two = run_ok(fit_command(
        run, {"data.batch_size=64", "trainer.max_epochs=2", "trainer.devices=2", "trainer.strategy=pipeline",
              "trainer.pipeline.microbatches=4", "trainer.pipeline.schedule=gpipe",
              "trainer.pipeline.transport=process_group", "trainer.profiler=simple"}));
    CHECK(two.err.find("activations and gradients: through the gloo process group") != std::string::npos);
    // The schedule interleaves forwards and backwards: one row, named as such (it read "forward +
    // loss", with no backward row).
    const std::string table = read_file(run / "fit-profiler.txt");
    INFO(table);
    CHECK(table.find("| pipeline schedule (forwards, backwards, stage transfers) | ") != std::string::npos);
    CHECK(table.find("forward + loss") == std::string::npos);
    CHECK(two.err.find("through shared memory") == std::string::npos);
    check_same_training(root / "one", run, root / "start", 1e-5);
  }
}

TEST_CASE(
    "3 stages (the middle one receives from both sides) and the bf16 precisions (bf16 activations between the "
    "stages) end with the weights of one process accumulating the same micro-batches") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  run_ok(fit_command(root / "start", {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"}));
  SECTION("3 stages, both schedules") {
    run_ok(
        fit_command(root / "one", {"data.batch_size=16", "trainer.accumulate_grad_batches=4", "trainer.max_epochs=1"}));
    for (const std::string schedule : {"gpipe", "1f1b"}) {
      const fs::path run = root / schedule;
      ProcessResult three = run_ok(fit_command(
          run, {"data.batch_size=64", "trainer.max_epochs=1", "trainer.devices=3", "trainer.strategy=pipeline",
                "trainer.pipeline.microbatches=4", "trainer.pipeline.schedule=" + schedule}));
      CHECK(three.err.find("pipeline: 3 stages, " + schedule + " schedule") != std::string::npos);
      CHECK(three.err.find("stage 1 of 3: ") != std::string::npos);
      CHECK(three.err.find("activations and gradients: 2 of 2 pair(s) of neighbouring stages through shared "
                           "memory") != std::string::npos);
      check_same_training(root / "one", run, root / "start", 1e-5);
    }
  }
  SECTION("bf16-mixed, 2 stages") {
    run_ok(fit_command(root / "one", {"data.batch_size=16", "trainer.accumulate_grad_batches=4", "trainer.max_epochs=1",
                                      "trainer.precision=bf16-mixed"}));
    const fs::path run = root / "two";
    ProcessResult two =
        run_ok(fit_command(run, {"data.batch_size=64", "trainer.max_epochs=1", "trainer.precision=bf16-mixed",
                                 "trainer.devices=2", "trainer.strategy=pipeline", "trainer.pipeline.microbatches=4"}));
    // Equal here (bit for bit); the tolerance allows for bf16 products summed in another order.
    check_same_training(root / "one", run, root / "start", 1e-3);
  }
  SECTION("bf16-true, 2 stages, through either transport") {
    // bfloat16 weights and activations; on Gloo, which in LibTorch 1.13 has no bfloat16, they
    // travel as their bits (the initial broadcast used to fail).
    run_ok(fit_command(root / "start16",
                       {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0", "trainer.precision=bf16-true"}));
    run_ok(fit_command(root / "one", {"data.batch_size=16", "trainer.accumulate_grad_batches=4", "trainer.max_epochs=1",
                                      "trainer.precision=bf16-true"}));
    for (const std::string transport : {"process_group", "shared_memory"}) {
      const fs::path run = root / transport;
      run_ok(fit_command(run, {"data.batch_size=64", "trainer.max_epochs=1", "trainer.precision=bf16-true",
                               "trainer.devices=2", "trainer.strategy=pipeline", "trainer.pipeline.microbatches=4",
                               "trainer.pipeline.transport=" + transport}));
      // Measured equal bit for bit (0.0; training moved the weights by up to 0.25).
      check_same_training(root / "one", run, root / "start16", 1e-6);
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
      if (model.name != "cnn") continue;
      // balance=time: the cut makes the largest stage's measured time as small as can be, and the
      // measurement (eval mode, gradients cleared, no random draws) leaves the training as it was.
      ProcessResult timed = run_ok(command(
          "timed", {"data.batch_size=32", "trainer.max_steps=8", "trainer.devices=2", "trainer.strategy=pipeline",
                    "trainer.pipeline.microbatches=4", "trainer.pipeline.balance=time"}));
      const std::string intro = "(stages balanced by forward + backward time, measured on one micro-batch: ";
      const size_t at = timed.err.find(intro);
      REQUIRE(at != std::string::npos);
      const std::string list = timed.err.substr(at + intro.size(), timed.err.find(')', at) - at - intro.size());
      std::vector<std::pair<std::string, double>> pieces;  // "features.0 0.123 ms, ..."
      for (size_t begin = 0; begin < list.size();) {
        size_t end = list.find(", ", begin);
        if (end == std::string::npos) end = list.size();
        const std::string item = list.substr(begin, end - begin);
        const size_t space = item.find(' ');
        pieces.emplace_back(item.substr(0, space), std::stod(item.substr(space + 1)));
        begin = end + 2;
      }
      REQUIRE(pieces.size() >= 4);
      const size_t second = timed.err.find("stage 1 of 2: ");
      REQUIRE(second != std::string::npos);
      const std::string first_of_second = timed.err.substr(second + 14, timed.err.find(' ', second + 14) - second - 14);
      double best = 1e300;
      double chosen = -1;
      for (size_t cut = 1; cut < pieces.size(); ++cut) {
        double a = 0, b = 0;
        for (size_t i = 0; i < pieces.size(); ++i) (i < cut ? a : b) += pieces[i].second;
        best = std::min(best, std::max(a, b));
        if (pieces[cut].first == first_of_second) chosen = std::max(a, b);
      }
      INFO(list << "; stage 1 starts at " << first_of_second);
      CHECK(chosen >= 0);
      CHECK(chosen <= best + 0.001 * static_cast<double>(pieces.size()));  // the printed times are rounded
      CHECK(largest_difference(one, exported_weights(root / "timed")) <= 1e-5);
    }
  }
}

TEST_CASE(
    "each stage holds only its own weights, gradients and optimizer state; the test after fit loads the best "
    "checkpoint on every stage") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // Adam (two moments a parameter). The best checkpoint by val/acc is the first epoch's (the
  // synthetic classes are separated by then, and a tie keeps the earlier file), so the test after
  // fit must load weights other than those in memory.
  auto command = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> argv = fit_command(
        root / name, {"data.batch_size=64", "trainer.max_epochs=3", "optimizer=adam", "test_after_fit=true"});
    argv.erase(std::find(argv.begin(), argv.end(), "optimizer=sgd"));
    argv.erase(std::find(argv.begin(), argv.end(), "test_after_fit=false"));
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  ProcessResult one = run_ok(command("one", {}));
  // One process holds the whole model: 235,146 float parameters, 0.9 MiB, and twice that of moments.
  CHECK(one.err.find("model state: parameters 0.9 MiB, gradients 0.9 MiB, optimizer state 1.8 MiB") !=
        std::string::npos);
  ProcessResult two = run_ok(command("two", {"trainer.devices=2", "trainer.strategy=pipeline"}));
  INFO(two.err);
  CHECK(two.err.find("pipeline: what each stage holds (the whole model: 235,146 parameters)") != std::string::npos);
  // The FLOP count runs the whole model, before the stages free the others' weights.
  CHECK(two.err.find("probe forward pass failed") == std::string::npos);
  CHECK(two.err.find(" per sample forward, ") != std::string::npos);
  // Had a stage kept the other's weights, each would hold 0.9 MiB of parameters.
  CHECK(two.err.find("stage 0: 200,960 parameters; parameters 0.8 MiB, gradients 0.8 MiB, optimizer state 1.5 MiB") !=
        std::string::npos);
  CHECK(two.err.find("stage 1: 34,186 parameters; parameters 0.1 MiB, gradients 0.1 MiB, optimizer state 0.3 MiB") !=
        std::string::npos);
  // Every stage loaded its own pieces of the best checkpoint for the test: the test after fit
  // equals one process testing that file.
  const size_t best_at = two.err.find("testing the best checkpoint ");
  REQUIRE(best_at != std::string::npos);
  const size_t path_at = best_at + std::string("testing the best checkpoint ").size();
  const std::string best = two.err.substr(path_at, two.err.find('\n', path_at) - path_at);
  REQUIRE(best.find("epoch_000.ckpt") != std::string::npos);
  ProcessResult tested =
      run_ok({TRAINER_BINARY, "test", "ckpt_path=" + best, "hydra.run.dir=" + (root / "test").string()});
  // (Summed by one thread a stage against two in one process: equal to rounding.)
  CHECK(std::fabs(printed(two.out, "test/loss") - printed(tested.out, "test/loss")) < 1e-6);
  CHECK(printed(two.out, "test/acc") == printed(tested.out, "test/acc"));
  // ... and not the final weights'.
  ProcessResult last =
      run_ok({TRAINER_BINARY, "test", "ckpt_path=" + (root / "two" / "checkpoints" / "last.ckpt").string(),
              "hydra.run.dir=" + (root / "test-last").string()});
  CHECK(std::fabs(printed(last.out, "test/loss") - printed(tested.out, "test/loss")) > 1e-4);
}

TEST_CASE("a scripted nn.Sequential is cut into stages; another TorchScript module is refused", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (!test_python_imports("torch")) {
    return skip_test("TRAINER_TEST_PYTHON has no torch to script a model with", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  const std::string sequential = (root / "sequential.pt").string();
  const std::string residual = (root / "residual.pt").string();
  const std::string orphan = (root / "orphan.pt").string();
  // A Sequential, scripted; a module whose forward adds a skip connection, traced (no source file
  // needed), which must not be cut; and a Sequential holding a parameter of its own, outside
  // every child (no stage would hold it).
  ProcessResult made = run_process(
      {python, "-c",
       "import sys, torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
       "torch.jit.script(nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), "
       "nn.Linear(32, 10))).save(sys.argv[1])\n"
       "class Net(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.a = nn.Linear(784, 784)\n"
       "        self.b = nn.Linear(784, 10)\n"
       "    def forward(self, x):\n"
       "        x = x.flatten(1)\n"
       "        return self.b(x + self.a(x))\n"
       "torch.jit.trace(Net(), torch.zeros(2, 1, 28, 28)).save(sys.argv[2])\n"
       "s = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))\n"
       "s.register_parameter('temperature', nn.Parameter(torch.ones(1)))\n"
       "torch.jit.script(s).save(sys.argv[3])\n",
       sequential, residual, orphan});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  auto command = [&](const std::string& name, const std::string& model, std::vector<std::string> extra) {
    std::vector<std::string> argv = fit_command(root / name, {"model=torchscript", "model.path=" + model});
    argv.erase(std::find(argv.begin(), argv.end(), "model.dropout=0"));  // no such key
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  run_ok(
      command("one", sequential, {"data.batch_size=16", "trainer.accumulate_grad_batches=4", "trainer.max_epochs=1"}));
  ProcessResult two = run_ok(command("two", sequential,
                                     {"data.batch_size=64", "trainer.max_epochs=1", "trainer.devices=2",
                                      "trainer.strategy=pipeline", "trainer.pipeline.microbatches=4"}));
  INFO(two.err);
  CHECK(two.err.find("stage 0 of 2: 0 .. 2 (50,240 parameters)") != std::string::npos);
  CHECK(two.err.find("stage 1 of 2: 3 .. 5 (2,410 parameters)") != std::string::npos);
  CHECK(two.err.find("this process: stage 0's pieces on cpu, the other stages' on the host until released") !=
        std::string::npos);
  const double largest = largest_difference(exported_weights(root / "one"), exported_weights(root / "two"));
  INFO("largest difference " << largest);
  CHECK(largest <= 1e-5);
  ProcessResult refused =
      run_process(command("residual", residual, {"trainer.devices=2", "trainer.strategy=pipeline"}));
  check_clean_error(refused);
  CHECK(refused.err.find("cannot be cut into stages: only a scripted torch.nn.Sequential says that its children run "
                         "one after another") != std::string::npos);
  ProcessResult orphaned = run_process(command("orphan", orphan, {"trainer.devices=2", "trainer.strategy=pipeline"}));
  check_clean_error(orphaned);
  CHECK(orphaned.err.find("tensor temperature belongs to none of the pieces it lists for a pipeline") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(root / "orphan" / "checkpoints"));
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
  CHECK(four.err.find("activations and gradients: 2 of 2 pair(s) of neighbouring stages through shared memory") !=
        std::string::npos);
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
  // The stages' shared-memory file is unlinked once both have mapped it: while they train, and
  // after one is killed, /dev/shm holds nothing of theirs.
  auto shared_memory_files = [] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator("/dev/shm")) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("trainer-pipeline-", 0) == 0) names.push_back(name);
    }
    return names;
  };
  std::vector<std::string> while_training;
  auto result = run_and_signal(
      fit_command(run, {"data.num_samples=65536", "data.batch_size=32", "trainer.max_epochs=20",
                        "trainer.log_every_n_steps=10", "trainer.devices=2", "trainer.strategy=pipeline",
                        "trainer.dist_timeout=120", "callbacks.model_checkpoint.every_n_train_steps=10"}),
      dir.path(),
      [&] {
        if (killed < 0 && read_file(run / "trainer.log").find(" step 20 ") != std::string::npos &&
            fs::exists(run / "checkpoints" / "last.ckpt")) {
          while_training = shared_memory_files();
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
  // A checkpoint was written before the kill: the advice is to resume from it.
  CHECK(error.find("Resume with the same command plus ckpt_path=last and hydra.run.dir=" + run.string()) !=
        std::string::npos);
  CHECK(result.err.find("fit finished") == std::string::npos);
  CHECK(result.err.find("1 of 1 pair(s) of neighbouring stages through shared memory") != std::string::npos);
  CHECK(while_training.empty());
  CHECK(shared_memory_files().empty());
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
  refused({"trainer.devices=2", "trainer.pipeline.split_points=layers.3", "trainer.pipeline.balance=time"},
          "balance=time cuts the model where trainer.pipeline.split_points already does");
  refused({"trainer.devices=2", "trainer.pipeline.balance=flops"}, "trainer.pipeline.balance");
  // A pipeline's setting without strategy=pipeline changes nothing (a data-parallel job ran
  // instead): said, and the job runs (a sweep may share one config between strategies).
  auto ignored = run_process(fit_command(run, {"trainer.strategy=auto", "trainer.pipeline.split_points=[layers.4]",
                                               "trainer.max_steps=2", "trainer.max_epochs=1"}),
                             dir.path());
  INFO(ignored.err);
  CHECK(ignored.exit_code == 0);
  CHECK(contains(ignored.err,
                 "trainer.pipeline.split_points=['layers.4'] is a pipeline's setting, but "
                 "trainer.strategy is auto, so it changes nothing"));
  // predict runs in one process (each stage would otherwise run a model whose other pieces it lacks).
  ProcessResult predicted =
      run_process({TRAINER_BINARY, "predict", "data=synthetic", "data.num_samples=256", "trainer.devices=2",
                   "trainer.strategy=pipeline", "hydra.run.dir=" + (fs::path(dir.path()) / "predict").string()},
                  dir.path());
  INFO(predicted.err);
  CHECK(predicted.exit_code != 0);
  check_clean_error(predicted);
  CHECK(predicted.err.find("trainer predict runs in one process, not 2") != std::string::npos);
}

TEST_CASE("a pipeline's checkpoint resumed in another layout is refused naming the keys that differ") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "pipe";
  const std::vector<std::string> pipeline = {"trainer.strategy=pipeline", "trainer.devices=2",
                                             "trainer.pipeline.split_points=[layers.4]",
                                             "trainer.pipeline.microbatches=2"};
  std::vector<std::string> first = {"trainer.max_epochs=1"};
  first.insert(first.end(), pipeline.begin(), pipeline.end());
  run_ok(fit_command(run, first));
  const std::string record = read_file(run / "metrics.csv");

  // One process, and the pipeline cut elsewhere: the optimizer state is each stage's own.
  for (const std::vector<std::string>& layout :
       {std::vector<std::string>{"trainer.max_epochs=2", "ckpt_path=last"},
        std::vector<std::string>{"trainer.max_epochs=2", "ckpt_path=last", "trainer.strategy=pipeline",
                                 "trainer.devices=2", "trainer.pipeline.split_points=[layers.2]",
                                 "trainer.pipeline.microbatches=2"}}) {
    const ProcessResult resumed = run_process(fit_command(run, layout));
    INFO(resumed.err);
    check_clean_error(resumed);
    CHECK(contains(resumed.err, "its optimizer state does not fit this run's optimizer"));
    CHECK(contains(resumed.err, "Config keys that differ from the run that wrote it: "));
    CHECK(contains(resumed.err, "trainer.pipeline.split_points: "));
    CHECK(contains(resumed.err, "resumes only with the same trainer.strategy=pipeline"));
    CHECK_FALSE(contains(resumed.err, "a gap in trainer's checks"));
    CHECK(read_file(run / "metrics.csv") == record);  // the run's record is as it was
  }
}
