// hydra/sweeper=optuna with the real trainer binary: a TPE study whose trials are asked for as
// slots free, its study file and Hydra's optimization_results.yaml; a killed study continued by
// the same command and by `trainer sweep resume DIR`; a changed search refused; the shipped
// hparams_search config on Fashion-MNIST; and every mistake reported before anything runs.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;
using trainer::config::Node;

namespace {

std::vector<std::string> study_command(const std::string& sweep_dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "-m",
                                   "hydra/sweeper=optuna",
                                   "data=synthetic",
                                   "data.num_workers=0",
                                   "test_after_fit=false",
                                   "optimizer.lr=tag(log, interval(1e-5, 1e-1))",
                                   "model.hidden_sizes=choice([16],[32],[64])",
                                   "hydra.sweep.dir=" + sweep_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

struct Trial {
  int number = -1;
  std::string state;
  std::vector<double> params;
  double value = 0;
};

std::vector<Trial> study_trials(const fs::path& sweep_dir) {
  const Node root = trainer::config::load_yaml_file((sweep_dir / ".sweep" / "study.yaml").string()).root;
  std::vector<Trial> out;
  for (const Node& node : root.find("trials")->items()) {
    Trial t;
    t.number = static_cast<int>(node.find("number")->as_int());
    t.state = node.find("state")->as_string();
    for (const Node& p : node.find("params")->items()) {
      t.params.push_back(p.type() == trainer::config::NodeType::kFloat ? p.as_float()
                                                                       : static_cast<double>(p.as_int()));
    }
    const Node* value = node.find("value");
    if (value != nullptr && !value->is_null()) {
      t.value =
          value->type() == trainer::config::NodeType::kFloat ? value->as_float() : static_cast<double>(value->as_int());
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string status_field(const fs::path& sweep, int job, const std::string& field) {
  const std::string text = read_file(sweep / ".sweep" / "status" / (std::to_string(job) + ".yaml"));
  const size_t start = text.find(field + ": ");
  if (start == std::string::npos) return "";
  return text.substr(start + field.size() + 2, text.find('\n', start) - start - field.size() - 2);
}

}  // namespace

TEST_CASE("optuna: a TPE study asks for trials as slots free and keeps its study and results") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "study";
  auto result = run_process(
      study_command(sweep.string(), {"data.num_samples=2048", "trainer.max_epochs=2", "hydra.sweeper.n_trials=6",
                                     "hydra.sweeper.sampler.seed=5", "hydra.sweeper.sampler.n_startup_trials=3",
                                     "hydra/launcher=local", "hydra.launcher.n_jobs=2"}),
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  // The objective is the checkpoint's monitor, maximised as its mode says; the first line says so.
  CHECK(contains(result.err, "[optuna] study study: TPE (n_startup_trials=3"));
  CHECK(
      contains(result.err,
               "maximize val/acc (from callbacks.model_checkpoint.monitor), 6 trials, 2 at a time, no pruner, seed 5"));
  CHECK(contains(result.err, "optimizer.lr: float in [1e-05, 0.1], log"));
  CHECK(contains(result.err, "model.hidden_sizes: choice of [16] [32] [64]"));
  const std::vector<Trial> trials = study_trials(sweep);
  REQUIRE(trials.size() == 6);
  double best = -1;
  for (const Trial& t : trials) {
    CHECK(t.state == "complete");
    REQUIRE(t.params.size() == 2);
    CHECK(t.params[0] >= 1e-5);
    CHECK(t.params[0] <= 0.1);
    best = std::max(best, t.value);
    // The trial's job ran with the trial's parameters: its value is its metrics.csv's last val/acc.
    const fs::path run = sweep / std::to_string(t.number);
    CHECK(std::stod(read_csv(run / "metrics.csv").last("val/acc")) == Approx(t.value));
    const std::string overrides = read_file(run / ".hydra" / "overrides.yaml");
    CHECK(contains(overrides, "model.hidden_sizes=[" + std::to_string(16 << static_cast<int>(t.params[1])) + "]"));
    CHECK(status_field(sweep, t.number, "status") == "done");
  }
  const Node results = trainer::config::load_yaml_file((sweep / "optimization_results.yaml").string()).root;
  CHECK(results.find("name")->as_string() == "optuna");
  CHECK(results.find("best_value")->as_float() == Approx(best));
  CHECK(results.find("best_params")->find("optimizer.lr") != nullptr);
  CHECK(results.find("best_params")->find("model.hidden_sizes")->is_list());
  CHECK(fs::exists(sweep / "sweep_summary.md"));
  CHECK(contains(result.err, "[optuna] 6 complete, 0 pruned, 0 failed"));
}

TEST_CASE("optuna: the same seed asks for the same trials, one at a time") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  std::vector<std::vector<Trial>> runs;
  for (const char* name : {"a", "b"}) {
    const fs::path sweep = fs::path(dir.path()) / name;
    auto result = run_process(
        study_command(sweep.string(), {"data.num_samples=512", "trainer.max_epochs=1", "hydra.sweeper.n_trials=5",
                                       "hydra.sweeper.sampler.seed=11", "hydra.sweeper.sampler.n_startup_trials=2",
                                       "trainer.deterministic=true"}),
        dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.err, "1 at a time"));  // the basic launcher: one trial at a time
    runs.push_back(study_trials(sweep));
  }
  REQUIRE(runs[0].size() == 5);
  REQUIRE(runs[1].size() == 5);
  std::set<double> distinct;
  for (size_t i = 0; i < 5; ++i) {
    CHECK(runs[0][i].params == runs[1][i].params);  // TPE's trials too: sequential, deterministic
    distinct.insert(runs[0][i].params[0]);
  }
  CHECK(distinct.size() == 5);
}

TEST_CASE("optuna: a trial killed from outside leaves the study unfinished: exit 1, naming it and the resume") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "study";
  const std::vector<std::string> argv = study_command(
      sweep.string(),
      {"data.num_samples=65536", "trainer.max_epochs=3", "hydra.sweeper.n_trials=2", "hydra.sweeper.sampler.seed=2"});
  bool killed_job = false, sent = false;
  // Trial 0's own process gets SIGKILL (the out-of-memory killer) once it logged an epoch; the
  // sweep goes on with trial 1 and ends.
  auto result = run_and_signal(
      argv, dir.path(),
      [&] {
        std::error_code ec;
        const fs::path metrics = sweep / "0" / "metrics.csv";
        if (!fs::exists(metrics, ec) || read_csv(metrics).rows.empty()) return false;
        const std::string pid = status_field(sweep, 0, "pid");
        if (pid.empty()) return false;
        ::kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
        killed_job = true;
        return true;
      },
      0, &sent);
  INFO(result.err);
  REQUIRE(killed_job);
  CHECK(result.exit_code == 1);
  CHECK(contains(result.err, "1 trial(s) of the study did not finish (#0: interrupted"));
  CHECK(contains(result.err, "trainer sweep resume " + sweep.string()));
}

TEST_CASE("optuna: a study whose config file was edited since its trials were composed is not continued") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "study";
  const fs::path experiment = fs::path(dir.path()) / "cfg" / "experiment" / "night.yaml";
  fs::create_directories(experiment.parent_path());
  write_text(experiment, "# @package _global_\ntrainer: {max_epochs: 2}\ndata: {num_samples: 256}\n");
  auto command = [&](const std::string& trials) {
    return study_command(sweep.string(), {"-cd", (fs::path(dir.path()) / "cfg").string(), "experiment=night",
                                          "hydra.sweeper.n_trials=" + trials, "hydra.sweeper.sampler.seed=2"});
  };
  auto first = run_process(command("1"), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  write_text(experiment, "# @package _global_\ntrainer: {max_epochs: 1}\ndata: {num_samples: 256}\n");
  auto more = run_process(command("2"), dir.path());
  INFO(more.err);
  CHECK(more.exit_code == 1);
  CHECK(contains(more.err, "this Optuna study's trials were composed from other config files"));
  CHECK(contains(more.err, "job 0: trainer.max_epochs: 2 when planned, 1 now"));
  CHECK(study_trials(sweep).size() == 1);  // no trial was added
  CHECK_FALSE(fs::exists(sweep / "1"));
}

TEST_CASE("optuna: a killed study continues with its command and with trainer sweep resume") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "study";
  // Epochs of 64k samples (about a second each) outlast the check for the first epoch's row.
  const std::vector<std::string> argv = study_command(
      sweep.string(), {"data.num_samples=65536", "trainer.max_epochs=3", "hydra.sweeper.n_trials=3",
                       "hydra.sweeper.sampler.seed=2", "hydra/launcher=local", "hydra.launcher.n_jobs=2"});
  bool signalled = false;
  auto killed = run_and_signal(
      argv, dir.path(),
      [&] {
        std::error_code ec;
        const fs::path metrics = sweep / "0" / "metrics.csv";
        return fs::exists(metrics, ec) && read_csv(metrics).rows.size() >= 1;
      },
      SIGINT, &signalled);
  INFO(killed.err);
  REQUIRE(signalled);
  CHECK(killed.exit_code == 130);
  CHECK(contains(killed.err, "interrupted; it runs again when the study resumes"));
  std::vector<Trial> before = study_trials(sweep);
  REQUIRE(before.size() >= 1);
  REQUIRE(before.size() <= 3);
  std::map<int, std::string> ended_start;  // trials that ended before the kill keep their run
  for (const Trial& t : before) {
    if (t.state != "running") ended_start[t.number] = status_field(sweep, t.number, "start_time");
  }

  // `trainer sweep resume DIR` from elsewhere composes new trials the way the command did.
  const fs::path elsewhere = fs::path(dir.path()) / "elsewhere";
  fs::create_directories(elsewhere);
  auto resumed = run_process({TRAINER_BINARY, "sweep", "resume", sweep.string()}, elsewhere.string());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "[optuna] continuing the study of " + sweep.string()));
  CHECK(contains(resumed.err, "the sampler's state restored"));
  CHECK(contains(resumed.err, "(resuming from last.ckpt)"));
  const std::vector<Trial> after = study_trials(sweep);
  REQUIRE(after.size() == 3);  // the count went on from where it was: 3 in all
  for (size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].number == static_cast<int>(i));
    CHECK(after[i].state == "complete");
    if (i < before.size()) CHECK(after[i].params == before[i].params);  // resumed, not asked again
  }
  for (const auto& [number, start] : ended_start) CHECK(status_field(sweep, number, "start_time") == start);

  // The same command again: nothing left to run, nothing re-run.
  auto again = run_process(argv, dir.path());
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(contains(again.err, "resuming: 3 trial(s) ended, 0 interrupted to run again"));
  CHECK_FALSE(contains(again.err, "started"));
  CHECK(study_trials(sweep).size() == 3);

  // A copy of the study's directory is not the study: its trials ran (and checkpointed) in the first.
  const fs::path copy = fs::path(dir.path()) / "copy";
  fs::copy(sweep, copy, fs::copy_options::recursive);
  auto moved = run_process({TRAINER_BINARY, "sweep", "resume", copy.string()}, dir.path());
  INFO(moved.err);
  CHECK(moved.exit_code == 1);
  check_clean_error(moved);
  CHECK(contains(moved.err, "this study's trials ran in " + sweep.string()));
  // Without its study file the directory does not resume as a plain list of jobs.
  fs::remove(copy / ".sweep" / "study.yaml");
  auto lost = run_process({TRAINER_BINARY, "sweep", "resume", copy.string()}, dir.path());
  INFO(lost.err);
  CHECK(lost.exit_code == 1);
  CHECK(contains(lost.err, "is missing; nothing was run"));
  CHECK_FALSE(contains(lost.err, "launching"));

  // Another search in the same directory is refused, with the difference, before anything runs.
  std::vector<std::string> changed = argv;
  std::replace(changed.begin(), changed.end(), std::string("model.hidden_sizes=choice([16],[32],[64])"),
               std::string("model.hidden_sizes=choice([16],[128])"));
  auto refused = run_process(changed, dir.path());
  INFO(refused.err);
  CHECK(refused.exit_code == 1);
  check_clean_error(refused);
  CHECK(contains(refused.err, "this Optuna study was started with another search; nothing was run"));
  CHECK(contains(refused.err,
                 "parameter 2: model.hidden_sizes: choice of [16] [32] [64] in the study, "
                 "model.hidden_sizes: choice of [16] [128] now"));
}

TEST_CASE("optuna: hparams_search=fashion_mnist_optuna searches a cnn on Fashion-MNIST") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "search";
  // No -m: the config sets hydra.mode=MULTIRUN, as lightning-hydra-template's does.
  auto result = run_process(
      {TRAINER_BINARY, "fit", "hparams_search=fashion_mnist_optuna", "hydra.sweeper.n_trials=3", "model=cnn",
       "trainer.max_epochs=1", "trainer.limit_train_batches=40", "trainer.limit_val_batches=20", "test_after_fit=false",
       "data.num_workers=0", "hydra.sweep.dir=" + sweep.string()},
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.err, "maximize val/acc (from optimized_metric), 3 trials, 1 at a time, no pruner, seed 1234"));
  CHECK(contains(result.err, "data.batch_size: choice of 32 64 128 256"));
  CHECK(contains(result.err, "optimizer.weight_decay: float in [1e-06, 0.01], log"));
  const std::vector<Trial> trials = study_trials(sweep);
  REQUIRE(trials.size() == 3);
  for (const Trial& t : trials) {
    CHECK(t.state == "complete");
    CHECK(t.value > 0.1);  // a cnn on real images, 40 batches: better than chance
    CHECK(contains(read_file(sweep / std::to_string(t.number) / ".hydra" / "config.yaml"), "name: cnn"));
  }
}

TEST_CASE("optuna: --cfg lists the searched parameters above the fixed config") {
  TempDir dir;
  auto result = run_process(study_command("s", {"--cfg", "job"}), dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.out, "# Optuna sweeper: TPE (n_startup_trials=10"));
  CHECK(contains(result.out, "#   optimizer.lr: float in [1e-05, 0.1], log\n"));
  CHECK(contains(result.out, "test_after_fit: false"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "s"));
}

TEST_CASE("optuna: mistakes are clear errors before anything runs") {
  TempDir dir;
  struct Case {
    std::vector<std::string> extra;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      // A choice that fails the job's schema: every choice is composed and checked first.
      {{"precision=choice(32,bogus)"}, {"not valid; nothing was run", "bogus is not one of"}},
      {{"hydra/sweeper/sampler=random", "hydra.sweeper.sampler._target_=optuna.samplers.CmaEsSampler"},
       {"hydra.sweeper.sampler._target_", "CMA-ES", "sampler=tpe"}},
      {{"hydra.sweeper.direction=[minimize,maximize]"}, {"hydra.sweeper.direction", "one objective"}},
      {{"hydra.sweeper.storage=sqlite:///x.db"}, {"hydra.sweeper.storage", "database URL"}},
      {{"hydra/launcher=slurm", "hydra.launcher.wait=false"}, {"hydra.launcher.wait", "waits for its trials"}},
      {{"hydra.sweeper.sampler.n_startup_trial=3"}, {"n_startup_trial"}},
      {{"optimizer.lr=tag(log, interval(0, 1))"}, {"above 0"}},
      {{"hydra.sweeper.n_trials=0"}, {"hydra.sweeper.n_trials"}},
      {{"+hydra.sweeper.n_trial=5"}, {"hydra.sweeper.n_trial", "not a setting of the Optuna sweeper", "n_trials"}},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string sweep = "s" + std::to_string(n++);
    auto result = run_process(study_command(sweep, c.extra), dir.path());
    INFO(c.extra.front() << "\n" << result.err);
    CHECK(result.exit_code == 1);
    check_clean_error(result);
    for (const std::string& part : c.says) CHECK(contains(result.err, part));
    CHECK_FALSE(fs::exists(fs::path(dir.path()) / sweep));  // nothing written, no trial ran
  }
  // Nothing to search.
  auto empty =
      run_process({TRAINER_BINARY, "fit", "-m", "hydra/sweeper=optuna", "seed=1", "hydra.sweep.dir=s"}, dir.path());
  CHECK(empty.exit_code == 1);
  CHECK(contains(empty.err, "nothing to search"));
}

TEST_CASE("optuna: storage, study_name, metric and multivariate shape the study; it goes on in another directory") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path storage = fs::path(dir.path()) / "studies" / "mine.yaml";
  auto command = [&](const std::string& sweep, int trials) {
    return std::vector<std::string>{TRAINER_BINARY,
                                    "fit",
                                    "-m",
                                    "hydra/sweeper=optuna",
                                    "data=synthetic",
                                    "data.num_samples=512",
                                    "data.num_workers=0",
                                    "trainer.max_epochs=1",
                                    "test_after_fit=false",
                                    "optimizer.lr=tag(log, interval(1e-4, 1e-1))",
                                    "hydra.sweeper.storage=" + storage.string(),
                                    "hydra.sweeper.study_name=mine",
                                    "hydra.sweeper.metric=val/loss",
                                    "hydra.sweeper.sampler.multivariate=true",
                                    "hydra.sweeper.sampler.n_startup_trials=2",
                                    "hydra.sweeper.sampler.seed=3",
                                    "hydra.sweeper.n_trials=" + std::to_string(trials),
                                    "hydra.sweep.dir=" + sweep};
  };
  auto first = run_process(command("first", 3), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(contains(first.err, "[optuna] study mine: TPE (n_startup_trials=2, n_ei_candidates=24, multivariate=true"));
  CHECK(contains(first.err, "minimize val/loss (from hydra.sweeper.metric)"));  // no direction: minimize
  CHECK(contains(first.err, "[optuna] study file: " + storage.string()));
  REQUIRE(fs::exists(storage));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "first" / ".sweep" / "study.yaml"));
  CHECK(contains(read_file(fs::path(dir.path()) / "first" / ".sweep" / "study_storage"), storage.string()));
  // The study goes on from its storage in a new sweep directory: numbers continue, 5 in all.
  auto second = run_process(command("second", 5), dir.path());
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(contains(second.err, "resuming: 3 trial(s) ended"));
  CHECK(fs::exists(fs::path(dir.path()) / "second" / "3" / "metrics.csv"));
  CHECK(fs::exists(fs::path(dir.path()) / "second" / "4" / "metrics.csv"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "second" / "0"));
  const Node root = trainer::config::load_yaml_file(storage.string()).root;
  CHECK(root.find("study_name")->as_string() == "mine");
  CHECK(root.find("trials")->items().size() == 5);
  // Another study name for the same storage is refused.
  std::vector<std::string> other = command("third", 6);
  std::replace(other.begin(), other.end(), std::string("hydra.sweeper.study_name=mine"),
               std::string("hydra.sweeper.study_name=yours"));
  auto refused = run_process(other, dir.path());
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "study_name: mine in the study, yours now"));
}

TEST_CASE("optuna: a failed trial stops the study under max_failure_rate=0.0 and is counted under 1.0") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // max_epochs=0 trains nothing and logs no val/acc: that trial fails, with the reason.
  auto command = [&](const std::string& sweep, const std::string& rate) {
    return std::vector<std::string>{TRAINER_BINARY,
                                    "fit",
                                    "-m",
                                    "hydra/sweeper=optuna",
                                    "data=synthetic",
                                    "data.num_samples=256",
                                    "data.num_workers=0",
                                    "test_after_fit=false",
                                    "trainer.max_epochs=choice(0,1)",
                                    "hydra.sweeper.n_trials=6",
                                    "hydra.sweeper.sampler.seed=4",
                                    "hydra.sweeper.max_failure_rate=" + rate,
                                    "hydra.sweep.dir=" + sweep};
  };
  auto strict = run_process(command("strict", "0.0"), dir.path());
  INFO(strict.err);
  CHECK(strict.exit_code == 1);
  check_clean_error(strict);
  CHECK(contains(strict.err, "failed: the job logged no val/acc"));
  CHECK(contains(strict.err, "more than max_failure_rate=0.0"));
  const size_t asked = study_trials(fs::path(dir.path()) / "strict").size();
  CHECK(asked < 6);  // it stopped asking
  // Resumed, the study is still past its failure rate: no new trial (each resume started one).
  auto again = run_process(command("strict", "0.0"), dir.path());
  INFO(again.err);
  CHECK(again.exit_code == 1);
  CHECK(contains(again.err, "no new trial starts"));
  CHECK(study_trials(fs::path(dir.path()) / "strict").size() == asked);
  auto lenient = run_process(command("lenient", "1.0"), dir.path());
  INFO(lenient.err);
  CHECK(lenient.exit_code == 0);
  const std::vector<Trial> trials = study_trials(fs::path(dir.path()) / "lenient");
  REQUIRE(trials.size() == 6);
  int failed = 0, complete = 0;
  for (const Trial& t : trials) {
    const bool zero = t.params[0] == 0;  // the choice index: max_epochs=0
    CHECK(t.state == (zero ? "failed" : "complete"));
    failed += t.state == "failed";
    complete += t.state == "complete";
  }
  CHECK(failed > 0);
  CHECK(complete > 0);
}

TEST_CASE("optuna: optimized_metric=val/acc_best, as the template names it, is the best val/acc of each trial") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "best";
  // No direction: val/acc_best is the best of the monitor val/acc, whose mode (max) says the way.
  auto result = run_process(study_command(sweep.string(), {"+optimized_metric=val/acc_best", "data.num_samples=512",
                                                           "trainer.max_epochs=4", "hydra.sweeper.n_trials=3"}),
                            dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.err, "maximize val/acc_best (from optimized_metric)"));
  for (const Trial& t : study_trials(sweep)) {
    const CsvTable metrics = read_csv(sweep / std::to_string(t.number) / "metrics.csv");
    const auto column = std::find(metrics.columns.begin(), metrics.columns.end(), "val/acc") - metrics.columns.begin();
    double best = -1;
    for (const auto& row : metrics.rows) {
      if (static_cast<size_t>(column) < row.size() && !row[static_cast<size_t>(column)].empty()) {
        best = std::max(best, std::stod(row[static_cast<size_t>(column)]));
      }
    }
    CHECK(t.state == "complete");
    CHECK(t.value == Approx(best));
  }
}

TEST_CASE("optuna: the median and successive-halving pruners stop trials that fall behind") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // lr 0.01 learns, 1e-8 does not; epochs of 32k samples (about 0.8 s on 2 cores) outlast the
  // launcher's half-second look at each running trial's metrics.csv.
  for (const std::string pruner : {"median", "successive_halving"}) {
    const fs::path sweep = fs::path(dir.path()) / pruner;
    std::vector<std::string> argv = {
        TRAINER_BINARY,
        "fit",
        "-m",
        "hydra/sweeper=optuna",
        "data=synthetic",
        "data.num_samples=32768",
        "data.num_workers=0",
        "trainer.max_epochs=4",
        "trainer.deterministic=true",  // two trials of one lr give equal values
        "test_after_fit=false",
        "optimizer.lr=choice(0.01,1e-8)",
        "hydra.sweeper.n_trials=6",
        "hydra.sweeper.sampler.seed=20",  // lr 0.01, 0.01, then 1e-8 three times, then 0.01
        "hydra.sweeper.sampler.n_startup_trials=6",
        "hydra.sweep.dir=" + sweep.string()};
    if (pruner == "median") {
      argv.insert(argv.end(), {"+hydra.sweeper.pruner._target_=optuna.pruners.MedianPruner",
                               "+hydra.sweeper.pruner.n_startup_trials=1"});
    } else {
      argv.insert(argv.end(), {"+hydra.sweeper.pruner._target_=optuna.pruners.SuccessiveHalvingPruner",
                               "+hydra.sweeper.pruner.reduction_factor=2"});
    }
    auto result = run_process(argv, dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.err,
                   pruner == "median" ? "median pruner (n_startup_trials=1" : "successive halving (min_resource=1"));
    int pruned = 0, good_complete = 0;
    for (const Trial& t : study_trials(sweep)) {
      if (t.state == "pruned") {
        ++pruned;
        CHECK(t.params[0] == 1);  // only lr=1e-8 falls behind
        CHECK(status_field(sweep, t.number, "status") == "stopped_early");
        CHECK(read_csv(sweep / std::to_string(t.number) / "metrics.csv").last("epoch") !=
              "3");  // stopped before the end
      } else {
        CHECK(t.state == "complete");
        good_complete += t.params[0] == 0;
      }
    }
    CHECK(pruned >= 1);
    CHECK(good_complete >= 1);
    CHECK(contains(result.err, "pruned after"));
  }
}
