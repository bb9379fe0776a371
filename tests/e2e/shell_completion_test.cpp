// Tab completion with the real binary (docs/config.md, "Tab completion"): the candidates `trainer
// -sc query=SHELL` gives against what real Hydra 1.3 gave for the same lines
// (tests/data/completion: Hydra's own completion test cases over a tree of the same shape, and the
// shipped configs/), trainer's commands and flags, and the install scripts in real shells: bash
// (always), zsh and fish (tagged [zsh], [fish]; ctest reports them skipped where the shell is not
// installed; scripts/setup.sh installs both).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "pty_session.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::PtySession;
using trainer::testing::run_process;
using trainer::testing::TempDir;

namespace {

const fs::path kCompletion = fs::path(TRAINER_TEST_DATA_DIR) / "completion";
const std::string kTrainer = TRAINER_BINARY;

std::string with_root(std::string text) {
  const std::string mark = "@ROOT@";
  const std::string root = fs::canonical(fs::path(TRAINER_SOURCE_DIR)).string();
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + root.size())) {
    text.replace(at, mark.size(), root);
  }
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// What the installed completion function runs: `<program> -sc query=SHELL` with the line typed.
trainer::testing::ProcessResult query(const std::string& line, const std::string& shell = "bash",
                                      const std::string& cwd = kCompletion.string(),
                                      std::vector<std::string> env = {}) {
  env.push_back("COMP_LINE=" + line);
  return run_process({kTrainer, "-sc", "query=" + shell}, cwd, env);
}

std::vector<std::string> candidates(const std::string& line, const std::string& cwd = kCompletion.string(),
                                    std::vector<std::string> env = {}) {
  auto result = query(line, "bash", cwd, std::move(env));
  INFO("COMP_LINE=" << line << "\nstderr: " << result.err);
  CHECK(result.exit_code == 0);
  return split(result.out.substr(0, result.out.find('\n')), ' ');
}

using Words = std::vector<std::string>;

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const fs::path candidate = fs::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// Reported as a skip (skip_test), or a failure under CI=true.
bool shell_missing(const std::string& shell) {
  if (!find_program(shell).empty()) return false;
  trainer::testing::skip_test(
      shell + " is not installed, so its completion was not tested (scripts/setup.sh installs it)",
      trainer::testing::Skip::unexpected_in_ci);
  return true;
}

// A clean interactive shell: no user start-up files, a prompt to wait for. The sanitizers'
// settings pass through, so a sanitized trainer started by the shell reads its suppressions.
std::vector<std::string> shell_env(const std::string& home) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> env = {"PATH=" + std::string(path != nullptr ? path : "/usr/bin:/bin"),
                                  "HOME=" + home,
                                  "TERM=dumb",
                                  "INPUTRC=/dev/null",
                                  "PS1=PROMPT> ",
                                  "LANG=C.UTF-8"};
  for (const char* name : {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"}) {
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  }
  return env;
}

// Presses TAB after `line` in an interactive shell and reads the line back: Ctrl-A goes to its
// start and `echo COMPLETED:` prints it.
void check_tab_completes(PtySession& shell, const std::string& line, const std::string& completed) {
  shell.forget();
  shell.send(line + "\t");
  shell.send(
      "\x01"
      "echo COMPLETED:\r");
  INFO("typed " << line << "<TAB>; the terminal showed:\n" << shell.output());
  CHECK(shell.wait_for("\nCOMPLETED:" + completed + "\r\n"));
  CHECK(shell.wait_for("PROMPT> "));
}

// Presses TAB twice after `line` and looks for every candidate in the list the shell draws.
void check_tab_lists(PtySession& shell, const std::string& line, const Words& expected) {
  shell.forget();
  shell.send(line + "\t\t");
  for (const std::string& candidate : expected) {
    INFO("typed " << line << "<TAB><TAB>; the terminal showed:\n" << shell.output());
    CHECK(shell.wait_for(candidate));
  }
  shell.send("\x03");  // Ctrl-C: a fresh prompt
  CHECK(shell.wait_for("PROMPT> "));
}

}  // namespace

TEST_CASE(
    "completion candidates are what Hydra 1.3 completes, over its own test tree and the shipped "
    "configs",
    "[completion]") {
  std::ifstream cases(kCompletion / "cases.txt");
  REQUIRE(cases.good());
  int number = 0;
  for (std::string case_line; std::getline(cases, case_line);) {
    if (case_line.empty() || case_line[0] == '#') continue;
    char name[8];
    std::snprintf(name, sizeof(name), "%03d", number++);
    std::istringstream words(case_line);
    std::string tree, config;
    words >> tree >> config;
    const size_t open = case_line.find('|');
    const std::string line = with_root(case_line.substr(open + 1, case_line.rfind('|') - open - 1));
    const std::string typed =
        tree == "-" ? "trainer fit " + line : "trainer fit -cp " + tree + " -cn " + config + " " + line;
    const std::string expected_path = (kCompletion / "expected" / name).string();
    const bool hydra_answered = std::stoi(trainer::testing::read_file(expected_path + ".status")) == 0;
    // Where Hydra's completion fails it prints nothing (the function then offers file names).
    const std::string expected = hydra_answered ? with_root(trainer::testing::read_file(expected_path + ".out")) : "\n";

    auto bash = query(typed);
    INFO("case " << name << ": COMP_LINE='" << typed << "'\nstderr: " << bash.err);
    CHECK(bash.exit_code == 0);
    CHECK(bash.out == expected);
    std::string fish_expected;
    for (const std::string& candidate : split(expected.substr(0, expected.size() - 1), ' ')) {
      fish_expected += (fish_expected.empty() ? "" : "\n") + candidate;
    }
    CHECK(query(typed, "fish").out == fish_expected + "\n");
  }
  CHECK(number >= 250);
}

TEST_CASE("completion knows trainer's commands, flags and their values", "[completion]") {
  SECTION("commands and their actions") {
    CHECK(candidates("trainer ") == Words{"data", "export", "fit", "predict", "sweep", "test", "tune", "validate"});
    CHECK(candidates("trainer t") == Words{"test", "tune"});
    CHECK(candidates("trainer tune ") == Words{"batch_size"});
    CHECK(candidates("trainer data ") == Words{"pack"});
    CHECK(candidates("trainer sweep ") == Words{"resume", "summary"});
    CHECK(candidates("trainer sweep resume ex") == Words{"expected/", "extra/"});
    CHECK(candidates("trainer sweep resume extra ").empty());
    CHECK(candidates("trainer fti ").empty());
  }
  SECTION("every command that composes completes overrides") {
    const Words max_keys = {"trainer.max_epochs=", "trainer.max_steps=", "trainer.max_time="};
    for (const std::string command : {"fit", "validate", "test", "export", "tune batch_size", "data pack"}) {
      CHECK(candidates("trainer " + command + " trainer.max_") == max_keys);
      CHECK(candidates("trainer " + command + " model=") ==
            Words{"model=cnn", "model=mlp", "model=resnet", "model=torchscript"});
    }
    CHECK(candidates("trainer fit --cfg job model=cnn model.ch") == Words{"model.channels."});
    CHECK(candidates("trainer fit data.root=./e") == Words{"data.root=./expected", "data.root=./extra"});
  }
  SECTION("flags, and the values of the flags that take one") {
    CHECK(candidates("trainer fit --c") == Words{"--cfg", "--config-dir", "--config-name", "--config-path"});
    CHECK(candidates("trainer fit -c") == Words{"-c", "-cd", "-cn", "-cp"});
    CHECK(candidates("trainer fit --shell") == Words{"--shell-completion"});
    CHECK(candidates("trainer --hy") == Words{"--hydra-help"});
    CHECK(candidates("trainer fit -c ") == Words{"all", "hydra", "job"});
    CHECK(candidates("trainer fit --cfg h") == Words{"hydra"});
    CHECK(candidates("trainer fit --cfg=h") == Words{"--cfg=hydra"});
    CHECK(candidates("trainer fit --info def") == Words{"defaults", "defaults-tree"});
    CHECK(candidates("trainer fit -cp ") == Words{"app/", "expected/", "extra/"});
    CHECK(candidates("trainer fit -cp app -cn ") == Words{"additional_searchpath", "config", "missing_default"});
    CHECK(candidates("trainer fit -cp app -cn m") == Words{"missing_default"});
  }
  SECTION("the line's own -cp, -cn and -cd choose the tree; the query's flags are the default") {
    CHECK(candidates("trainer fit -cp app gro") == Words{"group="});
    CHECK(candidates("trainer fit -cp app -cd extra add") == Words{"additional_group="});
    auto from_query =
        run_process({kTrainer, "-cp", "app", "-sc", "query=bash"}, kCompletion.string(), {"COMP_LINE=trainer fit gro"});
    CHECK(from_query.out == "group=\n");
  }
  SECTION("only the line up to the cursor (COMP_POINT) counts") {
    const std::string line = "trainer fit model=c seed=1";
    CHECK(candidates(line, kCompletion.string(), {"COMP_POINT=" + std::to_string(line.find(" seed"))}) ==
          Words{"model=cnn"});
  }
  SECTION("fish gets one candidate a line, zsh what bash gets") {
    CHECK(query("trainer fit trainer.max_", "fish").out ==
          "trainer.max_epochs=\ntrainer.max_steps=\ntrainer.max_time=\n");
    CHECK(query("trainer fit trainer.max_", "zsh").out == "trainer.max_epochs= trainer.max_steps= trainer.max_time=\n");
  }
}

TEST_CASE("-sc takes exactly one of install, uninstall or query, for bash, zsh or fish", "[completion]") {
  auto none = run_process({kTrainer, "fit", "-sc"});
  trainer::testing::check_clean_error(none);
  CHECK(none.err.find("Expecting one subcommand from ['install', 'uninstall', 'query'] to be set") !=
        std::string::npos);
  CHECK(none.err.find("eval \"$(trainer fit -sc install=bash)\"") != std::string::npos);
  auto two = run_process({kTrainer, "fit", "-sc", "install=bash", "query=bash"});
  trainer::testing::check_clean_error(two);
  auto tcsh = run_process({kTrainer, "fit", "--shell-completion", "install=tcsh"});
  trainer::testing::check_clean_error(tcsh);
  CHECK(tcsh.err.find("No completion plugin for 'tcsh' found, available : bash, fish, zsh") != std::string::npos);
  auto with_cfg = run_process({kTrainer, "fit", "--cfg", "job", "-sc", "install=bash"});
  trainer::testing::check_clean_error(with_cfg);
  CHECK(with_cfg.err.find("Only one of --run, --multirun, --cfg, --info and --shell-completion") != std::string::npos);
  auto no_line = run_process({"/usr/bin/env", "-u", "COMP_LINE", kTrainer, "-sc", "query=bash"});
  trainer::testing::check_clean_error(no_line);
  CHECK(no_line.err.find("COMP_LINE") != std::string::npos);
  // With or without a command, the same script; zsh's loads bashcompinit first.
  auto bash = run_process({kTrainer, "fit", "-sc", "install=bash"});
  CHECK(bash.exit_code == 0);
  CHECK(bash.out == run_process({kTrainer, "-sc", "install=bash"}).out);
  CHECK(bash.out.find("complete -o nospace -o default -F hydra_bash_completion trainer\n") != std::string::npos);
  auto zsh = run_process({kTrainer, "fit", "-sc", "install=zsh"});
  CHECK(zsh.out == "autoload -Uz bashcompinit && bashcompinit\n" + bash.out);
  CHECK(run_process({kTrainer, "fit", "-sc", "install=fish"})
            .out.find("complete -c trainer -x -a '(hydra_fish_completion)'") != std::string::npos);
}

TEST_CASE("bash: the installed hydra_bash_completion fills COMPREPLY", "[completion][bash]") {
  const std::string bash = find_program("bash");
  REQUIRE_FALSE(bash.empty());
  TempDir dir;
  fs::create_directories(fs::path(dir.path()) / "runs" / "a:bc");
  const std::string script = R"SH(
eval "$("$1" fit -sc install=bash)" || exit 3
complete -p trainer
ask() {
    COMP_LINE=$1
    COMP_POINT=${2:-${#COMP_LINE}}
    COMPREPLY=()
    hydra_bash_completion
    echo "[$COMP_LINE] ${COMPREPLY[*]}"
}
ask "$1 fit model=c"
ask "$1 fit trainer.max_"
ask "$1 tune batch_size optimizer.l"
ask "$1 fit model=c seed=1" $(( ${#1} + 12 ))
ask "$1 fit hydra.run.dir=./runs/a:b"
HYDRA_COMP_DEBUG=1 ask "$1 fit seed="
)SH";
  auto result = run_process({bash, "--norc", "--noprofile", "-c", script, "bash", kTrainer}, dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty());
  CHECK(result.out.find("complete -o default -o nospace -F hydra_bash_completion trainer\n") == 0);
  CHECK(result.out.find("fit model=c] model=cnn\n") != std::string::npos);
  CHECK(result.out.find("fit trainer.max_] trainer.max_epochs= trainer.max_steps= trainer.max_time=\n") !=
        std::string::npos);
  CHECK(result.out.find("batch_size optimizer.l] optimizer.lr=\n") != std::string::npos);
  CHECK(result.out.find("fit model=c seed=1] model=cnn\n") != std::string::npos);
  // Readline replaces what follows the last ':' of the word, so that is what the reply holds.
  CHECK(result.out.find("fit hydra.run.dir=./runs/a:b] bc\n") != std::string::npos);
  CHECK(result.out.find("Output suggestions:\n\tseed=42\n") != std::string::npos);
  CHECK(result.out.find("fit seed=] seed=42\n") != std::string::npos);
}

TEST_CASE("bash: uninstall puts back the completion install replaced, or removes it", "[completion][bash]") {
  const std::string bash = find_program("bash");
  REQUIRE_FALSE(bash.empty());
  const std::string script = R"SH(
dummy_completion() { :; }
complete -o nospace -o default -F dummy_completion trainer
eval "$("$1" fit -sc install=bash)"
complete -p trainer | grep -q hydra_bash_completion || exit 1
eval "$("$1" fit -sc uninstall=bash)"
complete -p trainer | grep -q dummy_completion || exit 2
declare -F hydra_bash_completion > /dev/null && exit 3
complete -r trainer
eval "$("$1" fit -sc install=bash)"
eval "$("$1" fit -sc uninstall=bash)"
complete -p trainer 2> /dev/null && exit 4
exit 0
)SH";
  auto result = run_process({bash, "--norc", "--noprofile", "-c", script, "bash", kTrainer});
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
}

TEST_CASE("bash: TAB in an interactive shell completes and lists", "[completion][bash]") {
  const std::string bash = find_program("bash");
  REQUIRE_FALSE(bash.empty());
  TempDir home;
  PtySession shell({bash, "--norc", "--noprofile", "-i"}, shell_env(home.path()));
  REQUIRE(shell.wait_for("PROMPT> "));
  shell.forget();
  shell.send("eval \"$(" + kTrainer + " fit -sc install=bash)\"\r");
  REQUIRE(shell.wait_for("PROMPT> "));
  check_tab_completes(shell, kTrainer + " fit model=c", kTrainer + " fit model=cnn");
  check_tab_completes(shell, kTrainer + " fit hydra/launcher=lo", kTrainer + " fit hydra/launcher=local");
  check_tab_completes(shell, kTrainer + " tune b", kTrainer + " tune batch_size");
  check_tab_lists(shell, kTrainer + " fit trainer.max_",
                  {"trainer.max_epochs=", "trainer.max_steps=", "trainer.max_time="});
}

TEST_CASE("zsh: TAB completes through bashcompinit, and uninstall removes it", "[.][zsh]") {
  if (shell_missing("zsh")) return;
  TempDir home;
  PtySession shell({find_program("zsh"), "-f", "-i"}, shell_env(home.path()));
  REQUIRE(shell.wait_for("PROMPT> "));
  shell.forget();
  shell.send("autoload -Uz compinit && compinit -u\r");
  REQUIRE(shell.wait_for("PROMPT> "));
  shell.forget();
  shell.send("eval \"$(" + kTrainer + " fit -sc install=zsh)\"\r");
  REQUIRE(shell.wait_for("PROMPT> "));
  check_tab_completes(shell, kTrainer + " fit model=c", kTrainer + " fit model=cnn");
  check_tab_completes(shell, kTrainer + " fit hydra/launcher=lo", kTrainer + " fit hydra/launcher=local");
  check_tab_completes(shell, kTrainer + " tune b", kTrainer + " tune batch_size");
  check_tab_lists(shell, kTrainer + " fit trainer.max_",
                  {"trainer.max_epochs=", "trainer.max_steps=", "trainer.max_time="});
  // Installed for trainer, removed by uninstall. An empty line first, answered by a fresh prompt:
  // keys typed while zsh still redraws after the Ctrl-C above can be dropped.
  shell.forget();
  shell.send("\r");
  REQUIRE(shell.wait_for("PROMPT> "));
  shell.forget();
  shell.send("echo \"registered:${_comps[trainer]}\"\r");
  CHECK(shell.wait_for("registered:_bash_complete"));
  shell.send("eval \"$(" + kTrainer + " fit -sc uninstall=zsh)\"\r");
  shell.forget();
  shell.send("echo \"after:${_comps[trainer]}:$(whence -w hydra_bash_completion)\"\r");
  CHECK(shell.wait_for("after::hydra_bash_completion: none"));
}

TEST_CASE("fish: the installed function completes, and uninstall removes it", "[.][fish]") {
  if (shell_missing("fish")) return;
  TempDir home;
  const std::string script = R"SH(
$argv[1] fit -sc install=fish | source
complete -c trainer
echo "--- model=c"
complete --do-complete "$argv[1] fit model=c"
echo "--- trainer.max_"
complete --do-complete "$argv[1] fit trainer.max_"
echo "--- tune"
complete --do-complete "$argv[1] tune "
$argv[1] fit -sc uninstall=fish | source
echo "--- after uninstall"
complete -c trainer
functions -q hydra_fish_completion; and echo "function still defined"
echo "--- end"
)SH";
  auto result =
      run_process({find_program("fish"), "--no-config", "-c", script, kTrainer}, home.path(), {"HOME=" + home.path()});
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const std::string registered = result.out.substr(0, result.out.find('\n'));  // fish 3.6: complete --exclusive ...
  CHECK(registered.find(" trainer ") != std::string::npos);
  CHECK(registered.find("-a '(hydra_fish_completion)'") != std::string::npos);
  CHECK(result.out.find("--- model=c\nmodel=cnn\n--- trainer.max_\ntrainer.max_epochs=\ntrainer.max_steps=\n"
                        "trainer.max_time=\n--- tune\nbatch_size\n--- after uninstall\n--- end\n") !=
        std::string::npos);
}
