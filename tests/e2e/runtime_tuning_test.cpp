// The engine's start-up tuning and its knobs (src/engine/engine_c_abi.cpp), as the real trainer
// binary reports them in trainer.log: TRAINER_MALLOC_TUNING=0, TRAINER_INTRA_OP_THREADS=<n>
// (0 = LibTorch's default) and a clear error for a bad value; OpenBLAS's own pthread pool taken
// down to one thread where the engine's BLAS is one (blas_threads.h), OPENBLAS_NUM_THREADS
// keeping it.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

ProcessResult tiny_fit(const TempDir& dir, const std::vector<std::string>& env) {
  return run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "debug=fdr", "hydra.run.dir=run"},
                     dir.path(), env);
}

std::string tuning_line(const TempDir& dir) {
  const std::string log = read_file(fs::path(dir.path()) / "run" / "trainer.log");
  const size_t start = log.find("runtime tuning: ");
  if (start == std::string::npos) return "";
  return log.substr(start, log.find('\n', start) - start);
}

// The engine's own line names the BLAS library it resolved (runtime_info.h).
std::string engine_line(const TempDir& dir) {
  const std::string log = read_file(fs::path(dir.path()) / "run" / "trainer.log");
  const size_t start = log.find("engine: LibTorch");
  if (start == std::string::npos) return "";
  return log.substr(start, log.find('\n', start) - start);
}

}  // namespace

TEST_CASE("runtime tuning: the log line says what was applied, and each knob switches its tuning off") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  SECTION("defaults: one thread per usable core and the malloc thresholds") {
    TempDir dir;
    auto result = tiny_fit(dir, {});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const std::string line = tuning_line(dir);
    CHECK(contains(line, "intra-op threads (cores available)"));
    CHECK(contains(line, "malloc mmap threshold 32 MiB and trim threshold 1 GiB"));
  }
  SECTION("TRAINER_MALLOC_TUNING=0 leaves malloc alone") {
    TempDir dir;
    auto result = tiny_fit(dir, {"TRAINER_MALLOC_TUNING=0"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const std::string line = tuning_line(dir);
    CHECK(contains(line, "malloc tuning off (TRAINER_MALLOC_TUNING=0)"));
    CHECK_FALSE(contains(line, "mmap threshold"));
  }
  SECTION("TRAINER_INTRA_OP_THREADS=1 sets the count, 0 keeps LibTorch's default") {
    TempDir one;
    auto result = tiny_fit(one, {"TRAINER_INTRA_OP_THREADS=1"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(tuning_line(one), "runtime tuning: 1 intra-op threads (TRAINER_INTRA_OP_THREADS)"));
    TempDir zero;
    result = tiny_fit(zero, {"TRAINER_INTRA_OP_THREADS=0"});
    REQUIRE(result.exit_code == 0);
    CHECK(contains(tuning_line(zero), "intra-op threads (LibTorch's default, TRAINER_INTRA_OP_THREADS=0)"));
  }
  SECTION("a value that is not a count is refused with the knob's name and the fix") {
    TempDir dir;
    auto result = tiny_fit(dir, {"TRAINER_INTRA_OP_THREADS=two"});
    CHECK(result.exit_code != 0);
    check_no_crash(result);
    CHECK(contains(result.err, "TRAINER_INTRA_OP_THREADS"));
    CHECK(contains(result.err, "not a thread count"));
    CHECK(contains(result.err, "unset it"));
  }
}

TEST_CASE("runtime tuning: OpenBLAS's own thread pool goes to one thread beside ATen's, unless the user sets it") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = tiny_fit(dir, {"TRAINER_INTRA_OP_THREADS=2"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string engine = engine_line(dir);
  INFO(engine);
  REQUIRE_FALSE(engine.empty());
  // Wherever the engine's process holds Debian's pthread OpenBLAS (scripts/setup.sh installs it):
  // LibTorch 1.13's BLAS, and OpenCV's in the wheel build's process (its matrix products are MKL's).
  const bool pthread_openblas = contains(engine, "openblas-pthread");
  CHECK(contains(tuning_line(dir), "OpenBLAS on one thread beside ATen's pool (OPENBLAS_NUM_THREADS=") ==
        pthread_openblas);
  if (!pthread_openblas) return;
  SECTION("OPENBLAS_NUM_THREADS is the user's: left as set") {
    TempDir own;
    result = tiny_fit(own, {"TRAINER_INTRA_OP_THREADS=2", "OPENBLAS_NUM_THREADS=2"});
    REQUIRE(result.exit_code == 0);
    CHECK(contains(tuning_line(own), "OpenBLAS pool of 2 threads (OPENBLAS_NUM_THREADS)"));
  }
  SECTION("one intra-op thread: nothing to share the cores with, OpenBLAS keeps its pool") {
    TempDir one;
    result = tiny_fit(one, {"TRAINER_INTRA_OP_THREADS=1"});
    REQUIRE(result.exit_code == 0);
    CHECK_FALSE(contains(tuning_line(one), "OpenBLAS"));
  }
}
