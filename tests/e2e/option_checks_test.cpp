// The option declarations at work through the real binary: before anything runs, a key of
// another variant, a typo, a value outside its choices and a wrong type are reported at once with
// where they were set; --help lists what the chosen variants' keys accept.
#include <algorithm>
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

TEST_CASE("a top-level typo or an experiment file without its @package _global_ header is a warning") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // The top level is open to keys of one's own, so these were accepted and changed nothing.
  fs::create_directories(root / "conf" / "experiment");
  write_text(root / "conf" / "experiment" / "short.yaml", "# @package: _global_\ntrainer:\n  max_epochs: 1\n");
  auto result = run_process(
      {TRAINER_BINARY, "fit", "--config-dir", "conf", "experiment=short", "+precison=64", "+train=true",
       "data=synthetic", "data.num_samples=128", "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=run"},
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.err,
                 "the config's top-level key 'precison' is not one trainer reads (the top level also "
                 "takes keys of your own, so it was accepted): did you mean 'precision'?"));
  CHECK(contains(result.err,
                 "'experiment' holds trainer: sections trainer reads at the top level, not under "
                 "'experiment'"));
  CHECK(contains(result.err, "starts with the line '# @package _global_'"));
  CHECK_FALSE(contains(result.err, "'train'"));  // lightning-hydra-template's train: true is no typo of trainer
  // The shipped tree says nothing.
  auto plain = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=128", "trainer.max_epochs=1",
                            "test_after_fit=false", "hydra.run.dir=plain"},
                           dir.path());
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(contains(plain.err, "top-level key"));
}

TEST_CASE("a group chosen twice in the defaults tree names both files and the entry to write with override") {
  TempDir dir;
  const fs::path root(dir.path());
  fs::create_directories(root / "conf" / "experiment");
  write_text(root / "conf" / "experiment" / "bigger.yaml", "# @package _global_\ndefaults:\n  - /model: cnn\n");
  auto twice =
      run_process({TRAINER_BINARY, "fit", "--cfg", "job", "--config-dir", "conf", "experiment=bigger"}, dir.path());
  check_clean_error(twice);
  // Hydra's words, then where: the experiment's entry is the one to change (the fix pointed at the
  // primary config's entry and offered the value it already had).
  const std::string experiment = (fs::canonical(root) / "conf" / "experiment" / "bigger.yaml").string();
  CHECK(contains(twice.err, experiment + ":3: Multiple values for model. To override a value use 'override model: "
                                         "cnn'. model is chosen twice in the defaults tree: cnn here and mlp at "));
  CHECK(contains(twice.err, "Write this entry as `- override /model: cnn`"));
  write_text(root / "conf" / "experiment" / "bigger.yaml",
             "# @package _global_\ndefaults:\n  - override /model: cnn\n");
  auto fixed =
      run_process({TRAINER_BINARY, "fit", "--cfg", "job", "--config-dir", "conf", "experiment=bigger"}, dir.path());
  INFO(fixed.err);
  CHECK(fixed.exit_code == 0);
  CHECK(contains(fixed.out, "model:\n  name: cnn\n"));
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

namespace {

// metrics.csv without the speed columns (samples_per_sec and the like differ between runs), a
// line per row.
std::vector<std::string> metrics_without_speeds(const fs::path& path) {
  const CsvTable table = read_csv(path);
  std::vector<std::string> lines(table.rows.size() + 1);
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (table.columns[c].find("_per_sec") != std::string::npos) continue;
    lines[0] += table.columns[c] + ",";
    for (size_t r = 0; r < table.rows.size(); ++r) {
      lines[r + 1] += (c < table.rows[r].size() ? table.rows[r][c] : std::string()) + ",";
    }
  }
  return lines;
}

}  // namespace

TEST_CASE(
    "metrics.csv: a fit resumed from an older checkpoint ends as the run never stopped; another run's file is "
    "refused") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  const std::vector<std::string> fit = {TRAINER_BINARY,
                                        "fit",
                                        "data=synthetic",
                                        "data.num_samples=256",
                                        "trainer.log_every_n_steps=2",
                                        "callbacks.model_checkpoint.save_top_k=-1",
                                        "hydra.run.dir=run"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = fit;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_process(args, dir.path());
  };
  auto first = with({"trainer.max_epochs=3"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::vector<std::string> never_stopped = metrics_without_speeds(run / "metrics.csv");
  // From the first epoch's checkpoint: the rows logged at its step after it was taken (the next
  // epoch's learning rate) and the test after fit are dropped, and logged again once.
  auto again = with({"trainer.max_epochs=3", "ckpt_path=run/checkpoints/epoch_000.ckpt"});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.err.find("row(s) logged after the checkpoint") != std::string::npos);
  CHECK(metrics_without_speeds(run / "metrics.csv") == never_stopped);
  // A finished run resumed for one more epoch: its test row goes, the header keeps its place.
  auto longer = with({"trainer.max_epochs=4", "ckpt_path=last"});
  INFO(longer.err);
  REQUIRE(longer.exit_code == 0);
  const std::vector<std::string> resumed = metrics_without_speeds(run / "metrics.csv");
  REQUIRE(resumed.size() > never_stopped.size());
  CHECK(never_stopped.back().rfind(",,", 0) == 0);  // the test row: no epoch, no step
  for (size_t line = 1; line + 1 < never_stopped.size(); ++line) {
    CHECK(resumed[line].rfind(never_stopped[line], 0) == 0);  // the test columns come later, again
  }
  CHECK(resumed[never_stopped.size() - 1].rfind("3,", 0) == 0);  // the fourth epoch follows the third
  CHECK(std::count_if(resumed.begin(), resumed.end(),
                      [](const std::string& line) { return line.rfind(",,", 0) == 0; }) == 1);

  // A new fit whose logger.csv.save_dir is that run's directory: refused, the run's file untouched.
  const std::string before = read_file(run / "metrics.csv");
  auto other = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "trainer.max_epochs=1",
                            "hydra.run.dir=other", "logger.csv.save_dir=run"},
                           dir.path());
  CHECK(other.exit_code != 0);
  CHECK(other.err.find("logger.csv.save_dir: run is another run's directory") != std::string::npos);
  CHECK(read_file(run / "metrics.csv") == before);
  CHECK_FALSE(fs::exists(run / "metrics.csv.1"));
}

TEST_CASE("a primary config without data or model is refused before anything is made, naming the file") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  fs::create_directories(root / "mine");
  write_text(root / "mine" / "config.yaml", "seed: 1\ndata: {name: synthetic}\n");
  auto single = run_process({TRAINER_BINARY, "fit", "-cp", "mine"}, dir.path());
  INFO(single.err);
  CHECK(single.exit_code == 1);
  check_clean_error(single);
  CHECK(contains(single.err, "Error: config: the composed config has no model section: " +
                                 (root / "mine" / "config.yaml").string() + " and its defaults list choose none"));
  CHECK(contains(single.err, "the section itself (model: {name: mlp}"));
  auto sweep =
      run_process({TRAINER_BINARY, "fit", "-m", "-cp", "mine", "seed=1,2", "hydra.sweep.dir=sweep"}, dir.path());
  INFO(sweep.err);
  CHECK(sweep.exit_code == 1);
  CHECK(contains(sweep.err, "2 of 2 sweep jobs are not valid; nothing was run"));
  CHECK(contains(sweep.err, "the composed config has no model section"));
  // A refused fit takes back the default run directory and the outputs/<date>/ made for it.
  auto refused = run_process({TRAINER_BINARY, "fit", "optimizer.lr=-1"}, dir.path());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "optimizer.lr"));
  CHECK_FALSE(fs::exists(root / "outputs"));
  CHECK_FALSE(fs::exists(root / "sweep"));
}

TEST_CASE("a primary config whose defaults list leaves out _self_ warns as Hydra 1.3 does, once") {
  TempDir dir;
  const fs::path root(dir.path());
  fs::create_directories(root / "conf" / "db");
  write_text(root / "conf" / "db" / "mysql.yaml", "host: localhost\n");
  write_text(root / "conf" / "mine.yaml", "defaults:\n  - db: mysql\nfoo: 1\n");
  write_text(root / "conf" / "own.yaml", "defaults:\n  - db: mysql\n  - _self_\nfoo: 1\n");
  const std::string warning =
      "UserWarning: In 'mine': Defaults list is missing `_self_`. See "
      "https://hydra.cc/docs/1.2/upgrades/1.0_to_1.1/default_composition_order for more information";
  auto missing = run_process({TRAINER_BINARY, "fit", "--config-dir", "conf", "--config-name", "mine", "--cfg", "job"},
                             root.string());
  INFO(missing.err);
  REQUIRE(missing.exit_code == 0);
  CHECK(missing.out == "db:\n  host: localhost\nfoo: 1\n");  // _self_ last, as Hydra 1.1+ composes
  CHECK(contains(missing.err, warning));
  // A sweep composes the config once a job: one warning, as Python's warning filter shows it.
  auto sweep = run_process(
      {TRAINER_BINARY, "fit", "-m", "--config-dir", "conf", "--config-name", "mine", "foo=1,2,3", "--cfg", "job"},
      root.string());
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  size_t count = 0;
  for (size_t at = sweep.err.find(warning); at != std::string::npos; at = sweep.err.find(warning, at + 1)) ++count;
  CHECK(count == 1);
  auto with_self = run_process({TRAINER_BINARY, "fit", "--config-dir", "conf", "--config-name", "own", "--cfg", "job"},
                               root.string());
  REQUIRE(with_self.exit_code == 0);
  CHECK_FALSE(contains(with_self.err, "_self_"));
}
