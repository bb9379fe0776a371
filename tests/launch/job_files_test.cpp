// A job's run directory and its .hydra files as Hydra writes them, written whole (no temporary
// left), and the refusal to start a new fit over a directory that holds a training run.
#include "trainer/launch/job_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using Catch::Contains;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("write_job_files creates the run directory and .hydra/{config,hydra,overrides}.yaml") {
  trainer::testing::TempDir dir("job_files_test");
  const std::string run = dir.path + "/outputs/2026-01-01/12-00-00";
  const auto job = trainer::config::load_yaml_string("seed: 1\nmodel:\n  name: mlp\n", "job.yaml");
  const auto hydra = trainer::config::load_yaml_string("run:\n  dir: x\n", "hydra.yaml");
  trainer::launch::write_job_files(run, ".hydra", job.root, hydra.root, {"seed=1", "model=mlp"});
  CHECK(read(run + "/.hydra/config.yaml") == "seed: 1\nmodel:\n  name: mlp\n");
  CHECK(read(run + "/.hydra/hydra.yaml") == "hydra:\n  run:\n    dir: x\n");
  CHECK(read(run + "/.hydra/overrides.yaml") == "- seed=1\n- model=mlp\n");
  for (const auto& entry : fs::directory_iterator(run + "/.hydra")) {
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  }

  SECTION("hydra.output_subdir=null: the directory without .hydra files") {
    const std::string bare = dir.path + "/bare";
    trainer::launch::write_job_files(bare, "", job.root, hydra.root, {});
    CHECK(fs::is_directory(bare));
    CHECK(fs::is_empty(bare));
  }
  SECTION("a run directory that cannot be created is an error naming it") {
    std::ofstream(dir.path + "/file") << "x";
    try {
      trainer::launch::write_job_files(dir.path + "/file/run", ".hydra", job.root, hydra.root, {});
      FAIL("no error");
    } catch (const trainer::Error& error) {
      CHECK(error.where() == dir.path + "/file/run");
      CHECK_THAT(error.fix(), Contains("hydra.run.dir"));
    }
  }
}

TEST_CASE("write_file_atomically replaces a file whole") {
  trainer::testing::TempDir dir("job_files_test");
  const std::string path = dir.path + "/config.yaml";
  trainer::launch::write_file_atomically(path, "a: 1\nb: 2\n");
  trainer::launch::write_file_atomically(path, "a: 3\n");
  CHECK(read(path) == "a: 3\n");
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
  CHECK_THROWS_AS(trainer::launch::write_file_atomically(dir.path + "/missing/config.yaml", "x"), trainer::Error);
}

TEST_CASE("a new fit is refused where checkpoints/ holds a checkpoint, allowed where it holds none") {
  trainer::testing::TempDir dir("job_files_test");
  CHECK_NOTHROW(trainer::launch::refuse_overwriting_run(dir.path));  // no checkpoints/ at all
  fs::create_directories(dir.path + "/checkpoints");
  std::ofstream(dir.path + "/checkpoints/last.ckpt.tmp") << "x";  // an interrupted write is no run
  CHECK_NOTHROW(trainer::launch::refuse_overwriting_run(dir.path));
  std::ofstream(dir.path + "/checkpoints/last.ckpt") << "x";
  try {
    trainer::launch::refuse_overwriting_run(dir.path);
    FAIL("no error");
  } catch (const trainer::Error& error) {
    CHECK(error.where() == "hydra.run.dir=" + dir.path);
    CHECK_THAT(error.problem(), Contains(dir.path + "/checkpoints/last.ckpt"));
    CHECK_THAT(error.fix(), Contains("ckpt_path=last"));
  }
}
