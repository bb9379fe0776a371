// validate, test and export never touch the training run they evaluate: they take the model, data
// and precision from the checkpoint's own config, resolve ckpt_path=best|last against the run given
// explicitly, and write into a directory of their own under the run's eval/ (docs/evaluation.md).
// Skipped without the engine (TRAINER_LIBTORCH=none).
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;
using namespace trainer::testing;

namespace {

// Every file under `root` (except eval/) with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename() == "eval" && it->is_directory()) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files[fs::relative(it->path(), root).string()] = read_file(it->path());
  }
  return files;
}

// The evaluation directories made under <run>/eval, by name.
std::vector<fs::path> evaluations(const fs::path& run) {
  std::vector<fs::path> dirs;
  if (!fs::exists(run / "eval")) return dirs;
  for (const auto& entry : fs::directory_iterator(run / "eval")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

fs::path only_evaluation(const fs::path& run, const std::string& command) {
  std::vector<fs::path> found;
  for (const fs::path& dir : evaluations(run)) {
    if (dir.filename().string().rfind(command + "_", 0) == 0) found.push_back(dir);
  }
  REQUIRE(found.size() == 1);
  return found.front();
}

}  // namespace

TEST_CASE("evaluating a cnn run takes its config from the checkpoint and leaves every file of the run as it was") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto fit = run_process({TRAINER_BINARY, "fit", "model=cnn", "model.channels=[4,8]", "model.hidden_size=16",
                          "data=synthetic", "data.num_samples=320", "data.batch_size=64", "trainer.max_epochs=2",
                          "trainer.num_sanity_val_steps=0", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const double fit_test_acc = printed(fit.out, "test/acc");  // test_after_fit tests the best checkpoint
  const auto before = snapshot(run);
  REQUIRE(before.count(".hydra/config.yaml") == 1);
  REQUIRE(before.count("checkpoints/last.ckpt") == 1);

  // The README's command, with no model, data or precision given: the default would be the mlp on
  // Fashion-MNIST.
  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run"}, dir.path());
  INFO(test.err);
  REQUIRE(test.exit_code == 0);
  CHECK(printed(test.out, "test/acc") == fit_test_acc);
  CHECK(test.err.find("for ckpt_path=best of the training run " + run.string()) != std::string::npos);
  CHECK(test.err.find("from the checkpoint's config: model=cnn, data=synthetic") != std::string::npos);
  const fs::path test_dir = only_evaluation(run, "test");
  CHECK(read_file(test_dir / ".hydra" / "config.yaml").find("name: cnn") != std::string::npos);
  const std::string hydra_yaml = read_file(test_dir / ".hydra" / "hydra.yaml");
  CHECK(hydra_yaml.find("      model: cnn\n") != std::string::npos);  // runtime.choices: what ran
  CHECK(hydra_yaml.find("      data: synthetic\n") != std::string::npos);
  CHECK(read_file(test_dir / "trainer.log").find("loaded " + run.string() + "/checkpoints/epoch_") !=
        std::string::npos);
  CHECK(read_file(test_dir / "metrics.csv").find("test/acc") != std::string::npos);

  // --cfg previews what the evaluation would run: the checkpoint's model, and nothing is written.
  auto preview = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run", "--cfg", "job", "-p", "model"}, dir.path());
  INFO(preview.err);
  CHECK(preview.exit_code == 0);
  CHECK(preview.out.find("name: cnn") != std::string::npos);
  CHECK(evaluations(run).size() == 1);  // only the test above

  // A checkpoint's path alone, from another directory; an override still wins and is reported.
  auto validate = run_process(
      {TRAINER_BINARY, "validate", "ckpt_path=" + (run / "checkpoints" / "last.ckpt").string(), "data.batch_size=32"},
      fs::path(dir.path()).string());
  INFO(validate.err);
  REQUIRE(validate.exit_code == 0);
  CHECK(validate.err.find("from the command line instead: data.batch_size=32") != std::string::npos);
  const std::string validated = read_file(only_evaluation(run, "validate") / ".hydra" / "config.yaml");
  CHECK(validated.find("batch_size: 32") != std::string::npos);
  CHECK(validated.find("num_samples: 320") != std::string::npos);

  // <run>/checkpoints/best.ckpt names the best file the run recorded.
  auto best = run_process({TRAINER_BINARY, "test", "ckpt_path=run/checkpoints/best.ckpt"}, dir.path());
  INFO(best.err);
  REQUIRE(best.exit_code == 0);
  CHECK(printed(best.out, "test/acc") == fit_test_acc);

  // export writes into its own directory too.
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(fs::exists(only_evaluation(run, "export") / "last.safetensors"));

  // An override of a model key changes that key of the checkpoint's cnn (not of the default mlp,
  // which has no model.hidden_size): the same value runs, another does not fit the checkpoint.
  auto same =
      run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run", "model.hidden_size=16"}, dir.path());
  INFO(same.err);
  REQUIRE(same.exit_code == 0);
  CHECK(printed(same.out, "test/acc") == fit_test_acc);
  CHECK(same.err.find("from the command line instead: model.hidden_size=16") != std::string::npos);
  auto wider =
      run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run", "model.hidden_size=64"}, dir.path());
  INFO(wider.err);
  check_clean_error(wider);
  CHECK(wider.err.find("the checkpoint does not fit this model") != std::string::npos);
  CHECK(wider.err.find("model.hidden_size: 16 in the checkpoint's run, 64 now") != std::string::npos);

  // A logger or checkpoint directory inside the training run (but outside the evaluation's own
  // directory) is refused before anything is written.
  for (const std::string& into_run :
       {"logger.csv.save_dir=" + run.string(), std::string("logger.tensorboard.save_dir=run/tensorboard"),
        std::string("callbacks.model_checkpoint.dirpath=run/checkpoints"), std::string("trainer.default_root_dir=run"),
        // Names that climb out of the evaluation's directory into the run's records (relative to
        // <run>/eval/test_<time>), and a relative save_dir read from that directory under chdir.
        std::string("logger.csv.name=../../metrics.csv"), std::string("hydra.job.name=../../trainer"),
        std::string("hydra.output_subdir=../../.hydra"), std::string("logger.csv.save_dir=../.."),
        // MLflow's file store writes where its tracking_uri points (a red team's evaluation made
        // run/mlruns, then an experiment folder and a lock file in the run's top level).
        std::string("logger.mlflow.tracking_uri=run/mlruns"), std::string("logger.mlflow.tracking_uri=file:run")}) {
    std::vector<std::string> argv = {TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run", into_run};
    if (into_run == "logger.csv.save_dir=../..") argv.push_back("hydra.job.chdir=true");
    if (into_run.rfind("logger.mlflow.", 0) == 0) argv.insert(argv.begin() + 3, "logger=mlflow");
    auto refused = run_process(argv, dir.path());
    INFO(into_run << ": " << refused.err);
    check_clean_error(refused);
    const std::string key = into_run.substr(into_run[0] == '+' ? 1 : 0);
    CHECK(refused.err.find("Error: " + key + ": this evaluation would write into ") != std::string::npos);
    CHECK(refused.err.find("inside the training run " + run.string() + " it evaluates") != std::string::npos);
  }

  // The environment's MLFLOW_TRACKING_URI, when the config names none, is where MLflow writes too.
  auto from_env = run_process({TRAINER_BINARY, "validate", "logger=mlflow", "logger.mlflow.tracking_uri=null",
                               "ckpt_path=best", "hydra.run.dir=run"},
                              dir.path(), {"MLFLOW_TRACKING_URI=file:" + run.string()});
  INFO(from_env.err);
  check_clean_error(from_env);
  CHECK(from_env.err.find("Error: MLFLOW_TRACKING_URI (the environment's)=file:" + run.string() +
                          ": this evaluation would write into ") != std::string::npos);

  CHECK(evaluations(run).size() == 5);  // three tests, one validate, one export: each its own directory
  const auto after = snapshot(run);
  CHECK(after.size() == before.size());
  for (const auto& [name, bytes] : before) {
    INFO(name);
    REQUIRE(after.count(name) == 1);
    CHECK(after.at(name) == bytes);
  }
  // Nothing was written beside the run either (no outputs/ from the default hydra.run.dir).
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "outputs"));
}

TEST_CASE("an override of a model key applies to the checkpoint's resnet") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit =
      run_process({TRAINER_BINARY, "fit", "model=resnet", "model.width=8", "data=synthetic", "data.num_samples=256",
                   "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=resnet"},
                  dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto same =
      run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=resnet", "model.width=8"}, dir.path());
  INFO(same.err);
  CHECK(same.exit_code == 0);
  CHECK(same.err.find("from the checkpoint's config: model=resnet") != std::string::npos);
  const fs::path test_dir = only_evaluation(fs::path(dir.path()) / "resnet", "test");
  const std::string hydra_yaml = read_file(test_dir / ".hydra" / "hydra.yaml");
  CHECK(hydra_yaml.find("      model: resnet\n") != std::string::npos);  // runtime.choices: what ran
  CHECK(hydra_yaml.find("    - model=resnet") == std::string::npos);     // overrides.task: what was typed
  auto other =
      run_process({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=resnet", "model.width=16"}, dir.path());
  INFO(other.err);
  check_clean_error(other);
  CHECK(other.err.find("the checkpoint does not fit this model") != std::string::npos);
  CHECK(other.err.find("model.width: 8 in the checkpoint's run, 16 now") != std::string::npos);

  // trainer predict on the same resnet and tensor data: the test split, rows named by number,
  // the accuracy the same as trainer test's.
  auto predicted = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=resnet", "predict.top_k=20"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(predicted.err.find("predict.top_k=20 is more than the 10 classes: predictions.csv lists all 10") !=
        std::string::npos);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(same.out, "test/acc")).margin(1e-6));
  const std::string csv = read_file(only_evaluation(fs::path(dir.path()) / "resnet", "predict") / "predictions.csv");
  CHECK(csv.rfind("sample,prediction,probability,target,top1,top1_probability,top2,", 0) == 0);
  CHECK(csv.find("\n0,") != std::string::npos);
  CHECK(csv.find(",top10_probability\n") != std::string::npos);
  // No loggers: predictions.csv is its only output besides the run's .hydra/ and log.
  CHECK_FALSE(fs::exists(only_evaluation(fs::path(dir.path()) / "resnet", "predict") / "metrics.csv"));
  // One process: data parallelism is refused before anything is built.
  auto two = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=resnet", "trainer.devices=2"},
                         dir.path());
  check_clean_error(two);
  CHECK(two.err.find("trainer predict runs in one process") != std::string::npos);
}

TEST_CASE("ckpt_path=best|last needs the training run, and a wrong one says so before anything runs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto no_run = run_process({TRAINER_BINARY, "test", "ckpt_path=best"}, dir.path());
  check_clean_error(no_run);
  CHECK(no_run.err.find("hydra.run.dir=<the training run's directory>") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "outputs"));

  auto empty_run = run_process({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=nothing"}, dir.path());
  check_clean_error(empty_run);
  CHECK(empty_run.err.find("checkpoint not found") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "nothing"));

  // A mistyped keyword is named as one, with the word it was likely meant to be.
  const std::vector<std::pair<std::string, std::string>> typos = {
      {"bets", "Did you mean ckpt_path=best?"}, {"Last", "Did you mean ckpt_path=last?"}, {"newest", "lower case"}};
  for (const auto& [word, hint] : typos) {
    auto typo = run_process({TRAINER_BINARY, "test", "ckpt_path=" + word, "hydra.run.dir=nothing"}, dir.path());
    INFO(typo.err);
    check_clean_error(typo);
    CHECK(typo.err.find("ckpt_path=" + word + ": is neither best, last nor a checkpoint file") != std::string::npos);
    CHECK(typo.err.find(hint) != std::string::npos);
  }
}

// A best file deleted by hand said "checkpoint not found. Give ckpt_path=last or best" to a user
// who had given best; a sweep's directory said its checkpoints/ folder did not exist.
TEST_CASE("ckpt_path=best whose file is gone names the next best; a sweep's directory names its jobs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path base(dir.path());
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "trainer.max_epochs=3",
                          "callbacks.model_checkpoint.save_top_k=3", "callbacks.model_checkpoint.monitor=train/loss",
                          "callbacks.model_checkpoint.mode=min", "test_after_fit=false", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path checkpoints = base / "run" / "checkpoints";
  REQUIRE(fs::exists(checkpoints / "epoch_002.ckpt"));  // the training loss falls: the last epoch is the best
  fs::remove(checkpoints / "epoch_002.ckpt");
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run"}, dir.path());
  INFO(tested.err);
  check_clean_error(tested);
  CHECK(tested.err.find("ckpt_path=best: the run's best checkpoint, " + (checkpoints / "epoch_002.ckpt").string() +
                        ", is gone; the best file left of those it recorded is " +
                        (checkpoints / "epoch_001.ckpt").string()) != std::string::npos);
  CHECK(tested.err.find("Give ckpt_path=" + (checkpoints / "epoch_001.ckpt").string() + ", or ckpt_path=last") !=
        std::string::npos);

  auto sweep = run_process({TRAINER_BINARY, "fit", "-m", "data=synthetic", "data.num_samples=256",
                            "trainer.max_epochs=1", "test_after_fit=false", "seed=1,2", "hydra.sweep.dir=sweep"},
                           dir.path());
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  auto swept = run_process({TRAINER_BINARY, "validate", "ckpt_path=best", "hydra.run.dir=sweep"}, dir.path());
  INFO(swept.err);
  check_clean_error(swept);
  CHECK(swept.err.find("this is a sweep's directory: its jobs' training runs are its numbered subdirectories (" +
                       (base / "sweep" / "0").string()) != std::string::npos);
  CHECK(swept.err.find("hydra.run.dir=" + (base / "sweep" / "<job number>").string()) != std::string::npos);
}

TEST_CASE("evaluation takes the seed and the run's own checkpoint directory; a sweep of checkpoints each its own") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // seed=7 and checkpoints outside the run directory; an mlp and a cnn.
  auto mlp = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "model.hidden_sizes=[16]",
       "trainer.max_epochs=1", "seed=7", "test_after_fit=false", "callbacks.model_checkpoint.save_last=false",
       "callbacks.model_checkpoint.dirpath=" + std::string(dir.path()) + "/elsewhere", "hydra.run.dir=mlp"},
      dir.path());
  INFO(mlp.err);
  REQUIRE(mlp.exit_code == 0);
  const std::string fit_val = mlp.err.substr(mlp.err.rfind("val/loss "), 15);
  // best without last.ckpt (save_last=false), found in the run's own dirpath, validated on the
  // split seed 7 drew: the fit's own val/loss.
  auto validate = run_process({TRAINER_BINARY, "validate", "ckpt_path=best", "hydra.run.dir=mlp"}, dir.path());
  INFO(validate.err);
  REQUIRE(validate.exit_code == 0);
  CHECK(validate.err.find("seed=7") != std::string::npos);
  CHECK(validate.err.find(fit_val) != std::string::npos);
  CHECK_FALSE(contains(validate.err, "warning"));
  // Another seed or val_fraction on the command line draws another split, which holds samples the
  // model trained on: it runs, with a warning naming both values.
  auto redrawn = run_process(
      {TRAINER_BINARY, "validate", "ckpt_path=best", "hydra.run.dir=mlp", "seed=8", "data.val_fraction=0.5"},
      dir.path());
  INFO(redrawn.err);
  REQUIRE(redrawn.exit_code == 0);
  CHECK(contains(redrawn.err,
                 "validate: seed 8 (the run's: 7), data.val_fraction 0.5 (the run's: 0.1) in this "
                 "command: where the validation split is drawn from the training samples"));

  auto cnn =
      run_process({TRAINER_BINARY, "fit", "model=cnn", "model.channels=[4,8]", "model.hidden_size=16", "data=synthetic",
                   "data.num_samples=256", "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=cnn"},
                  dir.path());
  INFO(cnn.err);
  REQUIRE(cnn.exit_code == 0);
  const std::string mlp_best = [&] {
    for (const auto& entry : fs::directory_iterator(fs::path(dir.path()) / "elsewhere")) {
      if (entry.path().filename().string().rfind("epoch_", 0) == 0) return entry.path().string();
    }
    return std::string();
  }();
  REQUIRE_FALSE(mlp_best.empty());
  auto sweep = run_process({TRAINER_BINARY, "test", "-m",
                            "ckpt_path=" + mlp_best + "," + std::string(dir.path()) + "/cnn/checkpoints/last.ckpt",
                            "hydra.sweep.dir=sweval"},
                           dir.path());
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK(read_file(fs::path(dir.path()) / "sweval" / "0" / "trainer.log")
            .find("from the checkpoint's config: model=mlp") != std::string::npos);
  CHECK(read_file(fs::path(dir.path()) / "sweval" / "1" / "trainer.log")
            .find("from the checkpoint's config: model=cnn") != std::string::npos);

  auto directory = run_process({TRAINER_BINARY, "test", "ckpt_path=cnn/checkpoints"}, dir.path());
  CHECK(directory.exit_code == 1);
  check_no_crash(directory);
  CHECK(directory.err.find("ckpt_path names a directory, not a checkpoint file") != std::string::npos);
}

namespace {

// Every directory and file under `root` (eval/ included), files with their bytes.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> entries;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = fs::relative(entry.path(), root).string();
    entries[name] = entry.is_directory() ? std::string("<directory>") : read_file(entry.path());
  }
  return entries;
}

}  // namespace

TEST_CASE("an evaluation that fails its checks leaves the training run's tree exactly as it was") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "model.hidden_sizes=[16]",
                          "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  // Options refused by the planning checks or by the engine's (after the evaluation's directory
  // was made, where a check has not moved to planning yet), and a checkpoint that does not fit the
  // model: refused in the engine (the shapes are in LibTorch's archive) once its loggers had
  // opened metrics.csv and a TensorBoard file.
  const std::vector<std::vector<std::string>> refused = {
      {TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=run", "format=onnx"},
      {TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run", "trainer.precision=bogus"},
      {TRAINER_BINARY, "validate", "ckpt_path=" + (run / "checkpoints" / "last.ckpt").string(),
       "trainer.accelerator=tpu"},
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "logger=many_loggers", "model.hidden_sizes=[8]"}};
  auto check_refused = [&](const std::map<std::string, std::string>& before) {
    for (const auto& argv : refused) {
      auto result = run_process(argv, dir.path());
      INFO(argv[1] << ": " << result.err);
      check_clean_error(result);
      if (argv.back() == "model.hidden_sizes=[8]") {
        CHECK(result.err.find("the checkpoint does not fit this model") != std::string::npos);
        CHECK(result.err.find("test: removed " + (run / "eval").string() + "/test_") != std::string::npos);
      }
      const auto after = tree(run);
      CHECK(after.size() == before.size());
      for (const auto& [name, bytes] : after) {
        INFO(name);
        REQUIRE(before.count(name) == 1);
        CHECK(before.at(name) == bytes);
      }
    }
  };
  // No eval/ yet: none is left behind.
  check_refused(tree(run));
  CHECK_FALSE(fs::exists(run / "eval"));
  // Beside an earlier evaluation's directory: that one stays, and nothing is added.
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  REQUIRE(evaluations(run).size() == 1);
  check_refused(tree(run));
  CHECK(evaluations(run).size() == 1);
}

TEST_CASE("a run that set trainer.precision itself is tested and predicted in that precision") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit =
      run_process({TRAINER_BINARY, "fit", "model.hidden_sizes=[16]", "data=synthetic", "data.num_samples=256",
                   "trainer.max_epochs=1", "trainer.precision=64-true", "test_after_fit=false", "hydra.run.dir=run"},
                  dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  // The run's config keeps `precision: 32` at the top; its weights are float64 all the same.
  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(test.err);
  REQUIRE(test.exit_code == 0);
  CHECK(test.err.find("trainer.precision=64-true") != std::string::npos);
  CHECK(test.err.find("precision 64-true") != std::string::npos);
  auto predicted = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(test.out, "test/acc")).margin(1e-6));
  // A precision on the command line wins over the checkpoint's; float32 does not fit float64 weights.
  auto other = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "precision=32"}, dir.path());
  check_clean_error(other);
  CHECK(other.err.find("the checkpoint does not fit this model") != std::string::npos);
  CHECK(other.err.find("checkpoint Double") != std::string::npos);
}

TEST_CASE("precision and trainer.precision saying two things are refused; an evaluation's trainer.precision wins") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> fit = {TRAINER_BINARY,
                                        "fit",
                                        "model.hidden_sizes=[16]",
                                        "data=synthetic",
                                        "data.num_samples=256",
                                        "trainer.max_epochs=1",
                                        "test_after_fit=false",
                                        "hydra.run.dir=run"};
  // Both given: trainer.precision used to win silently.
  std::vector<std::string> both = fit;
  both.insert(both.end(), {"precision=64", "trainer.precision=bf16-true"});
  const ProcessResult refused = run_process(both, dir.path());
  check_clean_error(refused);
  CHECK(refused.err.find("is bf16-true, but precision is 64: two keys give the precision") != std::string::npos);
  CHECK(!fs::exists(fs::path(dir.path()) / "run" / "checkpoints"));
  // The same meaning twice is no conflict.
  std::vector<std::string> agreeing = fit;
  agreeing.insert(agreeing.end(), {"precision=64", "trainer.precision=64-true"});
  const ProcessResult trained = run_process(agreeing, dir.path());
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  // An evaluation's trainer.precision replaces the checkpoint's precision=64 (not a conflict with it):
  // float32 is then told it does not fit the float64 weights.
  const ProcessResult other =
      run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "trainer.precision=32"}, dir.path());
  check_clean_error(other);
  CHECK(other.err.find("two keys give the precision") == std::string::npos);
  CHECK(other.err.find("checkpoint Double") != std::string::npos);
}

TEST_CASE("a TorchScript model from Python is trained, tested and predicted") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (!test_python_imports("torch")) {
    return skip_test("TRAINER_TEST_PYTHON has no torch to script a model with", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const std::string model = (fs::path(dir.path()) / "net.pt").string();
  // Built-in modules only, so torch.jit.script needs no source file; BatchNorm gives train/eval a
  // difference the evaluation must respect.
  auto script = run_process({python, "-c",
                             "import sys, torch\nfrom torch import nn\n"
                             "torch.jit.script(nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), "
                             "nn.BatchNorm1d(32), nn.Linear(32, 10))).save(sys.argv[1])\n",
                             model});
  INFO(script.err);
  REQUIRE(script.exit_code == 0);
  auto fit = run_process({TRAINER_BINARY, "fit", "model=torchscript", "model.path=" + model, "data=synthetic",
                          "data.num_samples=512", "trainer.max_epochs=2", "test_after_fit=false", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(test.err);
  REQUIRE(test.exit_code == 0);
  CHECK(test.err.find("from the checkpoint's config: model=torchscript") != std::string::npos);
  CHECK(printed(test.out, "test/acc") > 0.5);  // synthetic classes are separable; chance is 0.1
  auto predicted = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(test.out, "test/acc")).margin(1e-6));
  const std::string csv = read_file(only_evaluation(fs::path(dir.path()) / "run", "predict") / "predictions.csv");
  CHECK(csv.rfind("sample,prediction,probability,target,top1,top1_probability,", 0) == 0);
  CHECK_FALSE(contains(test.err, "the TorchScript file changed"));
  // The code is the file's: one saved again with other code (Tanh for ReLU, the same weights'
  // names) runs with a warning naming the change (the test scored another model without a word).
  auto edited = run_process({python, "-c",
                             "import sys, torch\nfrom torch import nn\n"
                             "torch.jit.script(nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.Tanh(), "
                             "nn.BatchNorm1d(32), nn.Linear(32, 10))).save(sys.argv[1])\n",
                             model});
  REQUIRE(edited.exit_code == 0);
  auto retested = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(retested.err);
  REQUIRE(retested.exit_code == 0);
  CHECK(contains(retested.err, "model.path " + model +
                                   ": the TorchScript file changed since the run that wrote the "
                                   "checkpoint (fnv1a64 "));
  // The checkpoint holds the weights; the code stays in the TorchScript file, which must still be there.
  fs::remove(model);
  auto gone = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  check_clean_error(gone);
  CHECK(gone.err.find("no TorchScript file at '" + model + "'") != std::string::npos);
}

TEST_CASE("a TorchScript model's tied weight is stepped once; one traced in training mode keeps finite statistics") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (!test_python_imports("torch, safetensors")) {
    return skip_test("TRAINER_TEST_PYTHON has no torch to script a model with", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  // make.py writes the models and one batch; check.py takes one Adam step in PyTorch and compares
  // it with trainer's exported weights.
  write_text(root / "make.py",
             "import torch, numpy as np\nfrom torch import nn\nimport torch.nn.functional as F\n"
             "class Tied(nn.Module):\n"
             "    def __init__(s):\n"
             "        super().__init__(); s.enc = nn.Linear(784, 16); s.dec = nn.Linear(16, 10); s.dec2 = s.dec\n"
             "    def forward(s, x): return s.dec2(F.relu(s.enc(x.flatten(1))))\n"
             "class Net(nn.Module):\n"
             "    def __init__(s):\n"
             "        super().__init__(); s.fc1 = nn.Linear(784, 32); s.bn = nn.BatchNorm1d(32); "
             "s.fc2 = nn.Linear(32, 10)\n"
             "    def forward(s, x): return s.fc2(F.relu(s.bn(s.fc1(x.flatten(1)))))\n"
             "torch.manual_seed(0)\n"
             "torch.jit.script(Tied()).save('tied.pt')\n"
             "torch.jit.trace(Net(), torch.randn(4, 1, 28, 28)).save('traced_train.pt')  # left in train mode\n"
             "np.save('x.npy', torch.randn(64, 1, 28, 28).numpy())\n"
             "np.save('y.npy', np.random.RandomState(0).randint(0, 10, 64))\n");
  write_text(root / "check.py",
             "import sys, glob, torch, numpy as np\nimport torch.nn.functional as F\n"
             "from safetensors.torch import load_file\n"
             "x = torch.tensor(np.load('x.npy')); y = torch.tensor(np.load('y.npy'))\n"
             "trained = load_file(glob.glob('tied/eval/export_*/*.safetensors')[0])\n"
             "m = torch.jit.load('tied.pt'); m.train()\n"
             "opt = torch.optim.Adam(m.parameters(), lr=0.01); F.cross_entropy(m(x), y).backward(); opt.step()\n"
             "print(float((trained['dec.weight'] - m.dec.weight).abs().max()))\n");
  auto made = run_process({python, "make.py"}, root.string());
  INFO(made.err);
  REQUIRE(made.exit_code == 0);

  // One batch, one Adam step: PyTorch steps the shared dec/dec2 weight once (trainer's optimizer
  // held it twice and stepped it twice: a whole learning rate apart).
  auto tied = run_process(
      {TRAINER_BINARY, "fit", "model=torchscript", "model.path=tied.pt", "data=tensors", "data.inputs=x.npy",
       "data.targets=y.npy", "data.val_fraction=0", "data.batch_size=64", "optimizer.lr=0.01", "trainer.max_epochs=1",
       "trainer.num_sanity_val_steps=0", "test_after_fit=false", "hydra.run.dir=tied"},
      root.string());
  INFO(tied.err);
  REQUIRE(tied.exit_code == 0);
  CHECK(contains(tied.err, "12,730 parameters"));  // as PyTorch counts them, the shared one once
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=tied"}, root.string());
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  auto checked = run_process({python, "check.py"}, root.string());
  INFO(checked.out << checked.err);
  REQUIRE(checked.exit_code == 0);
  CHECK(std::stod(checked.out) < 1e-5);

  // A model traced in training mode updates batch norm's statistics whatever eval() says: the
  // start-up probes (a batch of one zero sample) made them NaN, and the fit ended refusing its own
  // checkpoint.
  auto traced =
      run_process({TRAINER_BINARY, "fit", "model=torchscript", "model.path=traced_train.pt", "data=synthetic",
                   "data.num_samples=512", "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=traced"},
                  root.string());
  INFO(traced.err);
  CHECK(traced.exit_code == 0);
  CHECK_FALSE(contains(traced.err, "non-finite"));
}

namespace {

// The trainer.log of every evaluation under <run>/eval, together.
std::string evaluation_logs(const fs::path& run) {
  std::string logs;
  for (const fs::path& dir : evaluations(run)) {
    if (fs::exists(dir / "trainer.log")) logs += read_file(dir / "trainer.log");
  }
  return logs;
}

}  // namespace

TEST_CASE("Ctrl-C or SIGTERM during the test after fit or trainer test or predict stops at the next batch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  // Fashion-MNIST's 10,000 test images one at a time through a wide mlp: seconds of evaluation, so
  // the signal, sent once the pass has begun, comes long before its end.
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  const std::vector<std::string> slow = {"model.hidden_sizes=[2048,2048]", "data.batch_size=1"};
  std::vector<std::string> fit_argv = {TRAINER_BINARY,
                                       "fit",
                                       "trainer.max_epochs=1",
                                       "trainer.limit_train_batches=4",
                                       "trainer.limit_val_batches=4",
                                       "trainer.num_sanity_val_steps=0",
                                       "hydra.run.dir=run"};
  fit_argv.insert(fit_argv.end(), slow.begin(), slow.end());
  bool signalled = false;
  const fs::path log = run / "trainer.log";
  const auto fit = run_and_signal(
      fit_argv, dir.path(), [&] { return read_file(log).find("testing the best checkpoint") != std::string::npos; },
      SIGTERM, &signalled);
  INFO(fit.out << fit.err);
  REQUIRE(signalled);
  CHECK(fit.exit_code == 1);  // handled: not 128 + 15
  check_clean_error(fit);
  CHECK(contains(fit.err, "signal 15: the test after fit stopped after "));
  CHECK(contains(fit.err,
                 "of 10000 batches; no test/* metric was recorded. The fit itself finished: its checkpoints "
                 "are in " +
                     (run / "checkpoints").string()));
  CHECK(contains(fit.err, "trainer test ckpt_path=best hydra.run.dir=" + run.string()));
  CHECK_FALSE(contains(fit.out, "test/acc="));
  CHECK_FALSE(contains(read_file(run / "metrics.csv"), "test/acc"));
  REQUIRE(fs::exists(run / "checkpoints" / "last.ckpt"));
  // The advice runs (on a few batches).
  const auto advised = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=" + run.string(), "trainer.limit_test_batches=5"},
      dir.path());
  INFO(advised.err);
  REQUIRE(advised.exit_code == 0);
  CHECK(printed(advised.out, "test/acc") >= 0.0);

  // trainer test and trainer predict, each stopped by Ctrl-C (SIGINT) once it loaded the checkpoint:
  // exit 1, nothing recorded, the training run as it was.
  const auto loads = [&] {
    const std::string logs = evaluation_logs(run);
    size_t count = 0;
    for (size_t at = logs.find("loaded "); at != std::string::npos; at = logs.find("loaded ", at + 1)) ++count;
    return count;
  };
  const auto before = snapshot(run);
  for (const std::string command : {"test", "predict"}) {
    signalled = false;
    const size_t loads_before = loads();
    const std::vector<fs::path> evaluations_before = evaluations(run);
    const auto stopped = run_and_signal(
        {TRAINER_BINARY, command, "ckpt_path=last", "hydra.run.dir=" + run.string()}, dir.path(),
        [&] { return loads() > loads_before; }, SIGINT, &signalled);
    INFO(command << ": " << stopped.out << stopped.err);
    REQUIRE(signalled);
    CHECK(stopped.exit_code == 1);
    check_clean_error(stopped);
    CHECK(contains(stopped.err, "signal 2: " + command + " stopped after "));
    CHECK(contains(stopped.err, command == "test" ? "of 10000 batches; no test/* metric was recorded"
                                                  : "of 10000 samples; predictions.csv was not written"));
    CHECK(contains(stopped.err, "Run the same command again"));
    CHECK_FALSE(contains(stopped.out, command + "/acc="));
    // Its directory held no result, so it went again, as for any evaluation that fails.
    CHECK(contains(stopped.err, command + ": removed "));
    CHECK(evaluations(run) == evaluations_before);
  }
  CHECK(snapshot(run) == before);
}

TEST_CASE("trainer.limit_predict_batches limits what predict runs as limit_test_batches does for test") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=2000", "model.hidden_sizes=[8]",
                          "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto rows_of = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run",
                                     "data.batch_size=7"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto predicted = run_process(argv, dir.path());
    INFO(predicted.err);
    REQUIRE(predicted.exit_code == 0);
    const std::string csv = read_file(evaluations(run).back() / "predictions.csv");
    return std::count(csv.begin(), csv.end(), '\n') - 1;
  };
  const auto all = rows_of({});
  CHECK(all > 21);
  CHECK(rows_of({"trainer.limit_predict_batches=3"}) == 21);                                    // batches
  CHECK(rows_of({"trainer.limit_predict_batches=0.5"}) == (all / 7 + (all % 7 != 0)) / 2 * 7);  // a share
  CHECK(rows_of({"trainer.fast_dev_run=2"}) == 14);
  auto none =
      run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run", "trainer.limit_predict_batches=0"},
                  dir.path());
  check_clean_error(none);
  CHECK(contains(none.err, "trainer.limit_predict_batches: predict has no batch to run"));
}

// A run that cannot be written (here immutable: root passes permission bits) said "Set hydra.run.dir
// to a writable place", which for ckpt_path=best points back at the run.
TEST_CASE("evaluating a run that cannot be written says how: the checkpoint's path and a directory of one's own") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "trainer.max_epochs=1",
                          "test_after_fit=false", "hydra.run.dir=run"},
                         dir.path());
  REQUIRE(fit.exit_code == 0);
  if (run_process({"/usr/bin/chattr", "+i", run.string()}).exit_code != 0) {
    return skip_test("chattr +i is not available here (not root, or a file system without it)", Skip::unexpected_in_ci);
  }
  struct Writable {
    fs::path path;
    ~Writable() { run_process({"/usr/bin/chattr", "-i", path.string()}); }
  } restore{run};
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run"}, dir.path());
  INFO(tested.err);
  check_clean_error(tested);
  CHECK(tested.err.find("an evaluation writes into the training run's eval/, and " + run.string() +
                        " cannot be written") != std::string::npos);
  CHECK(tested.err.find("Give the checkpoint's path and a directory of your own: ckpt_path=" +
                        (run / "checkpoints" / "epoch_000.ckpt").string() + " hydra.run.dir=") != std::string::npos);
  auto elsewhere = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=" + (run / "checkpoints" / "epoch_000.ckpt").string(), "hydra.run.dir=own"},
      dir.path());
  INFO(elsewhere.err);
  CHECK(elsewhere.exit_code == 0);
  CHECK_FALSE(fs::exists(run / "eval"));
}

// Labels without names for a model trained on named classes are read as its class indices: the log
// shows the mapping, so that a test/acc over another numbering can be told from a bad model.
TEST_CASE("an evaluation on unnamed labels logs which class each label stands for") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit =
      run_process({TRAINER_BINARY, "fit", "trainer.max_epochs=1", "trainer.limit_train_batches=2",
                   "trainer.limit_val_batches=1", "data.num_workers=0", "test_after_fit=false", "hydra.run.dir=run"},
                  dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto tested = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data=synthetic", "trainer.limit_test_batches=1"},
      dir.path());
  INFO(tested.err);
  CHECK(tested.exit_code == 0);
  CHECK(tested.err.find("data: its labels have no names; the checkpoint's model was trained on named classes, so "
                        "label i is its class i: 0 = T-shirt/top, 1 = Trouser,") != std::string::npos);
  auto named = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "trainer.limit_test_batches=1"}, dir.path());
  CHECK(named.exit_code == 0);
  CHECK(named.err.find("its labels have no names") == std::string::npos);
}
