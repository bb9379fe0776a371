// The trainer command line: a subcommand, Hydra's flags and the overrides, parsed with CLI11.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainer::app {

struct CliArgs {
  std::string command;                 // fit | validate | test | predict | export | tune_batch_size | data_pack | sweep
  std::string sweep_action;            // sweep: run-job | resume | summary
  std::string sweep_dir;               // sweep: the sweep directory
  int sweep_job = -1;                  // sweep run-job: the job number
  std::vector<std::string> overrides;  // everything that is not a flag, in order (also without
                                       // a command: `trainer -sc query=bash`, `trainer --hydra-help`)
  std::optional<std::string> cfg;      // --cfg job|hydra|all
  bool resolve = false;                // --resolve
  std::optional<std::string> package;  // --package/-p
  std::optional<std::string> info;     // --info [all|defaults|defaults-tree|config|searchpath]
  bool multirun = false;               // -m/--multirun
  std::optional<std::string> config_path, config_name, config_dir;
  bool help = false;
  bool hydra_help = false;  // --hydra-help
  bool version = false;
  bool run = false;               // -r/--run: a single run (the default), as in Hydra
  bool shell_completion = false;  // -sc/--shell-completion with install|uninstall|query=SHELL
  std::string program;            // the executable's file name, as the shell runs it
  std::string usage;              // CLI11's own flag help, for --help
};

// Returns nullopt after printing CLI11's message for a malformed command line (exit code in
// `exit_code`).
std::optional<CliArgs> parse_cli(int argc, char** argv, int& exit_code);

}  // namespace trainer::app
