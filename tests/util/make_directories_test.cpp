#include "trainer/util/make_directories.h"

#include <errno.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace fs = std::filesystem;

TEST_CASE("make_directories makes missing parents, takes existing ones, and names the part that failed") {
  trainer::testing::TempDir dir("trainer-make-directories");
  const std::string nested = dir.path + "/a/b/c";
  CHECK(trainer::make_directories(nested).error == 0);
  CHECK(fs::is_directory(nested));
  CHECK(trainer::make_directories(nested + "/").error == 0);  // existing, trailing slash
  std::ofstream(dir.path + "/file") << "x";
  const trainer::MakeDirectoriesFailure failed = trainer::make_directories(dir.path + "/file/d");
  CHECK(failed.error == ENOTDIR);
  CHECK(failed.prefix == dir.path + "/file");
}
