// What the byte-for-byte comparison with Hydra (cli_trees_test.cpp) does not show: the errors
// and warnings behind hydra.searchpath, with the real binary.
#include <catch2/catch.hpp>

#include <filesystem>

#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;

namespace {

const fs::path kTrees = fs::path(TRAINER_TEST_DATA_DIR) / "cli_trees";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

std::vector<std::string> trainer_fit(const std::string& tree, const std::string& config,
                                     std::vector<std::string> rest) {
  std::vector<std::string> argv = {TRAINER_BINARY, "fit", "-cp", (kTrees / tree).string(), "-cn", config};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

}  // namespace

TEST_CASE("hydra.searchpath from the command line and the primary config joins the search path") {
  // The primary config's own entry: db/oracle is found in extra_dir.
  auto from_config = run_process(trainer_fit("search", "config", {"--cfg", "job"}), kTrees.string());
  INFO(from_config.err);
  CHECK(from_config.exit_code == 0);
  CHECK(contains(from_config.out, "driver: oracle"));
  // An absolute file:// entry on the command line, from another directory.
  TempDir elsewhere;
  auto absolute = run_process(
      trainer_fit("search", "bare",
                  {"--info", "searchpath", "hydra.searchpath=[file://" + (kTrees / "extra_dir").string() + "]"}),
      elsewhere.path());
  CHECK(absolute.exit_code == 0);
  CHECK(contains(absolute.out, "| hydra.searchpath in command-line | file://" + (kTrees / "extra_dir").string()));
  // A directory that does not exist is Hydra's warning, not an error.
  auto missing = run_process(trainer_fit("search", "bare", {"--cfg", "job", "hydra.searchpath=[file:///no/such/dir]"}),
                             kTrees.string());
  CHECK(missing.exit_code == 0);
  CHECK(contains(missing.err, "provider=hydra.searchpath in command-line, path=/no/such/dir is not available."));
}

TEST_CASE("hydra.searchpath: pkg:// is refused in one paragraph, + and ++ forms say they are not searched") {
  auto pkg = run_process(trainer_fit("search", "bare", {"--cfg", "job", "hydra.searchpath=[pkg://my_app.conf]"}),
                         kTrees.string());
  CHECK(pkg.exit_code == 1);
  CHECK(pkg.out.empty());
  CHECK(contains(pkg.err, "Error: override 'hydra.searchpath=[pkg://my_app.conf]': "));
  CHECK(contains(pkg.err, "'pkg://my_app.conf' names a Python package"));
  CHECK(contains(pkg.err, "file:///abs/path/to/my_app/conf"));
  CHECK(count_of(pkg.err, "\n") == 1);

  auto plus = run_process(trainer_fit("search", "bare", {"--cfg", "job", "+hydra.searchpath=[file://extra_dir]"}),
                          kTrees.string());
  CHECK(plus.exit_code == 0);  // as in Hydra 1.3: composed, not searched
  CHECK(contains(plus.err, "+hydra.searchpath=[file://extra_dir]: Hydra 1.3 composes this override but does not "
                           "search its directories"));

  auto not_a_list =
      run_process(trainer_fit("search", "bare", {"--cfg", "job", "hydra.searchpath=file://x"}), kTrees.string());
  CHECK(not_a_list.exit_code == 1);
  CHECK(contains(not_a_list.err, "hydra.searchpath must be a list of strings. Got: file://x"));
}
