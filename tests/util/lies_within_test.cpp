#include "trainer/util/lies_within.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::lies_within;
using trainer::same_place;

TEST_CASE("lies_within and same_place compare paths as the file system resolves them") {
  trainer::testing::TempDir dir("trainer-lies-within");
  const fs::path run = fs::path(dir.path) / "run";
  fs::create_directories(run / "checkpoints");
  fs::create_directory_symlink(run, fs::path(dir.path) / "link");

  CHECK(lies_within(run / "checkpoints", run));
  CHECK(lies_within(run, run));                                          // the place itself
  CHECK(lies_within(run / "eval" / "new", run));                         // not made yet
  CHECK(lies_within(fs::path(dir.path) / "link" / "checkpoints", run));  // through a link
  CHECK(lies_within(run / ".." / "run" / "metrics.csv", run.string() + "/"));
  CHECK_FALSE(lies_within(fs::path(dir.path) / "run2", run));  // a prefix of the name is not a parent
  CHECK_FALSE(lies_within(run / "..", run));
  CHECK_FALSE(lies_within(dir.path, run));

  CHECK(same_place(run, fs::path(dir.path) / "link"));
  CHECK(same_place(run.string() + "/", run / "checkpoints" / ".."));
  CHECK(same_place(fs::path(dir.path) / "moved" / "sweep", fs::path(dir.path) / "moved" / "." / "sweep"));
  CHECK_FALSE(same_place(run, run / "checkpoints"));
}
