// The engine's TrainerJobResult read into the launcher's EngineResult: fields as the engine set
// them, and an engine whose fields contradict each other (or that speaks another version of the
// interface) is not believed.
#include "trainer/launch/engine_result.h"

#include <csignal>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/engine/engine_c_abi.h"
#include "trainer/launch/engine_loader.h"
#include "trainer/util/error.h"

using namespace trainer::launch;

namespace {

TrainerJobResult raw_result(int exit_code, int outcome, int signal, long long batch, const char* message) {
  TrainerJobResult raw{};
  raw.struct_size = sizeof(TrainerJobResult);
  raw.abi_version = TRAINER_ENGINE_ABI_VERSION;
  raw.exit_code = exit_code;
  raw.outcome = outcome;
  raw.stop_signal = signal;
  raw.tuned_batch_size = batch;
  std::strncpy(raw.message, message, sizeof(raw.message) - 1);
  return raw;
}

// A stand-in engine: what it was given, and what it answers.
TrainerJobResult g_answer{};
std::string g_command;
size_t g_size_seen = 0;
int g_version_seen = 0;
int g_engine_version = TRAINER_ENGINE_ABI_VERSION;

int fake_version() { return g_engine_version; }
const char* fake_describe() { return "fake engine"; }
int fake_run_job(const TrainerJob* job, TrainerJobResult* result) {
  g_command = job->command;
  g_size_seen = result->struct_size;
  g_version_seen = result->abi_version;
  const size_t size = result->struct_size;
  const int version = result->abi_version;
  *result = g_answer;
  result->struct_size = size;
  result->abi_version = version;
  return result->exit_code;
}

const char* fake_registered(const char* kind) { return std::string(kind) == "model" ? "mine,mlp" : ""; }

const EngineEntry kFake{&fake_version, &fake_describe, &fake_run_job, &fake_registered};

}  // namespace

TEST_CASE("a finished job's result: exit code 0, the batch found, no message") {
  const EngineResult result = engine_result_of(raw_result(0, TRAINER_JOB_FINISHED, 0, 256, ""));
  CHECK(result.outcome == JobOutcome::kFinished);
  CHECK(result.exit_code == 0);
  CHECK(result.stop_signal == 0);
  REQUIRE(result.tuned_batch_size.has_value());
  CHECK(*result.tuned_batch_size == 256);
  CHECK(result.message.empty());
  CHECK_FALSE(engine_result_of(raw_result(0, TRAINER_JOB_FINISHED, 0, 0, "")).tuned_batch_size.has_value());
}

TEST_CASE("interrupted comes from the outcome and the signal fields, not from the message") {
  const EngineResult stopped =
      engine_result_of(raw_result(1, TRAINER_JOB_INTERRUPTED, SIGTERM, 0, "stopped after step 4"));
  CHECK(stopped.outcome == JobOutcome::kInterrupted);
  CHECK(stopped.stop_signal == SIGTERM);
  CHECK(stopped.exit_code == 1);
  CHECK(stopped.message == "stopped after step 4");

  const EngineResult failed =
      engine_result_of(raw_result(1, TRAINER_JOB_FAILED, 0, 0, "signal 15: stopped after step 4"));
  CHECK(failed.outcome == JobOutcome::kFailed);
  CHECK(failed.stop_signal == 0);
}

TEST_CASE("contradicting fields are not believed") {
  // Finished with a non-zero exit code: failed.
  CHECK(engine_result_of(raw_result(3, TRAINER_JOB_FINISHED, 0, 0, "")).outcome == JobOutcome::kFailed);
  // Failed with exit code 0: exit code 1.
  CHECK(engine_result_of(raw_result(0, TRAINER_JOB_FAILED, 0, 0, "x")).exit_code == 1);
  // Interrupted without a signal: failed (no 128+0).
  CHECK(engine_result_of(raw_result(1, TRAINER_JOB_INTERRUPTED, 0, 0, "x")).outcome == JobOutcome::kFailed);
  // An outcome this launcher does not know: failed, and the message says so.
  const EngineResult unknown = engine_result_of(raw_result(1, 7, SIGTERM, 0, "why"));
  CHECK(unknown.outcome == JobOutcome::kFailed);
  CHECK(unknown.stop_signal == 0);
  CHECK(unknown.message == "the engine reported an unknown outcome 7: why");
  // A message that fills the buffer without its NUL stops at the buffer's end.
  TrainerJobResult full = raw_result(1, TRAINER_JOB_FAILED, 0, 0, "");
  std::memset(full.message, 'a', sizeof(full.message));
  CHECK(engine_result_of(full).message.size() == sizeof(full.message));
}

TEST_CASE("the loader hands the engine a sized, versioned result and reads its fields back") {
  g_answer = raw_result(1, TRAINER_JOB_INTERRUPTED, SIGINT, 64, "stopped after step 2");
  const EngineLoader loader(kFake);
  CHECK(loader.describe() == "fake engine");
  CHECK(loader.registered("model") == std::vector<std::string>{"mine", "mlp"});
  CHECK(loader.registered("logger").empty());
  const EngineResult result = loader.run("fit", "seed: 1\n", "/tmp/run", "");
  CHECK(g_command == "fit");
  CHECK(g_size_seen == sizeof(TrainerJobResult));
  CHECK(g_version_seen == TRAINER_ENGINE_ABI_VERSION);
  CHECK(result.outcome == JobOutcome::kInterrupted);
  CHECK(result.stop_signal == SIGINT);
  REQUIRE(result.tuned_batch_size.has_value());
  CHECK(*result.tuned_batch_size == 64);
  CHECK(result.message == "stopped after step 2");
}

TEST_CASE("an engine of another interface version is refused before any job, saying so") {
  g_engine_version = TRAINER_ENGINE_ABI_VERSION + 1;
  try {
    const EngineLoader loader(kFake);
    FAIL("an engine of another version was accepted");
  } catch (const trainer::Error& error) {
    const std::string text = error.what();
    CHECK(text.find("interface version " + std::to_string(TRAINER_ENGINE_ABI_VERSION + 1)) != std::string::npos);
    CHECK(text.find("Rebuild trainer") != std::string::npos);
  }
  g_engine_version = TRAINER_ENGINE_ABI_VERSION;
  const EngineEntry incomplete{&fake_version, &fake_describe, nullptr, &fake_registered};
  CHECK_THROWS_AS(EngineLoader(incomplete), trainer::Error);
  const EngineEntry no_names{&fake_version, &fake_describe, &fake_run_job, nullptr};
  CHECK_THROWS_AS(EngineLoader(no_names), trainer::Error);
}
