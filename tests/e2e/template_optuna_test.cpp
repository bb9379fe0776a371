// lightning-hydra-template's own tree (tests/data/template_optuna/configs: train.yaml and the groups
// it names, hparams_search/mnist_optuna.yaml as the template ships it, hydra/default.yaml with
// colorlog): `trainer fit hparams_search=mnist_optuna ...` plans the search space that real Hydra's
// Optuna sweeper (hydra-optuna-sweeper 1.2.0, Optuna 2.10) plans for the same command line. The
// expected spaces (expected/NNN.space, one per line of cases.txt) are written by make_expected.py,
// which runs the real sweeper up to the creation of its study (scripts/hydra_goldens.sh).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::read_file;
using trainer::testing::run_process;
using trainer::testing::split_case;
using trainer::testing::TempDir;

namespace {

const fs::path kDir = fs::path(TRAINER_TEST_DATA_DIR) / "template_optuna";

// The searched parameters of `--cfg job`'s first comment block ("#   key: ..."), one a line.
std::string planned_space(const std::string& out) {
  std::string space;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#   ", 0) == 0) {
      space += line.substr(4) + "\n";
    } else if (line.empty() || line[0] != '#') {
      break;
    }
  }
  return space;
}

struct Run {
  trainer::testing::ProcessResult result;
  std::string line;
};

Run cfg_job(const std::string& line, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {TRAINER_BINARY, "fit", "-cp", (kDir / "configs").string(), "-cn", "train"};
  for (const std::string& word : split_case(line)) argv.push_back(word);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("--cfg");
  argv.push_back("job");
  // the template's paths/default.yaml reads ${oc.env:PROJECT_ROOT}
  return {run_process(argv, kDir.string(), {"PROJECT_ROOT=" + kDir.string()}), line};
}

}  // namespace

TEST_CASE(
    "template_optuna: hparams_search=mnist_optuna on the template's tree plans the space Hydra's Optuna sweeper "
    "plans") {
  std::ifstream cases(kDir / "cases.txt");
  REQUIRE(cases.good());
  int number = 0;
  for (std::string line; std::getline(cases, line);) {
    if (line.empty() || line[0] == '#') continue;
    char name[16];
    std::snprintf(name, sizeof(name), "%03d.space", number++);
    const Run run = cfg_job(line);
    INFO("case " << name << ": trainer fit " << line << "\nstderr: " << run.result.err);
    REQUIRE(run.result.exit_code == 0);
    const std::string expected = read_file(kDir / "expected" / name);
    REQUIRE_FALSE(expected.empty());
    CHECK(planned_space(run.result.out) == expected);
  }
  CHECK(number >= 8);
}

TEST_CASE("template_optuna: the study's settings come from the template's mnist_optuna.yaml") {
  const Run run = cfg_job("hparams_search=mnist_optuna");
  INFO(run.result.err);
  REQUIRE(run.result.exit_code == 0);
  const std::string first = run.result.out.substr(0, run.result.out.find('\n'));
  // TPE with the template's n_startup_trials, its direction and optimized_metric, its n_trials
  CHECK(first.find("TPE (n_startup_trials=10") != std::string::npos);
  CHECK(first.find("maximize val/acc_best (from optimized_metric), 20 trials") != std::string::npos);
  // the template's own keys are in the job's config as written
  CHECK(run.result.out.find("\nmodel:\n  _target_: src.models.mnist_module.MNISTLitModule\n") != std::string::npos);
  CHECK(run.result.out.find("optimized_metric: val/acc_best") != std::string::npos);
}

TEST_CASE(
    "template_optuna: hydra/sweeper/sampler=random on the template's TPE settings is refused, as Hydra refuses it") {
  // The template's mnist_optuna.yaml sets _target_ TPESampler and n_startup_trials; the random
  // sampler's schema has neither key, so Hydra stops with a ConfigKeyError: not TPE in disguise.
  const Run run = cfg_job("hparams_search=mnist_optuna hydra/sweeper/sampler=random");
  INFO(run.result.err);
  CHECK(run.result.exit_code == 1);
  CHECK(run.result.out.empty());
  CHECK(run.result.err.find("hydra.sweeper.sampler.n_startup_trials: 'n_startup_trials' is not a setting of "
                            "hydra/sweeper/sampler=random") != std::string::npos);
}

TEST_CASE("template_optuna: running the template's tree is refused before anything runs, each problem said once") {
  // The template trains a Python LightningModule and sets Lightning-only keys (trainer._target_,
  // callbacks' verbose, seed: null): trainer plans its search but runs none of it, and says why
  // once for all the trials it checked rather than once per trial.
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto result = run_process({TRAINER_BINARY, "fit", "-cp", (kDir / "configs").string(), "-cn", "train",
                             "hparams_search=mnist_optuna", "hydra.sweep.dir=" + sweep.string()},
                            dir.path(), {"PROJECT_ROOT=" + std::string(dir.path())});
  INFO(result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.err.find("8 of 8 sweep jobs are not valid; nothing was run") != std::string::npos);
  CHECK(result.err.find("jobs 0, 1, 2, 3, 4, 5, 6, 7: config:") != std::string::npos);
  // the cause first: the template's model and data are Python classes
  CHECK(result.err.find("config: a config written for Python (Hydra's instantiate):\n  model._target_ (") !=
        std::string::npos);
  CHECK(result.err.find("data._target_ (") != std::string::npos);
  CHECK(result.err.find("choose model=mlp, cnn, resnet or torchscript") != std::string::npos);
  CHECK(result.err.find("trainer._target_ (") != std::string::npos);
  const size_t first = result.err.find("callbacks.early_stopping.strict (");
  REQUIRE(first != std::string::npos);
  CHECK(result.err.find("callbacks.early_stopping.strict (", first + 1) == std::string::npos);  // said once
  CHECK(result.err.find("terminate called") == std::string::npos);
  CHECK_FALSE(fs::exists(sweep));
}
