// logger=mlflow with the real trainer binary, read back with MLflow's own client
// (tests/python/read_mlflow.py): a sweep on a real `mlflow server` (one parent run, a child per
// job with the flattened config as params and metrics.csv's values as metrics); the template's
// mlruns/ file store, a run stopped and resumed into the same run, a failed run; a server that is
// down or goes away mid-run never stops training; URIs trainer cannot log to refused up front.
#include <csignal>
#include <filesystem>
#include <map>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "skip_test.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;
using nlohmann::json;

namespace {

bool have_mlflow() {
  if (std::string(TRAINER_MLFLOW_PYTHON).empty()) {
    skip_test("TRAINER_MLFLOW_PYTHON is empty: no MLflow to run a server and read the runs with",
              Skip::unexpected_in_ci);
    return false;
  }
  return true;
}

// A real `mlflow server` on a free loopback port, its store a SQLite file in `dir`.
class MlflowServer {
 public:
  explicit MlflowServer(const fs::path& dir) : port_(free_local_port()) {
    fs::create_directories(dir);
    process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{TRAINER_MLFLOW_PYTHON, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port",
                                 std::to_string(port_), "--backend-store-uri",
                                 "sqlite:///" + (dir / "mlflow.db").string(), "--default-artifact-root",
                                 (dir / "artifacts").string(), "--workers", "1"},
        dir.string(), (dir / "server.log").string());
    // Its first start imports MLflow and makes the database: tens of seconds on a busy machine.
    for (int i = 0; i < 1200 && !local_port_open(port_); ++i) {
      REQUIRE(process_->running());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    INFO(read_file(dir / "server.log"));
    REQUIRE(local_port_open(port_));
  }
  std::string uri() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  void stop() { process_->stop(); }

 private:
  int port_;
  std::unique_ptr<BackgroundProcess> process_;
};

// Every run at `uri`, as MLflow's client reads them.
json runs_at(const std::string& uri) {
  auto read =
      run_process({TRAINER_MLFLOW_PYTHON, std::string(TRAINER_SOURCE_DIR) + "/tests/python/read_mlflow.py", uri}, "",
                  {"MLFLOW_ALLOW_FILE_STORE=true"});
  INFO(read.err);
  REQUIRE(read.exit_code == 0);
  return json::parse(read.out);
}

// (step, value) of a metrics.csv column, in file order.
std::vector<std::pair<int64_t, double>> csv_history(const fs::path& metrics_csv, const std::string& column) {
  const CsvTable csv = read_csv(metrics_csv);
  size_t index = 0, step = 0;
  while (index < csv.columns.size() && csv.columns[index] != column) ++index;
  while (step < csv.columns.size() && csv.columns[step] != "step") ++step;
  std::vector<std::pair<int64_t, double>> points;
  for (const auto& row : csv.rows) {
    if (index < row.size() && !row[index].empty()) points.emplace_back(std::stoll(row[step]), std::stod(row[index]));
  }
  return points;
}

std::vector<std::pair<int64_t, double>> mlflow_history(const json& run, const std::string& key) {
  std::vector<std::pair<int64_t, double>> points;
  for (const json& point : run["metrics"].value(key, json::array())) {
    points.emplace_back(point[0].get<int64_t>(), point[1].get<double>());
  }
  std::sort(points.begin(), points.end());
  return points;
}

}  // namespace

TEST_CASE("mlflow: a sweep of the cnn on Fashion-MNIST on a real mlflow server is a parent run with a child per job") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  if (!have_mlflow()) return;
  TempDir dir;
  const fs::path root(dir.path());
  MlflowServer server(root / "server");
  auto result =
      run_process({TRAINER_BINARY, "fit", "-m", "logger=mlflow", "logger.mlflow.tracking_uri=" + server.uri(),
                   "logger.mlflow.experiment_name=fashion", "+logger.mlflow.tags.team=vision", "model=cnn",
                   "model.hidden_size=16,32", "trainer.max_epochs=2", "trainer.limit_train_batches=4",
                   "trainer.limit_val_batches=2", "test_after_fit=false", "data.num_workers=0", "hydra.sweep.dir=grid"},
                  dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_FALSE(contains(result.err, "warning"));
  const json runs = runs_at(server.uri());
  INFO(runs.dump(1));
  std::map<std::string, json> named;
  for (const json& run : runs) {
    if (run["experiment"] == "fashion") named[run["run_name"].get<std::string>()] = run;
  }
  REQUIRE(named.size() == 3);
  REQUIRE(named.count("grid") == 1);
  const json& parent = named.at("grid");
  CHECK(parent["status"] == "FINISHED");
  CHECK(parent["tags"]["trainer.sweep_dir"] == (root / "grid").string());
  for (int job = 0; job < 2; ++job) {
    const std::string name = "grid/" + std::to_string(job);
    REQUIRE(named.count(name) == 1);
    const json& run = named.at(name);
    CHECK(run["status"] == "FINISHED");
    CHECK(run["tags"]["mlflow.parentRunId"] == parent["run_id"]);
    CHECK(run["tags"]["team"] == "vision");
    // The flattened job config.
    CHECK(run["params"]["model.name"] == "cnn");
    CHECK(run["params"]["model.hidden_size"] == (job == 0 ? "16" : "32"));
    CHECK(run["params"]["model.channels"] == "[32, 64]");
    CHECK(run["params"]["optimizer.lr"] == "0.001");
    CHECK(run["params"]["trainer.max_epochs"] == "2");
    CHECK(run["params"].size() > 50);
    // Every value metrics.csv has, at its step.
    const fs::path metrics_csv = root / "grid" / std::to_string(job) / "metrics.csv";
    for (const char* metric : {"val/acc", "val/loss", "train/loss_epoch"}) {
      INFO(metric);
      auto expected = csv_history(metrics_csv, metric);
      std::sort(expected.begin(), expected.end());
      const auto got = mlflow_history(run, metric);
      REQUIRE(got.size() == expected.size());
      REQUIRE(expected.size() == 2);
      for (size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].first == expected[i].first);
        CHECK(got[i].second == Approx(expected[i].second).epsilon(1e-6));
      }
    }
    CHECK(run["metrics"].contains("epoch"));
  }
  // The parent run's record in the sweep directory.
  CHECK(contains(read_file(root / "grid" / ".sweep" / "mlflow_parent.yaml"), parent["run_id"].get<std::string>()));
}

TEST_CASE("mlflow: the template's mlruns/ file store; a stopped run resumes into the same run; a failed run") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  if (!have_mlflow()) return;
  TempDir dir;
  const fs::path root(dir.path());
  // logger/mlflow.yaml's tracking_uri: ${paths.log_dir}/mlflow/mlruns, the directory trainer runs in.
  const std::string store = "file:" + (root / "mlflow" / "mlruns").string();
  SECTION("stopped by SIGTERM, then resumed with ckpt_path=last") {
    const std::vector<std::string> command = {TRAINER_BINARY,          "fit",
                                              "logger=mlflow",         "data=synthetic",
                                              "data.num_workers=0",    "data.num_samples=4096",
                                              "trainer.max_epochs=40", "hydra.run.dir=run"};
    const fs::path last = root / "run" / "checkpoints" / "last.ckpt";
    bool stopped = false;
    auto first = run_and_signal(
        command, dir.path(), [&] { return fs::exists(last); }, SIGTERM, &stopped);
    INFO(first.err);
    REQUIRE(stopped);
    CHECK(first.exit_code != 0);
    json runs = runs_at(store);
    INFO(runs.dump(1));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0]["experiment"] == "lightning_logs");
    CHECK(runs[0]["status"] == "KILLED");
    CHECK(runs[0]["run_name"] == "run");  // not in a sweep: the run directory, from where trainer ran
    const std::string run_id = runs[0]["run_id"];
    CHECK(contains(read_file(root / "run" / "mlflow_run.yaml"), run_id));

    std::vector<std::string> resume = command;
    resume.push_back("ckpt_path=last");
    auto second = run_process(resume, dir.path());
    INFO(second.err);
    REQUIRE(second.exit_code == 0);
    CHECK(contains(second.err, "MLflow: continuing run " + run_id));
    runs = runs_at(store);
    REQUIRE(runs.size() == 1);  // the same run, not a second one
    CHECK(runs[0]["run_id"] == run_id);
    CHECK(runs[0]["status"] == "FINISHED");
    CHECK(runs[0]["params"]["ckpt_path"] == "None");  // the first attempt's params: MLflow's never change
    // Its val/acc history reaches the last epoch's step, as metrics.csv does.
    const auto expected = csv_history(root / "run" / "metrics.csv", "val/acc");
    const auto got = mlflow_history(runs[0], "val/acc");
    REQUIRE_FALSE(got.empty());
    CHECK(got.back().first == expected.back().first);
    CHECK(got.back().second == Approx(expected.back().second));
  }
  SECTION("trainer.default_root_dir that does not exist yet holds the record, and a resume finds it") {
    // The loggers' files go to trainer.default_root_dir (Lightning's); it was never made, and the
    // record's write failed with a warning: the resume then started a second MLflow run.
    const std::vector<std::string> command = {TRAINER_BINARY,
                                              "fit",
                                              "logger=mlflow",
                                              "data=synthetic",
                                              "data.num_workers=0",
                                              "test_after_fit=false",
                                              "trainer.default_root_dir=" + (root / "logs" / "a").string(),
                                              "hydra.run.dir=run"};
    std::vector<std::string> first_command = command;
    first_command.push_back("trainer.max_epochs=1");
    auto first = run_process(first_command, dir.path());
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    CHECK_FALSE(contains(first.err, "cannot create the MLflow run record"));
    json runs = runs_at(store);
    REQUIRE(runs.size() == 1);
    const std::string run_id = runs[0]["run_id"];
    CHECK(contains(read_file(root / "logs" / "a" / "mlflow_run.yaml"), run_id));

    std::vector<std::string> resume = command;
    resume.insert(resume.end(), {"trainer.max_epochs=2", "ckpt_path=last"});
    auto second = run_process(resume, dir.path());
    INFO(second.err);
    REQUIRE(second.exit_code == 0);
    CHECK(contains(second.err, "MLflow: continuing run " + run_id));
    runs = runs_at(store);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0]["status"] == "FINISHED");
  }
  SECTION("a run that fails while it trains is FAILED") {
    // A diverging SGD: the loss is no longer finite at the first check, and fit ends with an error.
    auto result = run_process({TRAINER_BINARY, "fit", "logger=mlflow", "data=synthetic", "data.num_workers=0",
                               "optimizer=sgd", "optimizer.lr=1e30", "hydra.run.dir=bad"},
                              dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code != 0);
    const json runs = runs_at(store);
    INFO(runs.dump(1));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0]["status"] == "FAILED");
    CHECK(runs[0]["params"]["optimizer.lr"] == "1e+30");
  }
}

TEST_CASE("mlflow: a server that is down, or goes away mid-run, never stops training") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  if (!have_mlflow()) return;
  TempDir dir;
  const fs::path root(dir.path());
  SECTION("down from the start") {
    auto result = run_process(
        {TRAINER_BINARY, "fit", "logger=mlflow",
         "logger.mlflow.tracking_uri=http://127.0.0.1:" + std::to_string(free_local_port()), "data=synthetic",
         "data.num_workers=0", "trainer.max_epochs=3", "test_after_fit=false", "hydra.run.dir=run"},
        dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.err, "did not answer"));
    CHECK(contains(result.err, "training goes on"));
    CHECK(contains(result.err, "the run stays RUNNING there (or was never made)"));
    CHECK(read_csv(root / "run" / "metrics.csv").last("epoch") == "2");  // every epoch ran and was logged
  }
  SECTION("stopped while the run trains") {
    MlflowServer server(root / "server");
    bool stopped_server = false;
    bool never_signalled = false;
    auto result = run_and_signal(
        {TRAINER_BINARY, "fit", "logger=mlflow", "logger.mlflow.tracking_uri=" + server.uri(), "data=synthetic",
         "data.num_workers=0", "data.num_samples=4096", "trainer.max_epochs=12", "test_after_fit=false",
         "hydra.run.dir=run"},
        dir.path(),
        [&] {
          // Once the first epoch's checkpoint is written, the server goes away; the run never hears.
          if (!stopped_server && fs::exists(root / "run" / "checkpoints" / "last.ckpt")) {
            server.stop();
            stopped_server = true;
          }
          return false;
        },
        SIGTERM, &never_signalled);
    INFO(result.err);
    REQUIRE(stopped_server);
    CHECK_FALSE(never_signalled);
    CHECK(result.exit_code == 0);
    CHECK(contains(result.err, "did not answer"));
    CHECK(read_csv(root / "run" / "metrics.csv").last("epoch") == "11");
  }
}

TEST_CASE("mlflow: a tracking URI trainer cannot log to, or a misspelt key, is refused before anything runs") {
  TempDir dir;
  auto result = run_process({TRAINER_BINARY, "fit", "-m", "logger=mlflow", "logger.mlflow.tracking_uri=sqlite:///m.db",
                             "data=synthetic", "seed=1,2", "hydra.sweep.dir=sweep"},
                            dir.path());
  INFO(result.err);
  CHECK(result.exit_code != 0);
  check_clean_error(result);
  CHECK(contains(result.err, "logger.mlflow.tracking_uri"));
  CHECK(contains(result.err, "sqlite:///m.db"));
  CHECK(contains(result.err, "http://host:5000"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep" / "0"));

  auto typo = run_process({TRAINER_BINARY, "fit", "logger=mlflow", "+logger.mlflow.experiment_nme=x", "data=synthetic",
                           "hydra.run.dir=run"},
                          dir.path());
  INFO(typo.err);
  CHECK(typo.exit_code != 0);
  check_clean_error(typo);
  CHECK(contains(typo.err, "logger.mlflow.experiment_nme"));
  CHECK(contains(typo.err, "Did you mean 'experiment_name'?"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / "checkpoints"));
}
