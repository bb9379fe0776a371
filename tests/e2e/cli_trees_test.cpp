// The real trainer binary against what real Hydra 1.3 printed for ~340 command lines over small
// config trees that exercise Hydra's features one by one (tests/data/cli_trees: the trees,
// cases.txt, expected/ made by make_expected.sh): --cfg job|hydra|all, every --info section,
// hydra.searchpath, hydra.mode. Sweeps (-m or hydra.mode=MULTIRUN) compare every job's config.
// Paths under the checkout are @ROOT@ in cases.txt and expected/.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "error_golden.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::read_file;
using trainer::testing::run_process;
using trainer::testing::split_case;

namespace {

const fs::path kTrees = fs::path(TRAINER_TEST_DATA_DIR) / "cli_trees";
const std::string kRootMark = "@ROOT@";

const std::string& checkout_root() {
  static const std::string root = fs::canonical(kTrees / ".." / ".." / "..").string();
  return root;
}

std::string with_root(std::string text) {
  const std::string& root = checkout_root();
  for (size_t at = text.find(kRootMark); at != std::string::npos; at = text.find(kRootMark, at + root.size())) {
    text.replace(at, kRootMark.size(), root);
  }
  return text;
}

// --info's tables pad their columns to the longest entry, and search-path entries hold the
// checkout's absolute path: a clone elsewhere pads differently. Table rows ("| ...") and rules
// ("----") are compared with runs of spaces and dashes collapsed, on both sides; every other line
// byte for byte.
std::string without_table_padding(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const bool row = !line.empty() && line[0] == '|';
    const bool rule = line.size() > 3 && line.find_first_not_of('-') == std::string::npos;
    if (row || rule) {
      std::string collapsed;
      for (char c : line) {
        if ((c == ' ' || c == '-') && !collapsed.empty() && collapsed.back() == c) continue;
        collapsed += c;
      }
      line = collapsed;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("--cfg output and exit status match Hydra 1.3 over the feature trees") {
  std::ifstream cases(kTrees / "cases.txt");
  REQUIRE(cases.good());
  std::string line;
  int number = 0;
  int sweeps = 0;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    char name[8];
    std::snprintf(name, sizeof(name), "%03d", number++);
    const std::string expected = (kTrees / "expected" / name).string();
    std::vector<std::string> words = split_case(line);
    REQUIRE(words.size() >= 2);
    std::vector<std::string> argv = {TRAINER_BINARY, "fit", "-cp", (kTrees / words[0]).string(), "-cn", words[1]};
    for (size_t i = 2; i < words.size(); ++i) {
      if (words[i] == "-m") ++sweeps;
      argv.push_back(with_root(words[i]));
    }
    auto result = run_process(argv, kTrees.string(), {"TRAINER_TEST_ENV_SET=from-env"});
    const int expected_status = std::stoi(read_file(expected + ".status"));
    INFO("case " << name << ": trainer fit " << line << "\nstderr: " << result.err);
    if (expected_status == 0) {
      CHECK(result.exit_code == 0);
      CHECK(without_table_padding(result.out) == without_table_padding(with_root(read_file(expected + ".out"))));
    } else {
      CHECK(result.exit_code != 0);
      CHECK(result.out.empty());
      CHECK_FALSE(result.err.empty());
      // Trainer's own exit code and first line for the error (Hydra's .status is always 1).
      trainer::testing::check_error_golden(result, expected + ".error", checkout_root());
    }
  }
  CHECK(number >= 340);
  CHECK(sweeps >= 25);
}
