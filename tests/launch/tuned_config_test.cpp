// The run directory's side of the batch-size search: which jobs search, a stale result dropped
// (but kept for a resume), and .hydra/config.yaml rewritten with the data.batch_size the engine reported.
#include "trainer/launch/tuned_config.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::testing::TempDir;
using namespace trainer::launch;
using trainer::config::Node;

namespace {

Node yaml(const std::string& text) { return trainer::config::load_yaml_string(text, "test").root; }

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("tune batch_size and fit with auto_scale_batch_size search; other jobs do not") {
  const Node plain = yaml("trainer: {max_epochs: 1}\n");
  CHECK(searches_batch_size("tune_batch_size", plain));
  CHECK_FALSE(searches_batch_size("fit", plain));
  CHECK(searches_batch_size("fit", yaml("trainer: {auto_scale_batch_size: binsearch}\n")));
  CHECK(searches_batch_size("fit", yaml("trainer: {auto_scale_batch_size: true}\n")));
  CHECK_FALSE(searches_batch_size("fit", yaml("trainer: {auto_scale_batch_size: false}\n")));
  CHECK_FALSE(searches_batch_size("fit", yaml("trainer: {auto_scale_batch_size: null}\n")));
  CHECK_FALSE(searches_batch_size("test", yaml("trainer: {auto_scale_batch_size: power}\n")));
}

TEST_CASE("the batch the engine reports goes into .hydra/config.yaml; a stale result is dropped unless resuming") {
  TempDir dir("trainer-tuned-config");
  const fs::path result = fs::path(dir.path) / kTuneResultFile;
  Node config = yaml("data:\n  name: synthetic\n  batch_size: 128\nseed: 1\n");
  record_tuned_batch_size(dir.path, ".hydra", config, 512);
  CHECK(read(fs::path(dir.path) / ".hydra" / "config.yaml") ==
        "data:\n  name: synthetic\n  batch_size: 512\nseed: 1\n");

  Node no_data = yaml("seed: 1\n");
  CHECK_THROWS_AS(record_tuned_batch_size(dir.path, ".hydra", no_data, 512), trainer::Error);

  write(result, "mode: power\nbatch_size: 512\n");
  forget_earlier_search(dir.path, yaml("ckpt_path: last\n"));
  CHECK(fs::exists(result));  // a resume reuses it
  forget_earlier_search(dir.path, yaml("ckpt_path: null\n"));
  CHECK_FALSE(fs::exists(result));
}
