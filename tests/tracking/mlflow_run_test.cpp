// tracking::MlflowRun and the stores it writes through: the file store's layout (read back by
// MLflow's own client in tests/e2e/mlflow_test.cpp), a run continued by its id, the bounded queue
// that drops and counts when the server is unreachable, and the tracking URIs refused.
#include "trainer/tracking/mlflow_run.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace trainer::tracking;
using trainer::testing::TempDir;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A loopback port nothing listens on (bound, then closed).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// The one run directory under <root>/<experiment>/ (meta.yaml is the experiment's own file).
fs::path only_run(const fs::path& root) {
  fs::path found;
  int runs = 0;
  for (const auto& experiment : fs::directory_iterator(root)) {
    if (!experiment.is_directory() || experiment.path().filename() == "0") continue;
    for (const auto& entry : fs::directory_iterator(experiment.path())) {
      if (entry.is_directory()) {
        found = entry.path();
        ++runs;
      }
    }
  }
  REQUIRE(runs == 1);
  return found;
}

}  // namespace

TEST_CASE("MlflowRun writes MLflow's file store: experiment, run, params, tags, metrics, status") {
  TempDir dir("trainer-mlflow-run");
  const fs::path root = fs::path(dir.path) / "mlruns";
  std::vector<std::string> warnings;
  std::string made_run;
  {
    MlflowRunOptions options;
    options.tracking_uri = "file:" + root.string();
    options.experiment_name = "it's mine";
    options.run_name = "sweep/3";
    options.tags = {{"team", "vision"}};
    options.params = {{"optimizer.lr", "0.01"}, {"model.hidden_sizes", "[16, 32]"}};
    options.warn = [&](const std::string& message) { warnings.push_back(message); };
    options.on_run = [&](const std::string& run_id, const std::string&) { made_run = run_id; };
    MlflowRun run(options);
    run.log_metrics({{"val/acc", 0.5}, {"train/loss", 1.25}}, 10);
    run.log_metrics({{"val/acc", 0.75}}, 20);
    run.finish(MlflowRunStatus::kFinished, 30);
    CHECK(run.dropped() == 0);
  }
  CHECK(warnings.empty());
  // The Default experiment a new store gets, as MLflow makes it.
  CHECK(read(root / "0" / "meta.yaml").find("name: 'Default'") != std::string::npos);
  const fs::path run_dir = only_run(root);
  CHECK(run_dir.filename() == made_run);
  CHECK(made_run.size() == 32);
  const std::string experiment = read(run_dir.parent_path() / "meta.yaml");
  CHECK(experiment.find("name: 'it''s mine'") != std::string::npos);
  CHECK(experiment.find("lifecycle_stage: active") != std::string::npos);
  const std::string meta = read(run_dir / "meta.yaml");
  CHECK(meta.find("status: 3\n") != std::string::npos);  // FINISHED
  CHECK(meta.find("end_time: null") == std::string::npos);
  CHECK(meta.find("run_name: 'sweep/3'") != std::string::npos);
  CHECK(read(run_dir / "params" / "optimizer.lr") == "0.01");
  CHECK(read(run_dir / "params" / "model.hidden_sizes") == "[16, 32]");
  CHECK(read(run_dir / "tags" / "team") == "vision");
  CHECK(read(run_dir / "tags" / "mlflow.runName") == "sweep/3");
  // "<timestamp ms> <value> <step>" lines; a key with '/' is a sub-directory.
  std::istringstream acc(read(run_dir / "metrics" / "val" / "acc"));
  long long timestamp = 0;
  double value = 0;
  long long step = 0;
  REQUIRE(acc >> timestamp >> value >> step);
  CHECK(timestamp > 1700000000000LL);
  CHECK(value == 0.5);
  CHECK(step == 10);
  REQUIRE(acc >> timestamp >> value >> step);
  CHECK(value == 0.75);
  CHECK(step == 20);
  CHECK_FALSE(acc >> timestamp);

  SECTION("a run continued by its id is RUNNING again, then ends with the new status") {
    MlflowRunOptions options;
    options.tracking_uri = root.string();  // a plain path is a file store too
    options.run_id = made_run;
    MlflowRun again(options);
    again.log_metrics({{"val/acc", 0.875}}, 30);
    again.finish(MlflowRunStatus::kKilled, 30);
    CHECK(read(run_dir / "meta.yaml").find("status: 5\n") != std::string::npos);  // KILLED
    CHECK(read(run_dir / "metrics" / "val" / "acc").find(" 0.875 30\n") != std::string::npos);
    CHECK(only_run(root) == run_dir);  // no new run
  }
}

TEST_CASE("MlflowRun: an unreachable server is a warning; the bounded queue drops and counts") {
  std::vector<std::string> warnings;
  MlflowRunOptions options;
  options.tracking_uri = "http://127.0.0.1:" + std::to_string(closed_port());
  options.queue_limit = 10;
  options.call_timeout_seconds = 2;
  options.warn = [&](const std::string& message) { warnings.push_back(message); };
  MlflowRun run(options);
  for (int step = 0; step < 25; ++step) run.log_metrics({{"train/loss", 1.0 / (step + 1)}}, step);
  CHECK(run.dropped() == 15);  // never blocked: what did not fit was dropped
  run.finish(MlflowRunStatus::kFinished, 30);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  INFO(all);
  CHECK(all.find("did not answer") != std::string::npos);
  CHECK(all.find("training goes on") != std::string::npos);
  CHECK(all.find("did not take the run's last 10 metric value(s)") != std::string::npos);
  CHECK(all.find("15 metric value(s) were dropped") != std::string::npos);
}

TEST_CASE("open_mlflow_store refuses URIs it cannot log to, naming the key") {
  for (const char* uri : {"sqlite:///mlflow.db", "databricks", "postgresql://db/mlflow", "file://host/mlruns", ""}) {
    INFO(uri);
    try {
      open_mlflow_store(uri, "logger.mlflow.tracking_uri");
      FAIL("accepted");
    } catch (const trainer::Error& error) {
      CHECK(error.where() == "logger.mlflow.tracking_uri");
      CHECK_FALSE(error.fix().empty());
    }
  }
  for (const char* uri : {"http://", "https:///x", "http://:5000"}) {
    INFO(uri);
    CHECK_THROWS_AS(open_mlflow_store(uri, "k"), trainer::Error);
  }
  CHECK(open_mlflow_store("HTTP://127.0.0.1:5000", "k")->uri() == "http://127.0.0.1:5000");  // schemes: any case
  CHECK(open_mlflow_store("mlruns", "k")->uri() == "mlruns");
  CHECK(open_mlflow_store("file:///tmp/mlruns", "k")->uri() == "file:///tmp/mlruns");
  CHECK(open_mlflow_store("http://127.0.0.1:5000/", "k")->uri() == "http://127.0.0.1:5000");
}

TEST_CASE("cut_param_value cuts at 6000 characters, never inside one, and mends invalid UTF-8") {
  CHECK(cut_param_value("short") == "short");
  const std::string e_acute = "\xC3\xA9";
  std::string long_text;
  for (int i = 0; i < 7000; ++i) long_text += e_acute;
  const std::string cut = cut_param_value(long_text);
  CHECK(cut.size() == 5997 * 2 + 3);  // 5997 characters of two bytes, then "..."
  CHECK(cut.substr(cut.size() - 3) == "...");
  std::string exact;
  for (int i = 0; i < 6000; ++i) exact += e_acute;
  CHECK(cut_param_value(exact) == exact);  // 6000 characters: within the limit
  CHECK(cut_param_value(std::string(5999, 'a')) == std::string(5999, 'a'));
  CHECK(cut_param_value("a\xC3") == "a\xEF\xBF\xBD");  // a character cut in two: U+FFFD
}
