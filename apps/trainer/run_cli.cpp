// The trainer command line: wires the flags to the composer, the sweeper and the launcher.
// Everything here runs without LibTorch; the engine runs a job through the entry points it is
// given (in-process) or from libtrainer_engine.so, loaded when the first job runs.
#include "trainer/cli/run_cli.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "trainer/config/composer.h"
#include "trainer/config/did_you_mean.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/override.h"
#include "trainer/config/python_str.h"
#include "trainer/config/repeated_overrides.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/config/yaml.h"
#include "trainer/launch/completion_scripts.h"
#include "trainer/launch/config_locations.h"
#include "trainer/launch/engine_loader.h"
#include "trainer/launch/evaluation_run.h"
#include "trainer/launch/hydra_help.h"
#include "trainer/launch/installed_plugins.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/job_run.h"
#include "trainer/launch/job_runner.h"
#include "trainer/launch/launcher.h"
#include "trainer/launch/new_directories.h"
#include "trainer/launch/optuna_sweep.h"
#include "trainer/launch/run_lock.h"
#include "trainer/launch/schema_check.h"
#include "trainer/launch/shell_completion.h"
#include "trainer/launch/sweep_lock.h"
#include "trainer/launch/sweep_plan.h"
#include "trainer/launch/sweep_planner.h"
#include "trainer/launch/sweep_runner.h"
#include "trainer/options/option_reference.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"
#include "trainer/util/lies_within.h"
#include "trainer/util/log.h"

#include "cli_args.h"

namespace fs = std::filesystem;
using trainer::Error;
using trainer::config::Node;

namespace trainer::app {
namespace {

Node without_key(const Node& config, std::string_view key) {
  Node copy = config;
  copy.erase(key);
  return copy;
}

// What --cfg job|hydra|all shows, as Hydra's show_cfg: the job config has no `hydra` node; the
// hydra view keeps only `hydra`, minus its help texts. Consumes `config`; `hydra` receives the
// hydra node so ${hydra:...} can still be resolved.
Node config_view_for(Node config, const std::string& kind, Node& hydra) {
  if (Node* node = config.find("hydra")) hydra = std::move(*node);
  if (kind == "job") {
    config.erase("hydra");
    return config;
  }
  if (kind == "hydra") {
    Node only = Node::map();
    Node& shown = only.set("hydra", hydra);
    shown.erase("help");
    shown.erase("hydra_help");
    return only;
  }
  config.set("hydra", hydra);
  return config;
}

// The fix for a --package that names no key: the closest key beside where it points, or the keys
// there (the parent's, or the top level's).
std::string package_fix(const Node& shown, const std::string& package) {
  const size_t dot = package.rfind('.');
  const std::string parent_path = dot == std::string::npos ? std::string() : package.substr(0, dot);
  const Node* parent = parent_path.empty() ? &shown : config::select(shown, parent_path);
  if (parent == nullptr || !parent->is_map()) return "Name a key of the composed config (--cfg job shows them).";
  std::vector<std::string> keys;
  for (const Node::Entry& entry : parent->entries()) keys.push_back(entry.key);
  const std::string prefix = parent_path.empty() ? "" : parent_path + ".";
  const std::string close = config::closest_match(package.substr(dot == std::string::npos ? 0 : dot + 1), keys);
  if (!close.empty()) return "Did you mean --package " + prefix + close + "?";
  if (keys.empty()) return "Name a key of the composed config: " + parent_path + " is empty.";
  std::string listed;
  for (size_t i = 0; i < keys.size() && i < 12; ++i) listed += (i == 0 ? "" : ", ") + prefix + keys[i];
  if (keys.size() > 12) listed += " and " + std::to_string(keys.size() - 12) + " more";
  return "Name a key of the composed config: " + listed + ".";
}

std::string render_config(Node config, const CliArgs& args) {
  // As Hydra's show_cfg: only the part shown is resolved; ${hydra:...} reads the hydra node.
  Node hydra;
  Node shown = config_view_for(std::move(config), args.cfg.value_or("job"), hydra);
  config::ResolveContext ctx;
  ctx.hydra = &hydra;
  config::ResolveContext strict = ctx;
  strict.omegaconf_resolve = true;  // as OmegaConf.resolve, which Hydra's --resolve runs
  std::string package = args.package.value_or("");
  if (package == "_global_") package.clear();
  if (package.empty()) {
    if (args.resolve) config::resolve_all(shown, strict);
    return config::to_yaml(shown);
  }
  // As OmegaConf.select in Hydra's show_cfg: the selected value is resolved (a scalar, or an
  // interpolation to a container), and null or ??? counts as not found. --resolve resolves the
  // package alone (and what it refers to), not the rest of the config.
  const Node* selected = config::select(shown, package);
  Node value;
  if (selected != nullptr && (selected->is_scalar() || selected->is_interpolation() || args.resolve)) {
    const bool container = !selected->is_scalar() && !selected->is_interpolation();  // OmegaConf.resolve'd
    value = config::resolve_path(shown, package, container ? strict : ctx);
    selected = &value;
  }
  if (selected == nullptr || selected->is_null() || selected->is_missing()) {
    // Hydra's words, with why where the key is there (its value null or ???).
    const std::string why = selected == nullptr      ? std::string()
                            : selected->is_missing() ? " (its value is ???, which Hydra's select treats as absent)"
                                                     : " (its value is null, which Hydra's select treats as absent)";
    throw Error("--package " + package, "package '" + package + "' not found in config" + why,
                selected == nullptr ? package_fix(shown, package)
                                    : "Print the config around it (--cfg job), or give it a value first.");
  }
  if (selected->is_scalar()) return config::python_str(*selected) + "\n";
  return "# @package " + package + "\n" + config::to_yaml(*selected);
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// Hydra's --info tables: `| a | b |` rows under a rule as long as the header, and a closing rule.
// Hydra's defaults list header carries one trailing blank (and so does its rule).
std::string table(const std::string& title, const std::vector<std::vector<std::string>>& rows,
                  bool header_trailing_blank) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out = title + "\n" + std::string(title.size(), '*') + "\n";
  size_t rule = 1 + (header_trailing_blank ? 1 : 0);
  for (size_t w : widths) rule += w + 3;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (size_t i = 0; i < rows[r].size(); ++i) out += " " + pad(rows[r][i], widths[i]) + " |";
    if (r == 0 && header_trailing_blank) out += " ";
    out += "\n";
    if (r == 0) out += std::string(rule, '-') + "\n";
  }
  return out + std::string(rule, '-') + "\n";
}

// --info as Hydra 1.3 prints it: `config` is the search path, the defaults tree, the defaults
// list and the config; `all` is the version and the plugins, then the same.
std::string info_text(const config::Composer& composer, const config::ComposeResult& result, const std::string& kind) {
  auto searchpath = [&] {
    std::vector<std::vector<std::string>> rows = {{"Provider", "Search path"}};
    for (const auto& entry : composer.search_path()) rows.push_back({entry.provider, entry.path});
    rows.push_back({"schema", "structured://"});
    return "\n" + table("Config search path", rows, false);
  };
  auto defaults_tree = [&] { return "\nDefaults Tree\n*************\n" + result.defaults_tree; };
  auto defaults = [&] {
    std::vector<std::vector<std::string>> rows = {{"Config path", "Package", "_self_", "Parent"}};
    for (const auto& entry : result.defaults) {
      rows.push_back({entry.config_path, entry.package, entry.is_self ? "True" : "False", entry.parent});
    }
    return "\n" + table("Defaults List", rows, true);
  };
  auto config_info = [&] {
    return searchpath() + defaults_tree() + defaults() + "Config\n******\n" +
           config::to_yaml(without_key(result.config, "hydra")) + "\n";
  };
  if (kind == "searchpath") return searchpath();
  if (kind == "defaults-tree") return defaults_tree();
  if (kind == "defaults") return defaults();
  if (kind == "config") return config_info();
  if (kind == "plugins") return launch::installed_plugins_text();
  return "Hydra 1.3.2\n===========\n" + launch::installed_plugins_text() + config_info();
}

std::string help_text(const config::Composer& composer, const config::ComposeResult& result, const CliArgs& args) {
  std::string out =
      "trainer: train LibTorch models from Hydra-style configs.\n\n"
      "Usage: trainer fit|validate|test|predict|export [flags] [overrides...]\n"
      "       trainer tune batch_size [overrides...]  (the largest batch that fits: docs/tuning.md)\n"
      "       trainer data pack [-o PATTERN] [--split S] [--maxcount N] [--maxsize BYTES] [overrides...]\n"
      "                                              (a split as tar shards for data=webdataset: docs/data.md)\n"
      "       trainer fit -m key=a,b other=1,2     (a sweep: one job per combination)\n"
      "       trainer sweep resume|summary DIR     (resume a sweep, print its summary)\n\n"
      "== Configuration groups ==\n"
      "Compose your configuration from those groups (group=option)\n\n";
  for (const std::string& group : composer.groups()) {
    if (group.rfind("hydra", 0) == 0) continue;
    auto options = composer.group_options(group);
    std::string joined;
    for (const auto& option : options.value_or(std::vector<std::string>{})) {
      joined += (joined.empty() ? "" : ", ") + option;
    }
    out += group + ": " + joined + "\n";
  }
  out += "\n== Config ==\nOverride anything in the config (foo.bar=value)\n\n";
  out += config::to_yaml(without_key(result.config, "hydra"));
  out += "\n== Options ==\nWhat trainer's own keys of this config accept (docs/options.md lists every key)\n\n";
  out += options::help_text(result.config);
  out += "\n== Flags ==\n" + args.usage;
  return out;
}

std::string resolve_string(const Node& config, const std::string& path, const config::ResolveContext& ctx) {
  Node value = config::resolve_path(config, path, ctx);
  if (value.type() == config::NodeType::kInt) return value.int_text();
  if (!value.is_string()) {
    throw Error(path, std::string("expected a path string, got ") + config::type_name(value.type()));
  }
  return value.as_string();
}

std::vector<std::string> task_overrides_of(const std::vector<std::string>& overrides) {
  std::vector<std::string> task;
  for (const std::string& o : overrides) {
    if (!config::is_hydra_override(o)) task.push_back(o);
  }
  return task;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

int run_single_job(const CliOptions& options, const CliArgs& args, const config::Composer& composer,
                   const std::vector<config::Override>& overrides) {
  config::ResolveContext ctx;
  config::ComposeResult result = launch::compose_evaluation(composer, args.command, overrides, config::RunMode::kRun);
  ctx.hydra = result.config.find("hydra");
  std::vector<std::string> texts;
  texts.reserve(overrides.size());
  for (const auto& o : overrides) texts.push_back(o.text);
  if (launch::is_evaluation_command(args.command)) {
    launch::EvaluationPlan plan =
        launch::plan_evaluation(args.command, std::move(result.config), overrides, ctx, launch::is_secondary_rank());
    // An evaluation that fails before writing a result (its checks in the engine, a checkpoint that
    // does not fit) takes back the directory it made, and an eval/ made for it: the training run's
    // tree stays as it was (docs/evaluation.md).
    const launch::NewDirectories made(plan.run_dir);
    const std::vector<std::string> records = launch::job_records(plan.config);
    try {
      launch::run_job(options.engine, args.command, std::move(plan.config), plan.run_dir, task_overrides_of(texts), ctx,
                      plan.notes);
    } catch (...) {
      if (!launch::is_secondary_rank() && made.remove_if_no_results(records)) {
        log::info(args.command + ": removed " + plan.run_dir + " again: the evaluation failed before writing a result");
      }
      throw;
    }
    return 0;
  }
  std::string run_dir = fs::absolute(resolve_string(result.config, "hydra.run.dir", ctx)).string();
  const config::Node* ckpt = result.config.find("ckpt_path");
  const bool resumes = ckpt != nullptr && !ckpt->is_null();
  // A directory named by the time (Hydra's outputs/<date>/<time>) that another fit started in the
  // same second already took: this fit gets <time>_1 (_2, ...), as an evaluation does, rather than
  // a refusal to overwrite a run it never meant.
  if (args.command == "fit" && !resumes && !launch::is_secondary_rank()) {
    const config::Node* dir = config::select(result.config, "hydra.run.dir");
    std::error_code ec;
    if (dir != nullptr && dir->is_string() && dir->as_string().find("${now:") != std::string::npos &&
        fs::exists(run_dir, ec)) {
      std::string fresh;
      for (int i = 1; fresh.empty() || fs::exists(fresh, ec); ++i) fresh = run_dir + "_" + std::to_string(i);
      log::info("fit: " + run_dir + " was taken by a run started in the same second: this one runs in " + fresh);
      run_dir = fresh;
      config::Node* hydra = result.config.find("hydra");
      if (config::Node* run = hydra != nullptr ? hydra->find("run") : nullptr; run != nullptr && run->is_map()) {
        run->set("dir", config::Node::string(run_dir));
      }
    }
  }
  std::optional<launch::RunLock> lock;              // held until this process ends
  std::optional<launch::RunLock> checkpoints_lock;  // the checkpoint directory's, when not the run's
  std::string checkpoint_dir;
  // A directory made for a lock alone goes again when the fit is refused (only while empty), with
  // the parents made for it (outputs/<date>/ of the default run directory).
  // So does one whose job never opened its log (a full disk while its .hydra files were written).
  const launch::NewDirectories made_dirs(run_dir);
  const std::vector<std::string> records = launch::job_records(result.config);
  const auto remove_made = [&] {
    std::error_code ec;
    if (checkpoints_lock && checkpoints_lock->created()) fs::remove(checkpoint_dir, ec);
    if (!lock || !lock->created()) return;
    const bool started = !records.empty() && fs::exists(fs::path(run_dir) / records.front(), ec);
    if (fs::is_empty(run_dir, ec) || !started) made_dirs.remove_if_no_results(records);
  };
  std::optional<launch::RecordSnapshot> record;
  if (args.command == "fit" && !launch::is_secondary_rank()) {
    launch::refuse_directory_inside_run(run_dir, "hydra.run.dir");
    lock.emplace(run_dir);
    const launch::CheckpointDirectory checkpoints = launch::job_checkpoint_directory(result.config, run_dir, ctx);
    checkpoint_dir = checkpoints.path;
    try {
      if (!same_place(checkpoints.path, run_dir)) {
        checkpoints_lock.emplace(checkpoints.path, checkpoints.key, /*checkpoint_directory=*/true);
      }
      launch::refuse_sweep_directory(run_dir);
      launch::refuse_sweep_job_directory(run_dir);
      if (!resumes) {
        launch::refuse_overwriting_run(run_dir);
        launch::refuse_overwriting_checkpoints(checkpoints.path, checkpoints.key);
      } else {
        launch::verify_resume_checkpoint(result.config, run_dir, ctx);
      }
    } catch (...) {
      remove_made();
      throw;
    }
    // A fit killed while it wrote a checkpoint left the temporary file (as large as a checkpoint);
    // no other fit writes here now (the locks above), so those of processes that are gone go.
    uintmax_t abandoned_bytes = 0;
    const std::vector<std::string> abandoned = remove_abandoned_temporaries(checkpoint_dir, &abandoned_bytes);
    if (!abandoned.empty()) {
      log::info("fit: removed " + std::to_string(abandoned.size()) + " unfinished write(s) a killed process left in " +
                checkpoint_dir + " (" + std::to_string(abandoned_bytes / (uintmax_t{1} << 20)) +
                " MiB): " + abandoned.front() + (abandoned.size() > 1 ? ", ..." : ""));
    }
    if (resumes) {
      std::vector<std::string> files = launch::job_records(result.config);
      const std::string log = files.empty() ? std::string() : files.front();  // the refused attempt stays in it
      if (!files.empty()) files.erase(files.begin());
      record.emplace(run_dir, files, log, (fs::path(checkpoints.path) / "last.ckpt").string());
    }
  }
  try {
    launch::run_job(options.engine, args.command, std::move(result.config), run_dir, task_overrides_of(texts), ctx);
  } catch (...) {
    // The attempt's own error is the one thrown on; putting the record back is said beside it.
    try {
      if (record && record->restore_if_not_trained()) {
        log::info(
            "fit: the resume ended before it saved a checkpoint: the run's record (.hydra, TensorBoard) is as it "
            "was");
      }
    } catch (const Error& error) {
      log::error(std::string("fit: ") + error.what());
    }
    remove_made();  // refused by the job's own checks
    throw;
  }
  // A fit that wrote no checkpoint (trainer.enable_checkpointing=false) leaves no empty
  // checkpoints/ made for its lock, as Lightning makes none.
  std::error_code ec;
  if (checkpoints_lock && checkpoints_lock->created() && fs::is_empty(checkpoint_dir, ec)) {
    fs::remove(checkpoint_dir, ec);
  }
  return 0;
}

// One job of a planned sweep. An evaluation job takes its model, data, precision and seed from its
// own checkpoint, as a single evaluation does, in the job's directory of the sweep.
void run_record(const CliOptions& options, launch::JobRecord& record) {
  config::ResolveContext ctx;
  const std::vector<std::string> task = task_overrides_of(record.job.overrides);
  if (launch::is_evaluation_command(record.command)) {
    launch::EvaluationPlan plan = launch::plan_evaluation(record.command, std::move(record.config),
                                                          config::parse_overrides(record.job.overrides), ctx, true);
    launch::run_job(options.engine, record.command, std::move(plan.config), record.job.run_dir, task, ctx, plan.notes);
    return;
  }
  launch::run_job(options.engine, record.command, std::move(record.config), record.job.run_dir, task, ctx);
}

// `<exe> sweep run-job DIR N`: job N of a planned sweep, in this process.
int run_planned_job(const CliOptions& options, const std::string& sweep_dir, int number) {
  if (launch::is_secondary_rank()) {  // rank 1+ of a data-parallel sweep job: the job's status is rank 0's to write
    launch::JobRecord record = launch::read_job_record(sweep_dir, number);
    run_record(options, record);
    return 0;
  }
  return launch::run_sweep_job(sweep_dir, number, [&](launch::JobRecord& record) { run_record(options, record); });
}

// Before the local launchers start job processes: load the engine once here, so each job is a
// fork of this process with LibTorch already mapped (launcher.h, set_in_process_job). SLURM runs
// its jobs elsewhere; an engine that cannot load leaves the fork + exec path, where each job
// reports the error itself.
void prepare_in_process_jobs(const CliOptions& options, const launch::SweepPlan& plan) {
  const config::Node* target = plan.launcher.is_map() ? plan.launcher.find("_target_") : nullptr;
  if (target != nullptr && target->is_string() && target->as_string().find("Slurm") != std::string::npos) return;
  try {
    (void)launch::process_engine(options.engine);
  } catch (const std::exception&) {
    return;
  }
  launch::set_in_process_job(
      [&options](const std::string& sweep_dir, int number) { return run_planned_job(options, sweep_dir, number); });
}

// Whether hydra.sweeper (composed with the fixed overrides) is the Optuna sweeper.
bool uses_optuna_sweeper(const config::Composer& composer, const std::vector<config::Override>& overrides) {
  std::vector<config::Override> fixed;
  for (const auto& o : overrides) {
    if (!o.is_sweep()) fixed.push_back(o);
  }
  const config::ComposeResult base = composer.compose(fixed, config::RunMode::kMultirun);
  const config::Node* sweeper = config::select(base.config, "hydra.sweeper");
  return sweeper != nullptr && launch::is_optuna_sweeper(*sweeper);
}

// hydra/sweeper=optuna: --cfg shows the fixed config under a comment listing the searched
// parameters (trials are asked for while the sweep runs); otherwise the study runs (or continues).
int run_optuna(const CliOptions& options, const CliArgs& args, const config::Composer& composer,
               const std::vector<config::Override>& overrides) {
  if (args.cfg) {
    std::vector<config::Override> fixed;
    for (const auto& o : overrides) {
      if (!o.is_sweep()) fixed.push_back(o);
    }
    std::string out = launch::optuna_sweep_outline(composer, overrides);
    out += render_config(composer.compose(fixed, config::RunMode::kMultirun).config, args);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  launch::StudyOrigin origin;
  origin.cwd = std::filesystem::current_path().string();
  origin.command = args.command;
  origin.config_path = args.config_path;
  origin.config_dir = args.config_dir;
  origin.config_name = args.config_name;
  origin.overrides = args.overrides;
  launch::SweepPlan launcher_only;
  prepare_in_process_jobs(options, launcher_only);
  return launch::run_optuna_sweep(composer, origin, overrides);
}

// -m: with --cfg, prints every job's config (nothing is written or started); otherwise plans the
// sweep to disk (every job composed and checked first) and runs it with its launcher. The same
// command on the same hydra.sweep.dir resumes the sweep (docs/sweeps.md).
int run_sweep(const CliOptions& options, const CliArgs& args, const config::Composer& composer,
              const std::vector<config::Override>& overrides) {
  if (uses_optuna_sweeper(composer, overrides)) return run_optuna(options, args, composer, overrides);
  if (args.cfg) {
    std::string out;
    launch::compose_sweep(
        composer, overrides, /*check_for=*/"", [&](const config::SweepJob& job, config::ComposeResult&& result) {
          if (job.number > 0) out += "---\n";
          out += "# job " + std::to_string(job.number) + ": " + join_words(task_overrides_of(job.overrides)) + "\n";
          out += render_config(std::move(result.config), args);
        });
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  launch::ComposedSweep sweep = launch::plan_sweep(composer, args.command, overrides);
  if (sweep.plan.jobs.empty()) {
    std::cerr << "The sweep has no jobs.\n";
    return 0;
  }
  // A directory named by the time (Hydra's multirun/<date>/<time>) that another sweep started in
  // the same second took: this sweep gets <time>_1 (_2, ...), as a fit does, not a refusal.
  const config::Node* dir_node = config::select(sweep.configs.front(), "hydra.sweep.dir");
  const bool time_named =
      dir_node != nullptr && dir_node->is_string() && dir_node->as_string().find("${now:") != std::string::npos;
  const std::string planned_dir = sweep.plan.sweep_dir;
  auto move_on = [&] {
    std::error_code ec;
    std::string fresh;
    for (int i = 1; fresh.empty() || fs::exists(fresh, ec); ++i) fresh = planned_dir + "_" + std::to_string(i);
    std::cerr << "[sweep] " << planned_dir << " was taken by a sweep started in the same second: this one runs in "
              << fresh << std::endl;
    launch::move_sweep(sweep, fresh);
  };
  std::error_code taken_ec;
  if (time_named && fs::exists(sweep.plan.sweep_dir, taken_ec)) move_on();
  // One sweep at a time in a directory (launch/sweep_lock.h), from before the plan on disk is
  // read; a new sweep refused by the checks below leaves no directory behind.
  std::optional<launch::NewDirectories> made_dirs;
  std::unique_ptr<launch::SweepLock> lock;
  for (int attempt = 0; !lock; ++attempt) {
    made_dirs.emplace(sweep.plan.sweep_dir);
    try {
      lock = std::make_unique<launch::SweepLock>(sweep.plan.sweep_dir);
    } catch (const Error&) {
      std::error_code ec;
      if (!time_named || attempt >= 8 || !fs::exists(sweep.plan.sweep_dir, ec)) throw;
      move_on();  // the other sweep locked it between the look and the lock
    }
  }
  const launch::NewDirectories& made = *made_dirs;
  launch::SweepPlan to_run;
  try {
    if (launch::has_sweep_plan(sweep.plan.sweep_dir)) {
      to_run = launch::read_sweep_plan(sweep.plan.sweep_dir);
      const std::vector<std::string> differences = launch::plan_differences(to_run, sweep.plan);
      if (!differences.empty()) {
        std::string listed;
        for (size_t i = 0; i < differences.size() && i < 20; ++i) listed += "\n  " + differences[i];
        if (differences.size() > 20) listed += "\n  ... and " + std::to_string(differences.size() - 20) + " more";
        throw Error("hydra.sweep.dir=" + sweep.plan.sweep_dir,
                    "this directory holds a sweep with a different job list; nothing was run:" + listed,
                    "\nResume it with the command that planned it (or trainer sweep resume " + sweep.plan.sweep_dir +
                        "), or give this sweep a new hydra.sweep.dir.");
      }
      // A config file edited since the plan: its jobs would run the config they were planned with
      // (the plan is what a resume runs), without a word.
      if (const std::vector<std::string> changes = launch::config_changes(sweep); !changes.empty()) {
        std::string listed;
        for (const std::string& line : changes) listed += "\n  " + line;
        throw Error("hydra.sweep.dir=" + sweep.plan.sweep_dir,
                    "this directory holds this sweep, planned with other config files: its jobs run the configs "
                    "they were planned with, not the ones composed now; nothing was run:" +
                        listed,
                    "\nResume it as planned with trainer sweep resume " + sweep.plan.sweep_dir +
                        ", or run the new configs as a new sweep with another hydra.sweep.dir.");
      }
      to_run.launcher = sweep.plan.launcher;  // this command's launcher settings (n_jobs, fail_fast)
    } else {
      launch::refuse_overwriting_checkpoints(sweep);
      launch::write_sweep_plan(sweep);
      to_run = sweep.plan;
    }
  } catch (...) {
    lock.reset();
    made.remove_if_no_results({launch::SweepLock::kRelativePath});
    throw;
  }
  prepare_in_process_jobs(options, to_run);
  return launch::run_sweep_plan(to_run);
}

int run(const CliOptions& options, const CliArgs& args);

// `trainer sweep --help`, also after an action.
void print_sweep_help(const CliArgs& args) {
  std::cout << "Usage: " << args.program << " sweep resume DIR\n"
            << "       " << args.program << " sweep summary DIR\n\n"
            << "DIR is a sweep directory: the hydra.sweep.dir of a `" << args.program << " fit -m ...` run.\n"
            << "  resume   run the jobs of the sweep that have not ended well (failed, interrupted, never\n"
            << "           started), each with the config it was planned with; an interrupted job continues\n"
            << "           from its last.ckpt. Refused while a job of the sweep still runs.\n"
            << "  summary  print the sweep's summary table (and write sweep_summary.md and .csv again)\n\n"
            << "Neither takes overrides or flags: a sweep keeps the jobs it planned. To change them, start a\n"
            << "new sweep; a job's config is DIR/<job>/.hydra/config.yaml. See docs/sweeps.md.\n";
}

// What `trainer sweep resume|summary DIR` was given beyond DIR: each is refused, as a resume keeps
// the jobs it planned (an override would silently not apply, --cfg would run the jobs).
void refuse_sweep_extras(const CliArgs& args) {
  std::vector<std::string> extras = args.overrides;
  if (args.cfg) extras.push_back("--cfg " + *args.cfg);
  if (args.info) extras.push_back("--info");
  if (args.resolve) extras.push_back("--resolve");
  if (args.package) extras.push_back("--package");
  if (args.multirun) extras.push_back("--multirun");
  if (args.config_path) extras.push_back("--config-path");
  if (args.config_name) extras.push_back("--config-name");
  if (args.config_dir) extras.push_back("--config-dir");
  if (extras.empty()) return;
  std::string listed;
  for (const std::string& extra : extras) listed += (listed.empty() ? "'" : ", '") + extra + "'";
  throw Error(
      "command line",
      "trainer sweep " + args.sweep_action + " takes a sweep directory and nothing else, but was also given " + listed,
      "Run `trainer sweep " + args.sweep_action + " " + args.sweep_dir +
          "` alone: a sweep keeps the jobs it planned. To change them, start a new sweep (trainer fit -m "
          "...); a job's config is " +
          args.sweep_dir + "/<job>/.hydra/config.yaml.");
}

// A grid sweep's jobs read their relative paths (data.root=fm, a TorchScript model.path) where
// the sweep was planned, as they did when it ran: `trainer sweep resume DIR` run from elsewhere
// goes there first (its job 0's hydra.runtime.cwd), as an Optuna study's resume does.
void enter_planning_directory(const launch::SweepPlan& plan) {
  if (plan.jobs.empty()) return;
  const launch::JobRecord record = launch::read_job_record(plan.sweep_dir, plan.jobs.front().number);
  const config::Node* cwd = config::select(record.config, "hydra.runtime.cwd");
  if (cwd == nullptr || !cwd->is_string() || cwd->as_string().empty()) return;
  std::error_code ec;
  if (std::filesystem::equivalent(cwd->as_string(), std::filesystem::current_path(ec), ec)) return;
  std::filesystem::current_path(cwd->as_string(), ec);
  if (ec) {
    log::warning("sweep resume: the sweep was planned in " + cwd->as_string() + ", which cannot be entered (" +
                 ec.message() + "); its jobs read relative paths from " + std::filesystem::current_path().string());
    return;
  }
  log::info("sweep resume: in " + cwd->as_string() +
            ", where the sweep was planned (its jobs read relative paths "
            "from there)");
}

// `trainer sweep resume|summary|run-job`.
int run_sweep_command(const CliOptions& options, const CliArgs& args) {
  if (args.help) {
    print_sweep_help(args);
    return 0;
  }
  if (args.sweep_action != "run-job") refuse_sweep_extras(args);
  if (args.sweep_action == "resume") {
    if (std::optional<launch::StudyOrigin> origin = launch::optuna_study_origin(args.sweep_dir)) {
      // An Optuna study composes new trials: its command runs again where it first ran.
      std::error_code ec;
      std::filesystem::current_path(origin->cwd, ec);
      if (ec) {
        throw Error(args.sweep_dir,
                    "the study's command ran in " + origin->cwd + ", which cannot be entered (" + ec.message() + ")",
                    "Run the command that started the study again from where its config files are.");
      }
      CliArgs again;
      again.command = origin->command;
      again.config_path = origin->config_path;
      again.config_dir = origin->config_dir;
      again.config_name = origin->config_name;
      again.overrides = origin->overrides;
      again.multirun = true;
      again.program = args.program;
      std::cerr << "[optuna] continuing the study of " << args.sweep_dir << " in " << origin->cwd << std::endl;
      return run(options, again);
    }
    if (!launch::has_sweep_plan(args.sweep_dir)) return launch::resume_sweep(args.sweep_dir);  // its error
    const std::string sweep_dir = std::filesystem::absolute(args.sweep_dir).lexically_normal().string();
    const launch::SweepPlan plan = launch::read_sweep_plan(sweep_dir);  // a moved sweep's error first
    enter_planning_directory(plan);
    const launch::SweepLock lock(sweep_dir);
    prepare_in_process_jobs(options, plan);
    return launch::run_sweep_plan(plan);
  }
  if (args.sweep_action == "summary") {
    std::cout << launch::sweep_summary_text(args.sweep_dir);
    return 0;
  }
  return run_planned_job(options, args.sweep_dir, args.sweep_job);
}

// A run or a multirun, as Hydra 1.3 decides: hydra.mode as the config and the overrides set it
// (-m wins over RUN, with Hydra's warning), else -m. A run (not --cfg) records the mode it chose
// as Hydra does, by appending the override hydra.mode=RUN|MULTIRUN when the config left it unset.
config::RunMode run_mode(const config::Composer& composer, const CliArgs& args,
                         std::vector<config::Override>& overrides) {
  const std::optional<std::string> configured = composer.configured_mode(overrides);
  if (configured && *configured != "RUN" && *configured != "MULTIRUN") {
    throw Error("hydra.mode", "Invalid value '" + *configured + "', expected one of [RUN, MULTIRUN]",
                "Set hydra.mode=RUN or hydra.mode=MULTIRUN (or leave it unset and pass -m for a multirun).");
  }
  const bool multirun = args.multirun || configured == std::optional<std::string>("MULTIRUN");
  bool record = !configured && !args.cfg;
  if (args.multirun && configured == std::optional<std::string>("RUN")) {
    // Under -m --cfg too: the jobs listed are a multirun's, whose ${hydra:mode} is MULTIRUN.
    log::warning("Running with --multirun, overriding with `hydra.mode=MULTIRUN`.");
    record = true;
  }
  if (record) {
    overrides.push_back(config::parse_override(multirun ? "hydra.mode=MULTIRUN" : "hydra.mode=RUN"));
  }
  return multirun ? config::RunMode::kMultirun : config::RunMode::kRun;
}

// Hydra's search path, with the program's defaults: its primary tree when --config-path is not
// given, and its own config directories last.
std::vector<config::SearchPathEntry> search_path_for(const CliOptions& options, const CliArgs& args) {
  std::optional<std::string> primary = args.config_path;
  std::error_code ec;
  if (!primary && options.default_config_path) {
    if (!fs::is_directory(*options.default_config_path, ec)) {
      throw Error("config directory " + *options.default_config_path,
                  "the program's primary config tree '" + *options.default_config_path + "' not found",
                  "Reinstall trainer (cmake --install), or pass the tree with --config-path.");
    }
    primary = options.default_config_path;
  }
  std::vector<config::SearchPathEntry> path = launch::make_search_path(primary, args.config_dir);
  for (const std::string& dir : options.config_dirs) {
    const fs::path absolute = fs::absolute(dir, ec);
    if (!fs::is_directory(absolute, ec)) {
      throw Error("config directory " + dir, "the program's config directory '" + absolute.string() + "' not found",
                  "Pass an existing directory in trainer::CliOptions::config_dirs.");
    }
    path.push_back({"app", "file://" + fs::canonical(absolute, ec).string()});
  }
  return path;
}

// --hydra-help: Hydra composes no primary config for it, only the hydra node and the overrides;
// the groups listed are those of the search path.
int print_hydra_help(const CliOptions& options, const CliArgs& args) {
  std::vector<config::Override> overrides;
  for (config::Override& o : config::parse_overrides(args.overrides)) {
    if (!o.is_sweep()) overrides.push_back(std::move(o));
  }
  const std::vector<config::SearchPathEntry> path = search_path_for(options, args);
  config::ComposerOptions listing;
  listing.search_path = path;
  config::ComposerOptions composing;
  composing.search_path = launch::with_hydra_searchpath(path, "", overrides);
  const config::ComposeResult result = config::Composer(std::move(composing)).compose(overrides, config::RunMode::kRun);
  std::cout << launch::hydra_help_text(config::Composer(std::move(listing)), result.config, args.program);
  return 0;
}

// -sc install|uninstall|query=SHELL, as Hydra's shell_completion: exactly one of the three.
int run_shell_completion(const CliOptions& options, const CliArgs& args) {
  std::optional<std::pair<std::string, std::string>> request;  // {install|uninstall|query, shell}
  int requests = 0;
  for (const std::string& text : args.overrides) {
    const size_t eq = text.find('=');
    const std::string key = text.substr(0, eq);
    if (key != "install" && key != "uninstall" && key != "query") continue;
    ++requests;
    request = std::make_pair(key, eq == std::string::npos ? std::string() : text.substr(eq + 1));
  }
  const std::string fix = "Use install=bash|zsh|fish to print the script that sets completion up (eval \"$(" +
                          args.program + " fit -sc install=bash)\", or " + args.program +
                          " fit -sc install=fish | source), uninstall=SHELL for the one that removes it.";
  if (requests != 1) {
    throw Error("--shell-completion", "Expecting one subcommand from ['install', 'uninstall', 'query'] to be set", fix);
  }
  const std::optional<launch::Shell> shell = launch::shell_named(request->second);
  if (!shell) {
    throw Error("--shell-completion " + request->first + "=" + request->second,
                "No completion plugin for '" + request->second + "' found, available : bash, fish, zsh", fix);
  }
  if (request->first == "install") {
    std::cout << launch::completion_install_script(*shell, args.program);
    return 0;
  }
  if (request->first == "uninstall") {
    std::cout << launch::completion_uninstall_script(*shell, args.program);
    return 0;
  }
  const char* line = std::getenv("COMP_LINE");
  if (line == nullptr) {
    throw Error("--shell-completion query=" + request->second, "COMP_LINE is not set",
                "query is what the installed completion function runs, with the line in COMP_LINE.");
  }
  std::string typed = line;
  // Up to the cursor (bash gives COMP_POINT; fish hands over the line up to it).
  if (const char* point = std::getenv("COMP_POINT"); point != nullptr && point[0] != '\0') {
    char* end = nullptr;
    const unsigned long at = std::strtoul(point, &end, 10);
    if (*end == '\0' && at < typed.size()) typed.resize(at);
  }
  log::set_level(log::Level::kError);  // warnings would land in the middle of the user's line
  launch::CompletionTree tree{args.config_path, args.config_name, args.config_dir};
  auto composer_for = [&options](const launch::CompletionTree& line_tree,
                                 const std::vector<config::Override>& overrides) {
    CliArgs line_args;
    line_args.config_path = line_tree.config_path;
    line_args.config_dir = line_tree.config_dir;
    config::ComposerOptions composer_options;
    composer_options.config_name = line_tree.config_name.value_or("config");
    composer_options.search_path =
        launch::with_hydra_searchpath(search_path_for(options, line_args), composer_options.config_name, overrides);
    return config::Composer(std::move(composer_options));
  };
  std::cout << launch::completion_reply(*shell, launch::completion_candidates(typed, tree, composer_for));
  return 0;
}

int run(const CliOptions& options, const CliArgs& args) {
  launch::use_engine(options.engine);
  if (args.version) {
    std::cout << "trainer " << TRAINER_VERSION << " (LibTorch: " << TRAINER_LIBTORCH_SOURCE
              << (options.engine != nullptr ? ", engine linked in" : "") << ")\n";
    try {
      std::cout << launch::process_engine(options.engine).describe() << "\n";
    } catch (const Error& error) {
      std::cout << "engine: " << error.what() << "\n";
    }
    return 0;
  }
  // As Hydra: one of them (trainer's -m --cfg, which lists a sweep's jobs, is the exception).
  if (args.shell_completion || args.run || args.info) {
    const bool other = args.cfg || args.multirun || (args.info && (args.run || args.shell_completion)) ||
                       (args.shell_completion && args.run);
    if (other) {
      throw Error("command line",
                  "Only one of --run, --multirun, --cfg, --info and --shell-completion can be specified",
                  "Drop all but one of them.");
    }
  }
  if (args.shell_completion) return run_shell_completion(options, args);
  if (args.hydra_help) return print_hydra_help(options, args);
  if (args.command == "sweep") return run_sweep_command(options, args);
  if (args.command.empty() && !args.help) {
    throw Error(
        "command line", "no subcommand given",
        "Use trainer fit|validate|test|predict|export|tune batch_size|data pack [overrides...]; trainer --help lists "
        "the config "
        "groups.");
  }
  if (args.resolve && !args.cfg && !args.help) {
    throw Error("--resolve", "--resolve only works together with --cfg or --help", "Add --cfg job (or hydra, all).");
  }
  std::vector<config::Override> overrides = config::parse_overrides(args.overrides);
  if (!launch::is_secondary_rank()) {  // the command line's, said once: rank 0 has the same
    for (const std::string& warning : config::repeated_override_warnings(overrides)) log::warning(warning);
  }
  config::ComposerOptions composer_options;
  composer_options.config_name = args.config_name.value_or("config");
  composer_options.search_path =
      launch::with_hydra_searchpath(search_path_for(options, args), composer_options.config_name, overrides);
  config::Composer composer(std::move(composer_options));

  if (args.help) {
    std::vector<config::Override> fixed;
    for (const auto& o : overrides) {
      if (!o.is_sweep()) fixed.push_back(o);
    }
    std::cout << help_text(composer, composer.compose(fixed, config::RunMode::kRun), args);
    return 0;
  }
  if (args.info) {
    std::cout << info_text(composer, composer.compose(overrides, config::RunMode::kRun), *args.info);
    return 0;
  }
  if (run_mode(composer, args, overrides) == config::RunMode::kMultirun) {
    return run_sweep(options, args, composer, overrides);
  }
  if (args.cfg) {
    config::ComposeResult result =
        launch::compose_evaluation(composer, args.command, overrides, config::RunMode::kShow);
    const config::Node* ckpt = result.config.find("ckpt_path");
    if (launch::is_evaluation_command(args.command) && ckpt != nullptr && !ckpt->is_null()) {
      // What the evaluation would run: the checkpoint's model, data, precision and seed (nothing
      // is written; the directory shown is the one given).
      config::ResolveContext ctx;
      ctx.hydra = result.config.find("hydra");
      launch::EvaluationPlan plan =
          launch::plan_evaluation(args.command, std::move(result.config), overrides, ctx, true);
      std::cout << render_config(std::move(plan.config), args);
      return 0;
    }
    std::cout << render_config(std::move(result.config), args);
    return 0;
  }
  return run_single_job(options, args, composer, overrides);
}

}  // namespace
}  // namespace trainer::app

namespace trainer {

int run_cli(int argc, char** argv, const CliOptions& options) {
  // A file that reaches the size limit (`ulimit -f`) fails its write with EFBIG, which names the file
  // and says to free space, instead of SIGXFSZ ending the process without a word.
  ::signal(SIGXFSZ, SIG_IGN);
  int exit_code = 0;
  std::optional<app::CliArgs> args = app::parse_cli(argc, argv, exit_code);
  if (!args) return exit_code;
  try {
    return app::run(options, *args);
  } catch (const std::exception& error) {
    std::cerr << "Error: " << error.what() << "\n";
    // The run's log (when its job set one) ends with why it stopped, as the console does.
    log::write_file_only(log::Level::kError, std::string("Error: ") + error.what());
    return 1;
  }
}

int run_cli(int argc, char** argv, const EngineEntry* engine, const char* installed_config_dir) {
  CliOptions options;
  options.engine = engine;
  if (installed_config_dir != nullptr) options.default_config_path = installed_config_dir;
  return run_cli(argc, argv, options);
}

}  // namespace trainer
