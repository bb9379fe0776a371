// One job run through a stand-in engine: the .hydra files and log written before it runs, the
// batch it reports written into .hydra/config.yaml (after a failure too), and a job that did not
// finish thrown as EngineFailure carrying the engine's fields.
#include "trainer/launch/job_run.h"

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/engine/engine_c_abi.h"
#include "trainer/launch/engine_result.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;
using trainer::config::Node;

namespace {

TrainerJobResult g_answer{};
std::string g_yaml;
std::string g_command;

int fake_version() { return TRAINER_ENGINE_ABI_VERSION; }
const char* fake_describe() { return "fake engine"; }
int fake_run_job(const TrainerJob* job, TrainerJobResult* result) {
  g_command = job->command;
  g_yaml = job->config_yaml;
  result->exit_code = g_answer.exit_code;
  result->outcome = g_answer.outcome;
  result->stop_signal = g_answer.stop_signal;
  result->tuned_batch_size = g_answer.tuned_batch_size;
  std::memcpy(result->message, g_answer.message, sizeof(result->message));
  return result->exit_code;
}

// A program's own model, "mine", beside those trainer ships.
const char* fake_registered(const char* kind) {
  return std::string(kind) == "model" ? "cnn,mine,mlp,resnet,torchscript" : "";
}

const EngineEntry kFake{&fake_version, &fake_describe, &fake_run_job, &fake_registered};

void answer(int exit_code, int outcome, int signal, long long batch, const char* message) {
  g_answer = TrainerJobResult{};
  g_answer.exit_code = exit_code;
  g_answer.outcome = outcome;
  g_answer.stop_signal = signal;
  g_answer.tuned_batch_size = batch;
  std::strncpy(g_answer.message, message, sizeof(g_answer.message) - 1);
}

Node composed(const std::string& model = "mlp") {
  return trainer::config::load_yaml_string(
             "data:\n  name: synthetic\n  batch_size: 128\nmodel:\n  name: " + model +
                 "\n"
                 "hydra:\n  output_subdir: .hydra\n  verbose: false\n  job:\n    name: trainer\n    chdir: false\n"
                 "  runtime:\n    output_dir: ''\n",
             "test")
      .root;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("run_job: the .hydra files first, the engine's batch into config.yaml, an interrupt as fields") {
  TempDir dir("trainer-job-run");
  const std::string run_dir = (fs::path(dir.path) / "run").string();
  CHECK(job_records(composed()) ==
        std::vector<std::string>{"trainer.log", ".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml"});

  answer(0, TRAINER_JOB_FINISHED, 0, 96, "");
  const EngineResult done = run_job(&kFake, "tune_batch_size", composed(), run_dir, {"data=synthetic"}, {});
  CHECK(g_command == "tune_batch_size");
  CHECK(g_yaml.find("batch_size: 128") != std::string::npos);  // the engine gets the config as composed
  CHECK(done.outcome == JobOutcome::kFinished);
  REQUIRE(done.tuned_batch_size.has_value());
  CHECK(*done.tuned_batch_size == 96);
  CHECK(read(fs::path(run_dir) / ".hydra" / "config.yaml").find("  batch_size: 96\n") != std::string::npos);
  CHECK(fs::exists(fs::path(run_dir) / ".hydra" / "overrides.yaml"));
  CHECK(fs::exists(fs::path(run_dir) / "trainer.log"));

  // Stopped by SIGTERM after its search: interrupted, from the fields; the batch is recorded still.
  answer(1, TRAINER_JOB_INTERRUPTED, SIGTERM, 48, "stopped after step 5; a checkpoint was written");
  try {
    run_job(&kFake, "tune_batch_size", composed(), run_dir, {"data=synthetic"}, {});
    FAIL("an interrupted job did not throw");
  } catch (const EngineFailure& failure) {
    CHECK(failure.result().outcome == JobOutcome::kInterrupted);
    CHECK(failure.result().stop_signal == SIGTERM);
    CHECK(std::string(failure.what()) == "stopped after step 5; a checkpoint was written");
  }
  CHECK(read(fs::path(run_dir) / ".hydra" / "config.yaml").find("  batch_size: 48\n") != std::string::npos);

  // A job that does not search leaves the configured batch, whatever the engine says.
  answer(0, TRAINER_JOB_FINISHED, 0, 32, "");
  run_job(&kFake, "test", composed(), run_dir, {}, {});
  CHECK(read(fs::path(run_dir) / ".hydra" / "config.yaml").find("  batch_size: 128\n") != std::string::npos);
}

TEST_CASE("run_job: a model name neither shipped nor registered is refused before anything is written") {
  TempDir dir("trainer-job-run");
  const std::string run_dir = (fs::path(dir.path) / "run").string();
  answer(0, TRAINER_JOB_FINISHED, 0, 0, "");
  g_command.clear();
  try {
    run_job(&kFake, "fit", composed("mien"), run_dir, {}, {});
    FAIL("an unknown model was run");
  } catch (const trainer::Error& error) {
    const std::string text = error.what();
    CHECK(text.find("model.name") != std::string::npos);
    CHECK(text.find("unknown model 'mien'; nothing was run") != std::string::npos);
    CHECK(text.find("Did you mean 'mine'?") != std::string::npos);
    CHECK(text.find("Known models: cnn, mine, mlp, resnet, torchscript") != std::string::npos);
  }
  CHECK(g_command.empty());  // the engine never ran
  CHECK_FALSE(fs::exists(run_dir));
  // The program's own model is asked of its engine, and runs.
  run_job(&kFake, "fit", composed("mine"), run_dir, {}, {});
  CHECK(g_command == "fit");
}
