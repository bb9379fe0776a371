// The real trainer binary against what real Hydra 1.3 printed for the same command lines over
// the shipped configs/ (tests/data/cli: cases.txt, expected/ made by make_expected.sh).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "error_golden.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string with_root(std::string text) {
  const std::string placeholder = "@ROOT@";
  for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at)) {
    text.replace(at, placeholder.size(), TRAINER_SOURCE_DIR);
  }
  return text;
}

std::vector<std::string> split_spaces(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

const fs::path kCliData = fs::path(TRAINER_TEST_DATA_DIR) / "cli";

// --hydra-help lists Hydra's flags. Four of Hydra's lines would not be true of trainer, which says
// instead what it does: its version is trainer's, the primary config comes from the current
// directory (there is no hydra.main() or Python file), and a pickled Python config cannot be rerun.
std::string as_trainer_words_it(std::string text) {
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"--version : Show Hydra's version and exit\n", "--version : Show trainer's version and exit\n"},
      {"--config-path,-cp : Overrides the config_path specified in hydra.main().\n"
       "                    The config_path is absolute or relative to the Python file declaring @hydra.main()\n",
       "--config-path,-cp : Overrides the primary config directory (default: the shipped configs/).\n"
       "                    The config_path is absolute or relative to the current directory\n"},
      {"--config-name,-cn : Overrides the config_name specified in hydra.main()\n",
       "--config-name,-cn : Overrides the primary config's name (default: config)\n"},
      {"--experimental-rerun : Rerun a job from a previous config pickle\n", ""},
  };
  for (const auto& [hydra, trainer] : lines) {
    if (size_t at = text.find(hydra); at != std::string::npos) text.replace(at, hydra.size(), trainer);
  }
  return text;
}

}  // namespace

TEST_CASE("--cfg output and exit status match Hydra 1.3 over the shipped configs") {
  std::ifstream cases(kCliData / "cases.txt");
  std::string line;
  int number = 0;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    char name[8];
    std::snprintf(name, sizeof(name), "%03d", number++);
    const fs::path expected = kCliData / "expected" / name;
    std::vector<std::string> argv = {TRAINER_BINARY, "fit"};
    for (const std::string& word : split_spaces(line)) argv.push_back(word);
    auto result = run_process(argv, kCliData.string());
    const int expected_status = std::stoi(read_file(expected.string() + ".status"));
    INFO("trainer fit " << line << "\nstderr: " << result.err);
    if (expected_status == 0) {
      CHECK(result.exit_code == 0);
      CHECK(result.out == as_trainer_words_it(with_root(read_file(expected.string() + ".out"))));
    } else {
      CHECK(result.exit_code != 0);
      CHECK(result.out.empty());
      CHECK_FALSE(result.err.empty());
      // Trainer's own exit code and first line for the error (Hydra's .status is always 1).
      trainer::testing::check_error_golden(result, expected.string() + ".error", TRAINER_SOURCE_DIR);
    }
  }
  CHECK(number > 25);
}

TEST_CASE("--hydra-help works without a command and names the program as it was run") {
  auto bare = run_process({TRAINER_BINARY, "--hydra-help"}, kCliData.string());
  REQUIRE(bare.exit_code == 0);
  CHECK(bare.out == run_process({TRAINER_BINARY, "fit", "--hydra-help"}, kCliData.string()).out);
  CHECK(bare.out.find("    eval \"$(trainer -sc install=bash)\"\n") != std::string::npos);
  CHECK(bare.out.find("hydra/launcher: basic, joblib, local, slurm, submitit_slurm\n") != std::string::npos);
  // A template of the user's own, with Hydra's placeholders.
  trainer::testing::TempDir dir;
  fs::create_directories(fs::path(dir.path()) / "hydra" / "hydra_help");
  std::ofstream(fs::path(dir.path()) / "hydra" / "hydra_help" / "mine.yaml")
      << "template: 'groups of ${hydra.job.name}: $$ $HYDRA_CONFIG_GROUPS'\n";
  auto mine = run_process({TRAINER_BINARY, "--hydra-help", "-cd", dir.path(), "hydra/hydra_help=mine"}, dir.path());
  INFO(mine.err);
  CHECK(mine.exit_code == 0);
  CHECK(mine.out.find("groups of trainer: $ hydra: config\nhydra/env: default\n") == 0);
  std::ofstream(fs::path(dir.path()) / "hydra" / "hydra_help" / "bad.yaml") << "template: 'x $NOPE'\n";
  auto bad = run_process({TRAINER_BINARY, "--hydra-help", "-cd", dir.path(), "hydra/hydra_help=bad"}, dir.path());
  trainer::testing::check_clean_error(bad);
  CHECK(bad.err.find("unknown placeholder $NOPE") != std::string::npos);
}

TEST_CASE("composing and printing configs does not load LibTorch") {
  // LD_DEBUG=files makes the dynamic loader report every library it opens.
  auto result =
      run_process({TRAINER_BINARY, "fit", "--cfg", "job", "model=cnn"}, kCliData.string(), {"LD_DEBUG=files"});
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("libtorch") == std::string::npos);
  CHECK(result.err.find("libtrainer_engine") == std::string::npos);
  CHECK(result.err.find("libc.so") != std::string::npos);  // the probe itself works
}

TEST_CASE("errors name the problem, go to stderr and exit non-zero") {
  auto unknown = run_process({TRAINER_BINARY, "fit", "--cfg", "job", "trainer.max_epoch=3"}, kCliData.string());
  CHECK(unknown.exit_code == 1);
  trainer::testing::check_no_crash(unknown);
  CHECK(unknown.err.find("trainer.max_epoch") != std::string::npos);
  CHECK(unknown.err.find("+trainer.max_epoch=3") != std::string::npos);

  auto option = run_process({TRAINER_BINARY, "fit", "--cfg", "job", "model=nope"}, kCliData.string());
  CHECK(option.exit_code == 1);
  trainer::testing::check_no_crash(option);
  CHECK(option.err.find("mlp") != std::string::npos);  // lists the available options

  auto ambiguous = run_process({TRAINER_BINARY, "fit", "seed=1,2"}, kCliData.string());
  CHECK(ambiguous.exit_code == 1);
  trainer::testing::check_no_crash(ambiguous);
  CHECK(ambiguous.err.find("-m") != std::string::npos);

  auto no_command = run_process({TRAINER_BINARY}, kCliData.string());
  CHECK(no_command.exit_code != 0);
  trainer::testing::check_no_crash(no_command);
  CHECK(no_command.err.find("fit") != std::string::npos);
}

TEST_CASE("-m --cfg job prints every job's config in job order") {
  auto result = run_process({TRAINER_BINARY, "fit", "-m", "--cfg", "job", "-p", "model", "model=mlp,cnn", "seed=1,2"},
                            kCliData.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string& out = result.out;
  size_t job0 = out.find("# job 0: model=mlp seed=1");
  size_t job1 = out.find("# job 1: model=mlp seed=2");
  size_t job2 = out.find("# job 2: model=cnn seed=1");
  size_t job3 = out.find("# job 3: model=cnn seed=2");
  REQUIRE(job0 != std::string::npos);
  CHECK(job0 < job1);
  CHECK(job1 < job2);
  CHECK(job2 < job3);
  CHECK(out.find("name: cnn", job2) != std::string::npos);
  CHECK(out.find("name: cnn") > job1);
}

TEST_CASE("trainer fit writes Hydra's run directory and .hydra files") {
  trainer::testing::TempDir dir;
  auto result =
      run_process({TRAINER_BINARY, "fit", "model=cnn", "data=synthetic", "debug=fdr", "hydra.run.dir=run"}, dir.path());
  INFO(result.err);
  // A build without LibTorch still composes and writes the run directory, then says so.
  const fs::path run = fs::path(dir.path()) / "run";
  CHECK(fs::exists(run / ".hydra" / "config.yaml"));
  CHECK(fs::exists(run / ".hydra" / "hydra.yaml"));
  CHECK(read_file(run / ".hydra" / "overrides.yaml") == "- model=cnn\n- data=synthetic\n- debug=fdr\n");
  CHECK(read_file(run / ".hydra" / "config.yaml").find("name: cnn") != std::string::npos);
  CHECK(fs::exists(run / "trainer.log"));
}

TEST_CASE("-r/--run is a single run, as without it; with -m, --cfg or --info it is Hydra's error") {
  trainer::testing::TempDir dir;
  auto run = run_process({TRAINER_BINARY, "fit", "-r", "data=synthetic", "debug=fdr", "hydra.run.dir=run"}, dir.path());
  INFO(run.err);
  CHECK(fs::exists(fs::path(dir.path()) / "run" / ".hydra" / "config.yaml"));
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"-m"}, {"--cfg", "job"}, {"--info"}}) {
    std::vector<std::string> argv = {TRAINER_BINARY, "fit", "--run"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto both = run_process(argv, dir.path());
    trainer::testing::check_clean_error(both);
    CHECK(both.err.find("Only one of --run, --multirun, --cfg, --info and --shell-completion can be specified") !=
          std::string::npos);
  }
}

TEST_CASE("unknown keys in trainer's sections stop a job at start, never under --cfg") {
  trainer::testing::TempDir dir;
  auto shown = run_process({TRAINER_BINARY, "fit", "--cfg", "job", "+trainer.max_epoch=3"}, dir.path());
  CHECK(shown.exit_code == 0);
  auto run = run_process({TRAINER_BINARY, "fit", "+trainer.max_epoch=3", "hydra.run.dir=run"}, dir.path());
  CHECK(run.exit_code == 1);
  trainer::testing::check_no_crash(run);
  CHECK(run.err.find("trainer.max_epoch") != std::string::npos);
  CHECK(run.err.find("Did you mean 'max_epochs'?") != std::string::npos);
}

TEST_CASE("a misspelt or missing command gets the command line it most likely meant") {
  auto typo = trainer::testing::run_process({TRAINER_BINARY, "fti", "model=cnn"});
  CHECK(typo.exit_code == 1);
  trainer::testing::check_no_crash(typo);
  CHECK(typo.err.find("Error: command line: unknown command 'fti'. Did you mean `trainer fit model=cnn`?") !=
        std::string::npos);
  auto missing = trainer::testing::run_process({TRAINER_BINARY, "model=cnn", "seed=1"});
  CHECK(missing.exit_code == 1);
  trainer::testing::check_no_crash(missing);
  CHECK(missing.err.find("no command before 'model=cnn'. Did you mean `trainer fit model=cnn seed=1`?") !=
        std::string::npos);
  auto tset = trainer::testing::run_process({TRAINER_BINARY, "tset", "ckpt_path=best"});
  CHECK(tset.exit_code == 1);
  trainer::testing::check_no_crash(tset);
  CHECK(tset.err.find("Did you mean `trainer test ckpt_path=best`?") != std::string::npos);
}

TEST_CASE("a wrong action of tune or sweep, or an unknown flag, is one paragraph with exit 1") {
  auto tune = trainer::testing::run_process({TRAINER_BINARY, "tune", "batchsize", "model=cnn"});
  CHECK(tune.exit_code == 1);
  trainer::testing::check_no_crash(tune);
  CHECK(
      tune.err.find("unknown action 'batchsize' of trainer tune. Did you mean `trainer tune batch_size model=cnn`?") !=
      std::string::npos);
  auto bare = trainer::testing::run_process({TRAINER_BINARY, "tune"});
  CHECK(bare.exit_code == 1);
  trainer::testing::check_no_crash(bare);
  CHECK(bare.err.find("trainer tune needs an action") != std::string::npos);
  auto sweep = trainer::testing::run_process({TRAINER_BINARY, "sweep", "resum", "sw2"});
  CHECK(sweep.exit_code == 1);
  trainer::testing::check_no_crash(sweep);
  CHECK(sweep.err.find("Did you mean `trainer sweep resume sw2`?") != std::string::npos);
  auto flag = trainer::testing::run_process({TRAINER_BINARY, "test", "--bogus"});
  CHECK(flag.exit_code == 1);
  trainer::testing::check_no_crash(flag);
  CHECK(flag.err.find("Error: command line: ") == 0);
  CHECK(flag.err.find("--bogus") != std::string::npos);
}
