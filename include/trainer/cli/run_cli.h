// The trainer command line as a library call, so a C++ program can be `trainer` plus its own
// models, datasets, callbacks and loggers (registered with the TRAINER_REGISTER_* macros):
//   int main(int argc, char** argv) { return trainer::run_cli(argc, argv, &trainer::kInProcessEngine); }
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainer/launch/engine_loader.h"

// Set by the installed package (trainerConfig.cmake) on trainer::cli: the installed configs/ tree,
// the default primary config tree of a program built outside the install prefix.
#ifndef TRAINER_INSTALLED_CONFIG_DIR
#define TRAINER_INSTALLED_CONFIG_DIR nullptr
#endif

namespace trainer {

using launch::EngineEntry;

struct CliOptions {
  // The engine to run jobs with: nullptr loads libtrainer_engine.so when a job runs (the trainer
  // binary, which never loads LibTorch otherwise); &kInProcessEngine (trainer/cli/in_process_engine.h)
  // runs the engine linked into this program, where the program's own registrations live.
  const EngineEntry* engine = nullptr;
  // The primary config tree when --config-path is not given. Unset: the configs/ found from the
  // executable (<exe>/../share/trainer/configs, or a source tree's configs/).
  std::optional<std::string> default_config_path;
  // Extra config directories searched after the primary tree and --config-dir (provider "app"),
  // e.g. the program's own model/*.yaml, so `model=mine` works without -cd.
  std::vector<std::string> config_dirs;
};

// Parses argv as `trainer fit|validate|test|export [flags] [overrides...]`, runs it and returns
// the process exit code. Errors are printed to stderr as one paragraph; nothing throws.
int run_cli(int argc, char** argv, const CliOptions& options);

// The common case. `installed_config_dir` is a default argument so that it is read where the call
// is compiled: in a program built against the installed package it names that package's configs/.
int run_cli(int argc, char** argv, const EngineEntry* engine = nullptr,
            const char* installed_config_dir = TRAINER_INSTALLED_CONFIG_DIR);

}  // namespace trainer
