// TensorBoard's HParams dashboard with the real trainer binary: a sweep's jobs are read back by
// TensorBoard's own hparams plugin (tests/python/read_hparams.py) as one table, a row per job,
// with each job's overridden values, its status and its metrics; the sweep root's experiment
// record lists the swept keys with their domains. Failed, stopped and resumed runs, an Optuna
// study's intervals, and the switches that write nothing.
#include <csignal>
#include <filesystem>
#include <map>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "skip_test.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;
using nlohmann::json;

namespace {

const char* const kSessionFile = "events.out.tfevents.0.hparams";

// What TensorBoard's hparams plugin makes of `logdir` (experiment + session groups), or nullopt
// (the test skipped) without the test Python.
std::optional<json> dashboard(const fs::path& logdir) {
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    skip_test("TRAINER_TEST_PYTHON is empty: no TensorBoard to read the hparams records with", Skip::unexpected_in_ci);
    return std::nullopt;
  }
  auto read = run_process({python, std::string(TRAINER_SOURCE_DIR) + "/tests/python/read_hparams.py", logdir.string()});
  INFO(read.err);
  REQUIRE(read.exit_code == 0);
  return json::parse(read.out);
}

// Session groups by name.
std::map<std::string, json> groups_of(const json& board) {
  std::map<std::string, json> groups;
  for (const json& group : board["session_groups"].value("sessionGroups", json::array())) {
    groups[group["name"].get<std::string>()] = group;
  }
  return groups;
}

const json* hparam_info(const json& board, const std::string& name) {
  for (const json& info : board["experiment"]["hparamInfos"]) {
    if (info["name"] == name) return &info;
  }
  return nullptr;
}

std::set<std::string> metric_tags(const json& board) {
  std::set<std::string> tags;
  for (const json& info : board["experiment"].value("metricInfos", json::array())) {
    tags.insert(info["name"]["tag"].get<std::string>());
  }
  return tags;
}

std::optional<double> metric_value(const json& group, const std::string& tag) {
  for (const json& value : group.value("metricValues", json::array())) {
    if (value["name"]["tag"] == tag) return value["value"].get<double>();
  }
  return std::nullopt;
}

std::string status(const json& group) {
  REQUIRE(group["sessions"].size() == 1);
  return group["sessions"][0].value("status", "STATUS_UNKNOWN");
}

}  // namespace

TEST_CASE("tensorboard hparams: a grid sweep of the cnn on Fashion-MNIST is one table with a row per job") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(
      {TRAINER_BINARY, "fit", "-m", "model=cnn", "model.hidden_size=16,32", "optimizer.lr=0.01,0.001",
       "trainer.max_epochs=1", "trainer.limit_train_batches=4", "trainer.limit_val_batches=2", "test_after_fit=false",
       "data.num_workers=0", "hydra/launcher=local", "hydra.launcher.n_jobs=2", "hydra.sweep.dir=grid"},
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const fs::path sweep = fs::path(dir.path()) / "grid";
  CHECK(fs::exists(sweep / "events.out.tfevents.0.hparams-experiment"));
  const auto board = dashboard(sweep);
  if (!board) return;
  INFO(board->dump(1));

  // The experiment: every overridden key with the values the grid gives it; the jobs' metrics.
  const json* hidden = hparam_info(*board, "model.hidden_size");
  REQUIRE(hidden != nullptr);
  CHECK((*hidden)["type"] == "DATA_TYPE_FLOAT64");
  CHECK((*hidden)["domainDiscrete"] == json::array({16.0, 32.0}));
  CHECK((*hidden)["differs"] == true);
  const json* lr = hparam_info(*board, "optimizer.lr");
  REQUIRE(lr != nullptr);
  CHECK((*lr)["domainDiscrete"] == json::array({0.001, 0.01}));
  const json* model = hparam_info(*board, "model");
  REQUIRE(model != nullptr);
  CHECK((*model)["type"] == "DATA_TYPE_STRING");
  CHECK((*model)["domainDiscrete"] == json::array({"cnn"}));
  CHECK_FALSE(model->contains("differs"));  // one value for every job
  const json* test_after_fit = hparam_info(*board, "test_after_fit");
  REQUIRE(test_after_fit != nullptr);
  CHECK((*test_after_fit)["type"] == "DATA_TYPE_BOOL");
  const std::set<std::string> tags = metric_tags(*board);
  for (const char* tag : {"val/acc", "val/loss", "train/loss_epoch", "train/acc_epoch"}) CHECK(tags.count(tag) == 1);
  CHECK(tags.count("epoch") == 0);
  CHECK(tags.count("step") == 0);

  // One row per job, named after the sweep and the job, with the job's values, status and metrics.
  const std::map<std::string, json> groups = groups_of(*board);
  REQUIRE(groups.size() == 4);
  const std::vector<std::pair<double, double>> grid = {{16, 0.01}, {16, 0.001}, {32, 0.01}, {32, 0.001}};
  for (int job = 0; job < 4; ++job) {
    const std::string name = "grid/" + std::to_string(job);
    REQUIRE(groups.count(name) == 1);
    const json& group = groups.at(name);
    CHECK(group["hparams"]["model"] == "cnn");
    CHECK(group["hparams"]["model.hidden_size"].get<double>() == grid[job].first);
    CHECK(group["hparams"]["optimizer.lr"].get<double>() == grid[job].second);
    CHECK(group["hparams"]["trainer.max_epochs"].get<double>() == 1.0);
    CHECK(group["sessions"][0]["name"] == std::to_string(job) + "/tensorboard");
    CHECK(status(group) == "STATUS_SUCCESS");
    // The dashboard's value is the job's last val/acc, as metrics.csv has it.
    const CsvTable csv = read_csv(sweep / std::to_string(job) / "metrics.csv");
    const auto acc = metric_value(group, "val/acc");
    REQUIRE(acc.has_value());
    CHECK(*acc == Approx(std::stod(csv.last("val/acc"))).epsilon(1e-6));
  }
}

TEST_CASE("tensorboard hparams: the default sweep directory's time names each job's group") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // hydra.sweep.dir as shipped: multirun/${now:%Y-%m-%d}/${now:%H-%M-%S}. The group named the
  // unresolved text, so two sweeps' job 0 were one row of averaged metrics.
  auto result =
      run_process({TRAINER_BINARY, "fit", "-m", "data=synthetic", "data.num_samples=128", "model.hidden_sizes=[8]",
                   "trainer.max_epochs=1", "test_after_fit=false", "data.num_workers=0", "seed=1,2"},
                  dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_FALSE(contains(result.err, "logger.csv writes"));  // the shipped logger: each job's metrics.csv
  std::vector<fs::path> sweeps;
  for (const auto& day : fs::directory_iterator(fs::path(dir.path()) / "multirun")) {
    for (const auto& time : fs::directory_iterator(day.path())) sweeps.push_back(time.path());
  }
  REQUIRE(sweeps.size() == 1);
  const std::string name = sweeps[0].filename().string();
  for (int job = 0; job < 2; ++job) {
    const std::string record =
        read_file(sweeps[0] / std::to_string(job) / "tensorboard" / "events.out.tfevents.0.hparams");
    CHECK(contains(record, name + "/" + std::to_string(job)));
    CHECK_FALSE(contains(record, "${now"));
  }
}

TEST_CASE("tensorboard hparams: a failed job is a failure, a stopped run unknown until it resumes and ends") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  SECTION("a sweep with a failing job") {
    auto result = run_process({TRAINER_BINARY, "fit", "-m", "data=synthetic", "data.num_workers=0",
                               "trainer.max_epochs=1", "model.input_size=5,784", "hydra.sweep.dir=mixed"},
                              dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 1);
    const auto board = dashboard(root / "mixed");
    if (!board) return;
    INFO(board->dump(1));
    const std::map<std::string, json> groups = groups_of(*board);
    REQUIRE(groups.size() == 2);
    CHECK(status(groups.at("mixed/0")) == "STATUS_FAILURE");
    CHECK(groups.at("mixed/0")["hparams"]["model.input_size"].get<double>() == 5.0);
    CHECK(status(groups.at("mixed/1")) == "STATUS_SUCCESS");
    const json* input_size = hparam_info(*board, "model.input_size");
    REQUIRE(input_size != nullptr);
    CHECK((*input_size)["domainDiscrete"] == json::array({5.0, 784.0}));
  }
  SECTION("a single run stopped by SIGTERM, then resumed") {
    const std::vector<std::string> command = {TRAINER_BINARY,          "fit",
                                              "data=synthetic",        "data.num_workers=0",
                                              "data.num_samples=4096", "trainer.max_epochs=40",
                                              "optimizer.lr=0.003",    "hydra.run.dir=run"};
    const fs::path last = root / "run" / "checkpoints" / "last.ckpt";
    bool stopped = false;
    auto first = run_and_signal(
        command, dir.path(), [&] { return fs::exists(last); }, SIGTERM, &stopped);
    INFO(first.err);
    REQUIRE(stopped);
    CHECK(first.exit_code != 0);
    auto board = dashboard(root / "run" / "tensorboard");
    if (!board) return;
    INFO(board->dump(1));
    std::map<std::string, json> groups = groups_of(*board);
    REQUIRE(groups.size() == 1);
    // Not in a sweep: the group is the session itself (the run's TensorBoard directory).
    CHECK(groups.begin()->first == ".");
    CHECK(status(groups.begin()->second) == "STATUS_UNKNOWN");
    CHECK(groups.begin()->second["sessions"][0].contains("endTimeSecs"));
    CHECK(groups.begin()->second["hparams"]["optimizer.lr"].get<double>() == 0.003);

    std::vector<std::string> resume = command;
    resume.push_back("ckpt_path=last");
    auto second = run_process(resume, dir.path());
    INFO(second.err);
    REQUIRE(second.exit_code == 0);
    board = dashboard(root / "run" / "tensorboard");
    groups = groups_of(*board);
    REQUIRE(groups.size() == 1);
    CHECK(status(groups.begin()->second) == "STATUS_SUCCESS");  // one session, its last outcome
    CHECK(groups.begin()->second["hparams"]["ckpt_path"] == "last");
  }
  SECTION("no TensorBoard logger, or fast_dev_run: no hparams records") {
    for (const char* off : {"logger.tensorboard=null", "trainer.fast_dev_run=true"}) {
      auto result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "trainer.max_epochs=1",
                                 off, "hydra.run.dir=off"},
                                dir.path());
      INFO(result.err);
      REQUIRE(result.exit_code == 0);
      CHECK_FALSE(fs::exists(root / "off" / "tensorboard" / kSessionFile));
      fs::remove_all(root / "off");
    }
  }
}

TEST_CASE("tensorboard hparams: an Optuna study shows its sampled numbers as an interval") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(
      {TRAINER_BINARY, "fit", "-m", "hydra/sweeper=optuna", "data=synthetic", "data.num_workers=0",
       "trainer.max_epochs=1", "test_after_fit=false", "hydra.sweeper.n_trials=3", "hydra.sweeper.n_jobs=1",
       "optimizer.lr=tag(log, interval(1e-5, 1e-1))", "model.hidden_sizes=choice([16],[32])", "hydra.sweep.dir=study"},
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto board = dashboard(fs::path(dir.path()) / "study");
  if (!board) return;
  INFO(board->dump(1));
  const json* lr = hparam_info(*board, "optimizer.lr");
  REQUIRE(lr != nullptr);
  REQUIRE(lr->contains("domainInterval"));
  const double low = (*lr)["domainInterval"]["minValue"];
  const double high = (*lr)["domainInterval"]["maxValue"];
  CHECK(low >= 1e-5);
  CHECK(high <= 1e-1);
  CHECK(low < high);
  const json* hidden = hparam_info(*board, "model.hidden_sizes");
  REQUIRE(hidden != nullptr);
  CHECK((*hidden)["type"] == "DATA_TYPE_STRING");  // lists are shown as typed
  const std::map<std::string, json> groups = groups_of(*board);
  REQUIRE(groups.size() == 3);
  for (const auto& [name, group] : groups) {
    const double value = group["hparams"]["optimizer.lr"];
    CHECK(value >= low);
    CHECK(value <= high);
    CHECK(status(group) == "STATUS_SUCCESS");
  }
}
