// The trainer command line: wires the flags to the composer, the sweeper and the launcher.
// Everything here runs without LibTorch; the engine runs a job through the entry points it is
// given (in-process) or from libtrainer_engine.so, loaded when the first job runs.
#include "trainer/cli/run_cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "cli_args.h"
#include "trainer/config/composer.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/override.h"
#include "trainer/config/python_str.h"
#include "trainer/config/sweeper.h"
#include "trainer/config/yaml.h"
#include "trainer/launch/config_locations.h"
#include "trainer/launch/engine_loader.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/schema_check.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace fs = std::filesystem;
using trainer::Error;
using trainer::config::Node;

namespace trainer::app {
namespace {

std::vector<config::Override> parse_overrides(const std::vector<std::string>& texts) {
  std::vector<config::Override> parsed;
  std::string problems;
  for (const std::string& text : texts) {
    try {
      parsed.push_back(config::parse_override(text));
    } catch (const Error& error) {
      problems += (problems.empty() ? "" : "\n") + std::string(error.what());
    }
  }
  if (!problems.empty()) throw Error("", problems);
  return parsed;
}

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

std::string render_config(Node config, const CliArgs& args) {
  // As Hydra's show_cfg: only the part shown is resolved; ${hydra:...} reads the hydra node.
  Node hydra;
  Node shown = config_view_for(std::move(config), args.cfg.value_or("job"), hydra);
  config::ResolveContext ctx;
  ctx.hydra = &hydra;
  if (args.resolve) {
    config::ResolveContext strict = ctx;
    strict.omegaconf_resolve = true;  // as OmegaConf.resolve, which Hydra's --resolve runs
    config::resolve_all(shown, strict);
  }
  std::string package = args.package.value_or("");
  if (package == "_global_") package.clear();
  if (package.empty()) return config::to_yaml(shown);
  // As OmegaConf.select in Hydra's show_cfg: the selected value is resolved (a scalar, or an
  // interpolation to a container), and null or ??? counts as not found.
  const Node* selected = config::select(shown, package);
  Node value;
  if (selected != nullptr && (selected->is_scalar() || selected->is_interpolation())) {
    value = config::resolve_path(shown, package, ctx);
    selected = &value;
  }
  if (selected == nullptr || selected->is_null() || selected->is_missing()) {
    throw Error("--package " + package, "package '" + package + "' not found in config",
                "Name a key of the composed config, e.g. --package model.");
  }
  if (selected->is_scalar()) return config::python_str(*selected) + "\n";
  return "# @package " + package + "\n" + config::to_yaml(*selected);
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string table(const std::string& title, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out = title + "\n" + std::string(title.size(), '*') + "\n";
  size_t total = 1;
  for (size_t w : widths) total += w + 3;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (size_t i = 0; i < rows[r].size(); ++i) out += " " + pad(rows[r][i], widths[i]) + " |";
    out += "\n";
    if (r == 0) out += std::string(total, '-') + "\n";
  }
  return out;
}

std::string info_text(const config::Composer& composer, const config::ComposeResult& result,
                      const std::string& kind) {
  std::string out;
  auto want = [&](const char* what) { return kind == "all" || kind == what; };
  if (want("searchpath")) {
    std::vector<std::vector<std::string>> rows = {{"Provider", "Search path"}};
    for (const auto& entry : composer.search_path()) rows.push_back({entry.provider, entry.path});
    out += table("Config search path", rows) + "\n";
  }
  if (want("defaults-tree")) out += "Defaults Tree\n*************\n" + result.defaults_tree + "\n";
  if (want("defaults")) {
    std::vector<std::vector<std::string>> rows = {{"Config path", "Package", "_self_", "Parent"}};
    for (const auto& entry : result.defaults) {
      rows.push_back({entry.config_path, entry.package, entry.is_self ? "True" : "False",
                      entry.parent});
    }
    out += table("Defaults List", rows) + "\n";
  }
  if (want("config")) {
    out += "Config\n******\n" + config::to_yaml(without_key(result.config, "hydra")) + "\n";
  }
  return out;
}

std::string help_text(const config::Composer& composer, const config::ComposeResult& result,
                      const CliArgs& args) {
  std::string out =
      "trainer: train LibTorch models from Hydra-style configs.\n\n"
      "Usage: trainer fit|validate|test|export [flags] [overrides...]\n"
      "       trainer fit -m key=a,b other=1,2     (a sweep: one job per combination)\n\n"
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
  out += "\n== Flags ==\n" + args.usage;
  return out;
}

// The engine for this process, made when the first job runs (or --version asks for it).
const launch::EngineLoader& engine_for(const CliOptions& options) {
  static const std::unique_ptr<launch::EngineLoader> engine =
      options.engine != nullptr ? std::make_unique<launch::EngineLoader>(*options.engine)
                                : std::make_unique<launch::EngineLoader>();
  return *engine;
}

std::string resolve_string(const Node& config, const std::string& path,
                           const config::ResolveContext& ctx) {
  Node value = config::resolve_path(config, path, ctx);
  if (value.type() == config::NodeType::kInt) return value.int_text();
  if (!value.is_string()) {
    throw Error(path, std::string("expected a path string, got ") + config::type_name(value.type()));
  }
  return value.as_string();
}

// Runs one composed job in `run_dir`: records hydra.runtime, writes the .hydra files and the log,
// checks the schema, resolves the job config and hands it to the engine. Throws on failure.
void run_job(const CliOptions& options, const std::string& command, Node config, const std::string& run_dir,
             const std::vector<std::string>& task_overrides, const config::ResolveContext& base_ctx) {
  Node* hydra = config.find("hydra");
  if (hydra == nullptr) throw Error("", "internal: the composed config has no hydra node");
  config::ResolveContext ctx = base_ctx;
  ctx.hydra = hydra;
  if (Node* runtime = hydra->find("runtime"); runtime != nullptr && runtime->is_map()) {
    runtime->set("output_dir", Node::string(run_dir));
    runtime->set("cwd", Node::string(fs::current_path().string()));
  }
  Node job_config = without_key(config, "hydra");
  launch::check_job_schema(job_config);
  const Node* subdir = config::select(*hydra, "output_subdir");
  std::string output_subdir = subdir != nullptr && subdir->is_string() ? subdir->as_string() : "";
  launch::write_job_files(run_dir, output_subdir, job_config, *hydra, task_overrides);

  std::string job_name = "trainer";
  if (const Node* name = config::select(*hydra, "job.name"); name && name->is_string()) {
    job_name = name->as_string();
  }
  const std::string log_file = (fs::path(run_dir) / (job_name + ".log")).string();
  log::set_file(log_file);
  if (const Node* verbose = config::select(*hydra, "verbose"); verbose && !verbose->is_null() &&
                                                                !(verbose->type() == config::NodeType::kBool &&
                                                                  !verbose->as_bool())) {
    log::set_level(log::Level::kDebug);
  }
  // hydra.job.chdir=true runs the job inside its output directory, as Hydra does.
  const fs::path start_dir = fs::current_path();
  const Node* chdir = config::select(*hydra, "job.chdir");
  const bool change_dir = chdir && chdir->type() == config::NodeType::kBool && chdir->as_bool();
  if (change_dir) fs::current_path(run_dir);

  Node resolved_job = job_config;
  config::resolve_all(resolved_job, ctx);
  std::string yaml = config::to_yaml(resolved_job);
  log::info("output directory: " + run_dir);
  log::debug("job config:\n" + yaml);

  std::string message;
  int code = engine_for(options).run(command, yaml, run_dir, log_file, message);
  if (change_dir) fs::current_path(start_dir);
  if (code != 0) throw Error("", message.empty() ? "the job failed" : message);
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
  config::ComposeResult result = composer.compose(overrides, config::RunMode::kRun);
  ctx.hydra = result.config.find("hydra");
  const std::string run_dir = fs::absolute(resolve_string(result.config, "hydra.run.dir", ctx)).string();
  std::vector<std::string> texts;
  for (const auto& o : overrides) texts.push_back(o.text);
  run_job(options, args.command, std::move(result.config), run_dir, task_overrides_of(texts), ctx);
  return 0;
}

// Composes every job of a sweep (and so validates it) before anything runs, handing each to
// `visit` as it is composed; errors of all bad jobs are reported together at the end.
void plan_sweep(const config::Composer& composer, const std::vector<config::Override>& overrides,
                const std::function<void(const config::SweepJob&, config::ComposeResult&&)>& visit) {
  std::vector<config::Override> fixed;
  for (const auto& o : overrides) {
    if (!o.is_sweep()) fixed.push_back(o);
  }
  config::ComposeResult base = composer.compose(fixed, config::RunMode::kMultirun);
  std::vector<std::pair<std::string, std::string>> params;
  if (const Node* node = config::select(base.config, "hydra.sweeper.params"); node && node->is_map()) {
    for (const auto& entry : node->entries()) {
      std::string text = entry.value.is_string() ? entry.value.as_string() : config::python_str(entry.value);
      params.emplace_back(entry.key, text);
    }
  }
  auto lookup = [&composer](const std::string& group) { return composer.group_options(group); };
  const Node* sweeper = config::select(base.config, "hydra.sweeper");
  std::vector<config::SweepJob> jobs =
      config::make_sweep_jobs(sweeper ? *sweeper : Node(), overrides, params, lookup);

  std::string problems;
  int bad = 0;
  for (const auto& job : jobs) {
    try {
      std::vector<config::Override> parsed = parse_overrides(job.overrides);
      config::ComposeResult result = composer.compose(parsed, config::RunMode::kMultirun);
      if (Node* num = config::select(result.config, "hydra.job"); num && num->is_map()) {
        num->set("num", Node::integer(job.number));
        num->set("id", Node::string(std::to_string(job.number)));
      }
      if (bad == 0) visit(job, std::move(result));
    } catch (const Error& error) {
      if (++bad <= 20) problems += "\n  job " + std::to_string(job.number) + ": " + error.what();
    }
  }
  if (bad > 0) {
    throw Error("", std::to_string(bad) + " of " + std::to_string(jobs.size()) +
                        " sweep jobs do not compose; nothing was run:" + problems,
                "Fix the overrides or config files named above.");
  }
}

struct PlannedJob {
  config::SweepJob job;
  Node config;
};

// -m: with --cfg, prints every job's config; otherwise runs the jobs one after another (Hydra's
// basic launcher) in hydra.sweep.dir/hydra.sweep.subdir, after all of them composed. A failing job
// is recorded and the others go on (hydra.launcher.fail_fast=true stops at the first failure); the
// sweep exits non-zero if any job failed.
int run_sweep(const CliOptions& options, const CliArgs& args, const config::Composer& composer,
              const std::vector<config::Override>& overrides) {
  std::string out;
  std::vector<PlannedJob> planned;
  plan_sweep(composer, overrides, [&](const config::SweepJob& job, config::ComposeResult&& result) {
    if (!args.cfg) {
      planned.push_back({job, std::move(result.config)});
      return;
    }
    if (job.number > 0) out += "---\n";
    out += "# job " + std::to_string(job.number) + ": " + join_words(task_overrides_of(job.overrides)) + "\n";
    out += render_config(std::move(result.config), args);
  });
  if (args.cfg) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  if (planned.empty()) {
    std::cerr << "The sweep has no jobs.\n";
    return 0;
  }
  config::ResolveContext ctx;  // one timestamp for the whole sweep
  ctx.hydra = planned.front().config.find("hydra");
  const fs::path sweep_dir = fs::absolute(resolve_string(planned.front().config, "hydra.sweep.dir", ctx));
  fs::create_directories(sweep_dir);
  launch::write_file_atomically((sweep_dir / "multirun.yaml").string(), config::to_yaml(planned.front().config));
  const Node* fail_fast_node = config::select(planned.front().config, "hydra.launcher.fail_fast");
  const bool fail_fast = fail_fast_node && fail_fast_node->type() == config::NodeType::kBool && fail_fast_node->as_bool();

  std::cerr << "Launching " << planned.size() << " jobs locally, one at a time, in " << sweep_dir.string() << "\n";
  int failed = 0;
  const auto sweep_start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < planned.size(); ++i) {
    PlannedJob& job = planned[i];
    ctx.hydra = job.config.find("hydra");
    const std::string subdir = resolve_string(job.config, "hydra.sweep.subdir", ctx);
    const std::string run_dir = (sweep_dir / subdir).string();
    const std::string task = join_words(task_overrides_of(job.job.overrides));
    std::cerr << "  #" << job.job.number << " : " << task << "\n";
    const auto start = std::chrono::steady_clock::now();
    std::string status = "done";
    try {
      run_job(options, args.command, std::move(job.config), run_dir, task_overrides_of(job.job.overrides), ctx);
    } catch (const Error& error) {
      status = "failed";
      ++failed;
      std::cerr << "Error in job " << job.job.number << ": " << error.what() << "\n";
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count();
    const double eta = elapsed / static_cast<double>(i + 1) * static_cast<double>(planned.size() - i - 1);
    char line[160];
    std::snprintf(line, sizeof(line), "  #%d %s in %.1f s (%zu/%zu, ETA %.0f s)\n", job.job.number,
                  status.c_str(), seconds, i + 1, planned.size(), eta);
    std::cerr << line;
    if (failed > 0 && fail_fast) {
      std::cerr << "Stopping at the first failure (hydra.launcher.fail_fast=true).\n";
      break;
    }
  }
  if (failed > 0) {
    throw Error("-m", std::to_string(failed) + " of " + std::to_string(planned.size()) + " jobs failed",
                "See each job's error above and its log in " + sweep_dir.string() + ".");
  }
  return 0;
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

int run(const CliOptions& options, const CliArgs& args) {
  if (args.version) {
    std::cout << "trainer " << TRAINER_VERSION << " (LibTorch: " << TRAINER_LIBTORCH_SOURCE
              << (options.engine != nullptr ? ", engine linked in" : "") << ")\n";
    try {
      std::cout << engine_for(options).describe() << "\n";
    } catch (const Error& error) {
      std::cout << "engine: " << error.what() << "\n";
    }
    return 0;
  }
  if (args.command.empty() && !args.help) {
    throw Error("command line", "no subcommand given",
                "Use trainer fit|validate|test|export [overrides...]; trainer --help lists the config groups.");
  }
  if (args.resolve && !args.cfg && !args.help) {
    throw Error("--resolve", "--resolve only works together with --cfg or --help",
                "Add --cfg job (or hydra, all).");
  }
  config::ComposerOptions composer_options;
  composer_options.search_path = search_path_for(options, args);
  composer_options.config_name = args.config_name.value_or("config");
  config::Composer composer(std::move(composer_options));
  std::vector<config::Override> overrides = parse_overrides(args.overrides);

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
  if (args.multirun) return run_sweep(options, args, composer, overrides);
  if (args.cfg) {
    config::ComposeResult result = composer.compose(overrides, config::RunMode::kShow);
    std::cout << render_config(std::move(result.config), args);
    return 0;
  }
  return run_single_job(options, args, composer, overrides);
}

}  // namespace
}  // namespace trainer::app

namespace trainer {

int run_cli(int argc, char** argv, const CliOptions& options) {
  int exit_code = 0;
  std::optional<app::CliArgs> args = app::parse_cli(argc, argv, exit_code);
  if (!args) return exit_code;
  try {
    return app::run(options, *args);
  } catch (const Error& error) {
    std::cerr << "Error: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "Error: " << error.what() << "\n";
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
