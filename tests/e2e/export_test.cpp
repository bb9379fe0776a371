// `trainer export`: a checkpoint's weights written as .safetensors and read back by Python's
// safetensors and torch (tests/python/check_safetensors_export.py). Skipped without the engine
// (TRAINER_LIBTORCH=none); the Python check is skipped with a warning when TRAINER_TEST_PYTHON is
// empty.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;
using namespace trainer::testing;

namespace {

// One short epoch of a small CNN (batch norm: float parameters plus float and int64 buffers).
std::vector<std::string> tiny_fit(const std::string& run_dir) {
  return {TRAINER_BINARY,
          "fit",
          "data=synthetic",
          "data.num_samples=320",
          "data.batch_size=64",
          "data.num_workers=0",
          "model=cnn",
          "model.channels=[4,8]",
          "model.hidden_size=16",
          "trainer.max_epochs=1",
          "trainer.num_sanity_val_steps=0",
          "test_after_fit=false",
          "hydra.run.dir=" + run_dir};
}

// `++key=value` adds the key or overrides it, so these work whether or not the primary config
// declares `format` and `export_path`.
std::vector<std::string> export_command(const std::string& run_dir, std::vector<std::string> overrides) {
  std::vector<std::string> argv = {TRAINER_BINARY, "export", "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), overrides.begin(), overrides.end());
  return argv;
}

void check_with_python(const fs::path& exported, const fs::path& checkpoint) {
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: the export was not read back with Python's safetensors and torch",
                     Skip::unexpected_in_ci);
  }
  auto check = run_process({python, std::string(TRAINER_SOURCE_DIR) + "/tests/python/check_safetensors_export.py",
                            exported.string(), checkpoint.string()});
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("ok ") == 0);
}

uint64_t header_length(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char bytes[8] = {};
  in.read(reinterpret_cast<char*>(bytes), 8);
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t(bytes[i]) << (8 * i);
  return length;
}

}  // namespace

TEST_CASE("export writes a checkpoint's weights as safetensors that Python's torch reads back", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto fit = run_process(tiny_fit("run"), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path last = run / "checkpoints" / "last.ckpt";
  REQUIRE(fs::exists(last));

  {  // ckpt_path=last writes last.safetensors into the export's own directory, not the training run's
    auto exported = run_process(export_command("run", {"ckpt_path=last"}), dir.path());
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    CHECK_FALSE(fs::exists(run / "checkpoints" / "last.safetensors"));
    REQUIRE(fs::exists(run / "eval"));
    fs::path file;
    for (const auto& entry : fs::directory_iterator(run / "eval")) file = entry.path() / "last.safetensors";
    REQUIRE(fs::exists(file));
    CHECK_FALSE(fs::exists(file.string() + ".tmp"));
    CHECK(exported.err.find(file.string()) != std::string::npos);  // the log names the file
    CHECK(header_length(file) % 8 == 0);
    check_with_python(file, last);
  }

  {  // ckpt_path=best, with format and export_path
    auto exported = run_process(
        export_command("run", {"ckpt_path=best", "++format=safetensors", "++export_path=weights/best.safetensors"}),
        dir.path());
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    const fs::path file = fs::path(dir.path()) / "weights" / "best.safetensors";
    REQUIRE(fs::exists(file));
    fs::path best;
    for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
      if (entry.path().filename().string().rfind("epoch_", 0) == 0) best = entry.path();
    }
    REQUIRE_FALSE(best.empty());
    check_with_python(file, best);
  }

  {  // a checkpoint given by path, exported from another run directory
    auto exported = run_process(export_command("elsewhere", {"ckpt_path=" + last.string(),
                                                             "++export_path=" + (run / "w.safetensors").string()}),
                                dir.path());
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    check_with_python(run / "w.safetensors", last);
  }

  {  // bad input stops with a clear error
    auto format = run_process(export_command("run", {"ckpt_path=last", "++format=onnx"}), dir.path());
    CHECK(format.exit_code == 1);
    check_no_crash(format);
    CHECK(format.err.find("onnx") != std::string::npos);
    CHECK(format.err.find("safetensors") != std::string::npos);

    auto missing = run_process(export_command("run", {"ckpt_path=nowhere.ckpt"}), dir.path());
    CHECK(missing.exit_code == 1);
    check_no_crash(missing);
    CHECK(missing.err.find("checkpoint not found") != std::string::npos);

    auto none = run_process(export_command("run", {}), dir.path());
    CHECK(none.exit_code == 1);
    check_no_crash(none);
    CHECK(none.err.find("ckpt_path") != std::string::npos);
  }
}

TEST_CASE("--help lists the export command") {
  auto help = run_process({TRAINER_BINARY, "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("export") != std::string::npos);
  CHECK(help.out.find("safetensors") != std::string::npos);
}
