// What the byte-for-byte comparison with Hydra (cli_trees_test.cpp) does not show: the errors,
// warnings and files behind hydra.searchpath, hydra.mode and oc.deprecated, with the real binary.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::contains;
using trainer::testing::run_process;
using trainer::testing::TempDir;

namespace {

const fs::path kTrees = fs::path(TRAINER_TEST_DATA_DIR) / "cli_trees";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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
  trainer::testing::check_no_crash(pkg);
  CHECK(pkg.out.empty());
  CHECK(contains(pkg.err, "Error: override 'hydra.searchpath=[pkg://my_app.conf]': "));
  CHECK(contains(pkg.err, "'pkg://my_app.conf' names a Python package"));
  CHECK(contains(pkg.err, "file:///abs/path/to/my_app/conf"));
  CHECK(count_of(pkg.err, "\n") == 1);

  auto plus = run_process(trainer_fit("search", "bare", {"--cfg", "job", "+hydra.searchpath=[file://extra_dir]"}),
                          kTrees.string());
  CHECK(plus.exit_code == 0);  // as in Hydra 1.3: composed, not searched
  CHECK(contains(plus.err,
                 "+hydra.searchpath=[file://extra_dir]: Hydra 1.3 composes this override but does not "
                 "search its directories"));

  auto not_a_list =
      run_process(trainer_fit("search", "bare", {"--cfg", "job", "hydra.searchpath=file://x"}), kTrees.string());
  CHECK(not_a_list.exit_code == 1);
  trainer::testing::check_no_crash(not_a_list);
  CHECK(contains(not_a_list.err, "hydra.searchpath must be a list of strings. Got: file://x"));
}

TEST_CASE("hydra.mode=MULTIRUN, as an override or in the primary config, plans a multirun as -m does") {
  for (const std::vector<std::string>& argv :
       {trainer_fit("sweep", "plain",
                    {"hydra.mode=MULTIRUN", "lr=0.1,0.2", "+data.name=synthetic", "model.name=mlp", "~model.size",
                     "+trainer.max_epochs=1", "hydra.sweep.dir=sweep"}),
        trainer_fit("sweep", "multimode",
                    {"lr=0.1,0.2", "+data.name=synthetic", "model.name=mlp", "~model.size", "+trainer.max_epochs=1",
                     "hydra.sweep.dir=sweep"})}) {
    TempDir dir;
    // The toy tree has no data section, which a fit needs before it is planned (+data.name gives
    // one), and its model's name is a toy's, which planning refuses (model.name=mlp without the
    // toy's key). Its jobs then run one short epoch.
    auto result = run_process(argv, dir.path());
    INFO(result.err);
    const fs::path sweep = fs::path(dir.path()) / "sweep";
    REQUIRE(fs::exists(sweep / "multirun.yaml"));
    CHECK(fs::exists(sweep / ".sweep" / "jobs"));
    CHECK(contains(read_file(sweep / "multirun.yaml"), "mode: MULTIRUN"));
    CHECK(contains(result.err, "#1 started: lr=0.2"));
  }
}

TEST_CASE("-m with hydra.mode=RUN is a multirun with Hydra's warning and its hydra.mode=MULTIRUN override") {
  TempDir dir;
  auto result = run_process(trainer_fit("sweep", "plain",
                                        {"-m", "hydra.mode=RUN", "lr=0.1,0.2", "+data.name=synthetic", "model.name=mlp",
                                         "~model.size", "+trainer.max_epochs=1", "hydra.sweep.dir=sweep"}),
                            dir.path());
  INFO(result.err);
  CHECK(contains(result.err, "Running with --multirun, overriding with `hydra.mode=MULTIRUN`."));
  const std::string multirun = read_file(fs::path(dir.path()) / "sweep" / "multirun.yaml");
  // The basic sweeper keeps one slot per key: the later hydra.mode=MULTIRUN takes RUN's place.
  CHECK(contains(multirun, "    hydra:\n    - hydra.mode=MULTIRUN\n    - hydra.sweep.dir=sweep\n"));
  CHECK(contains(multirun, "  mode: MULTIRUN\n"));

  auto bad = run_process(trainer_fit("sweep", "plain", {"--cfg", "job", "hydra.mode=SOMETIMES"}), dir.path());
  CHECK(bad.exit_code == 1);
  trainer::testing::check_no_crash(bad);
  CHECK(contains(bad.err, "Invalid value 'SOMETIMES', expected one of [RUN, MULTIRUN]"));
}

TEST_CASE("oc.deprecated: the new key's value, OmegaConf's warning once per key") {
  auto result = run_process(trainer_fit("types", "deprecated", {"--cfg", "job", "--resolve"}), kTrees.string());
  INFO(result.err);
  CHECK(result.exit_code == 0);
  CHECK(contains(result.out, "old_name: 5\n"));
  CHECK(count_of(result.err,
                 "UserWarning: 'old_name' is deprecated. Change your code and config to use "
                 "'new_name'") == 1);
  CHECK(count_of(result.err,
                 "UserWarning: 'nested.old_lr' is deprecated. Change your code and config to use "
                 "'nested.lr'") == 1);
  CHECK(count_of(result.err, "UserWarning: custom moved to nested.lr ($5, $OTHER)") == 1);
  CHECK(count_of(result.err, "UserWarning: 'items[0]' is deprecated.") == 1);

  auto missing =
      run_process(trainer_fit("types", "deprecated", {"--cfg", "job", "--resolve", "~new_name"}), kTrees.string());
  CHECK(missing.exit_code == 1);
  trainer::testing::check_no_crash(missing);
  CHECK(contains(missing.err, "In oc.deprecated resolver at 'old_name': Key not found: 'new_name'"));
}
