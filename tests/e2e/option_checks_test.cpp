// The option declarations at work through the real binary: before anything runs, a key of
// another variant, a typo, a value outside its choices and a wrong type are reported at once with
// where they were set; --help lists what the chosen variants' keys accept.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

TEST_CASE("a key of another variant, a typo and bad values are one error before any run directory") {
  TempDir dir;
  auto other = run_process({TRAINER_BINARY, "fit", "+optimizer.momentum=0.9", "hydra.run.dir=run"}, dir.path());
  check_clean_error(other);
  CHECK(other.err.find("optimizer.momentum (override '+optimizer.momentum=0.9'): an option of optimizer=sgd, not of "
                       "optimizer=adam") != std::string::npos);

  auto several = run_process({TRAINER_BINARY, "fit", "model=cnn", "+model.hiden_size=3", "trainer.profiler=simpel",
                              "data.num_workers=many", "hydra.run.dir=run"},
                             dir.path());
  check_clean_error(several);
  CHECK(several.err.find("model.hiden_size (override '+model.hiden_size=3'): Did you mean 'hidden_size'?") !=
        std::string::npos);
  CHECK(several.err.find("trainer.profiler (override 'trainer.profiler=simpel'): simpel is not one of simple or "
                         "pytorch") != std::string::npos);
  CHECK(several.err.find("did you mean 'simple'?") != std::string::npos);
  CHECK(several.err.find("data.num_workers (override 'data.num_workers=many'): expected an int or auto") !=
        std::string::npos);

  auto optimizer = run_process({TRAINER_BINARY, "fit", "optimizer.name=rmsprop", "hydra.run.dir=run"}, dir.path());
  check_clean_error(optimizer);
  CHECK(optimizer.err.find("'rmsprop' is not an optimizer trainer has (adam, adamw, sgd)") != std::string::npos);

  // In a sweep, every job is checked when the sweep is planned: the second job's depth fails
  // before the first one runs.
  auto sweep = run_process({TRAINER_BINARY, "fit", "-m", "model=resnet", "model.depth=18,19", "hydra.sweep.dir=sweep"},
                           dir.path());
  check_clean_error(sweep);
  CHECK(sweep.err.find("model.depth (override 'model.depth=19'): 19 is not one of 18, 34, 50, 101 or 152") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep" / "0"));
}

TEST_CASE("--help lists what the keys of the chosen variants accept") {
  auto help = run_process({TRAINER_BINARY, "fit", "model=cnn", "optimizer=sgd", "--help"});
  REQUIRE(help.exit_code == 0);
  CHECK(help.out.find("== Options ==") != std::string::npos);
  CHECK(help.out.find("  model.hidden_size = 128  (an int at least 1): width of the hidden linear layer") !=
        std::string::npos);
  CHECK(help.out.find("  optimizer.momentum = 0.9") != std::string::npos);
  CHECK(help.out.find("model.hidden_sizes") == std::string::npos);  // the mlp's
  CHECK(help.out.find("  trainer.max_epochs = 10  (an int at least 0 or -1)") != std::string::npos);
}

TEST_CASE(
    "values that come from interpolations, cross-key rules and file-name patterns are checked before any "
    "run directory") {
  TempDir dir;
  auto env = run_process(
      {TRAINER_BINARY, "fit", "optimizer.lr=${oc.env:TRAINER_TEST_UNSET_VAR,-1}", "hydra.run.dir=run"}, dir.path());
  check_clean_error(env);
  CHECK(env.err.find("optimizer.lr (override 'optimizer.lr=${oc.env:TRAINER_TEST_UNSET_VAR,-1}'): expected a number") !=
        std::string::npos);
  // In a sweep, the job whose value comes from an interpolation fails the planning: no job runs.
  auto sweep = run_process(
      {TRAINER_BINARY, "fit", "-m", "+myneg=-1", "optimizer.lr=0.01,${myneg}", "hydra.sweep.dir=sweep"}, dir.path());
  check_clean_error(sweep);
  CHECK(sweep.err.find("-1 is out of range: the learning rate") != std::string::npos);
  auto devices = run_process(
      {TRAINER_BINARY, "fit", "trainer.devices=2", "trainer.strategy=single_device", "hydra.run.dir=run"}, dir.path());
  check_clean_error(devices);
  CHECK(devices.err.find("trainer.strategy=single_device runs one process, but 2 devices were asked for") !=
        std::string::npos);
  auto name =
      run_process({TRAINER_BINARY, "fit", "callbacks.model_checkpoint.filename='{epoch}-{bogus}'", "hydra.run.dir=run"},
                  dir.path());
  check_clean_error(name);
  CHECK(name.err.find("{bogus} is not a field a checkpoint name can hold") != std::string::npos);
  auto inf = run_process({TRAINER_BINARY, "fit", "optimizer.lr=inf", "hydra.run.dir=run"}, dir.path());
  check_clean_error(inf);
  CHECK(inf.err.find("inf is not a finite number") != std::string::npos);
  auto callback =
      run_process({TRAINER_BINARY, "fit", "+callbacks.model_checkpiont.save_top_k=3", "hydra.run.dir=run"}, dir.path());
  check_clean_error(callback);
  CHECK(callback.err.find("callbacks.model_checkpiont (override '+callbacks.model_checkpiont.save_top_k=3'): Did you "
                          "mean 'model_checkpoint'?") != std::string::npos);
  CHECK(callback.err.find("?.") == std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep" / "0"));
}

TEST_CASE("fit --help lists trainer's flags, not only the subcommand's positionals") {
  auto help = run_process({TRAINER_BINARY, "fit", "--help"});
  REQUIRE(help.exit_code == 0);
  const std::string flags = help.out.substr(help.out.find("== Flags =="));
  CHECK(flags.find("--cfg") != std::string::npos);
  CHECK(flags.find("--multirun") != std::string::npos);
}

TEST_CASE("a checkpoint name holds the metric it was scored with, and ckpt_path=best finds it") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "trainer.max_epochs=1",
                          "callbacks.model_checkpoint.filename='e{epoch}-{val/acc:.4f}'", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  std::string best;
  for (const auto& entry : fs::directory_iterator(fs::path(dir.path()) / "run" / "checkpoints")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("e0-0.", 0) == 0) best = name;
  }
  CHECK(best.size() == std::string("e0-0.1234.ckpt").size());
  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run"}, dir.path());
  INFO(test.err);
  CHECK(test.exit_code == 0);
  CHECK(test.err.find(best) != std::string::npos);
}

TEST_CASE("metrics.csv: a fit that starts afresh keeps an earlier attempt's rows aside, not mixed in") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  fs::create_directories(run);
  // An attempt killed before its first checkpoint left rows and no checkpoint.
  {
    std::ofstream earlier(run / "metrics.csv");
    earlier << "epoch,step,train/loss\n0,5,9.0\n";
  }
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "trainer.max_epochs=1",
                          "ckpt_path=last", "hydra.run.dir=run"},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(read_file(run / "metrics.csv.1") == "epoch,step,train/loss\n0,5,9.0\n");
  CHECK(read_file(run / "metrics.csv").find("9.0") == std::string::npos);
  CHECK(fit.err.find("kept as") != std::string::npos);
}
