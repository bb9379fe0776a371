#include "trainer/launch/sweep_planner.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "trainer/config/config_diff.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/override.h"
#include "trainer/config/python_str.h"
#include "trainer/config/sweeper.h"
#include "trainer/launch/evaluation_run.h"
#include "trainer/launch/idle_settings.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/job_warnings.h"
#include "trainer/launch/launcher.h"
#include "trainer/launch/plugin_names.h"
#include "trainer/launch/schema_check.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace fs = std::filesystem;
using trainer::config::Node;

namespace trainer::launch {
namespace {

std::string resolve_path_string(const Node& config, const std::string& path, const config::ResolveContext& ctx) {
  Node value = config::resolve_path(config, path, ctx);
  if (value.type() == config::NodeType::kInt) return value.int_text();
  if (!value.is_string()) {
    throw Error(path, std::string("expected a path string, got ") + config::type_name(value.type()));
  }
  return value.as_string();
}

// The checks a job's run makes before the engine starts: trainer's sections, then every
// interpolation resolved with the run's hydra.runtime values. Returns its settings that would
// change nothing (launch/idle_settings), which its run will log into its own trainer.log.
std::vector<IdleSetting> check_job(const Node& config, const std::string& command, const std::string& run_dir,
                                   const config::ResolveContext& base) {
  Node job_config = config;
  Node hydra = job_config.find("hydra") != nullptr ? *job_config.find("hydra") : Node::map();
  job_config.erase("hydra");
  check_job_sections(job_config, command, hydra);
  check_job_schema(job_config);
  // fit and the batch-size search read every key of their sections (an evaluation's model and
  // data come from its checkpoint).
  if (command == "fit" || command == "tune_batch_size") check_mandatory_values(job_config);
  if (Node* runtime = hydra.find("runtime"); runtime != nullptr && runtime->is_map()) {
    runtime->set("output_dir", Node::string(run_dir));
    runtime->set("cwd", Node::string(fs::current_path().string()));
  }
  config::ResolveContext ctx = base;
  ctx.hydra = &hydra;
  Node resolved = job_config;
  config::resolve_all(resolved, ctx);
  check_job_schema(resolved);  // values that came from interpolations, as the job will see them
  check_plugin_names(resolved, command);
  return idle_settings(resolved, job_config, command);
}

// A sweep's jobs run with their logs in their own directories: the warnings each would give about
// settings that change nothing are kept while the jobs are composed (each once, with the jobs it
// concerns) and said by place_jobs once the sweep passed its own checks, before anything runs.
struct PlannedWarnings {
  std::vector<std::pair<std::string, std::vector<int>>> warnings;
  size_t job_count = 0;
};

PlannedWarnings& planned_warnings() {
  static PlannedWarnings planned;
  return planned;
}

void say_planned_warnings() {
  const auto& [warnings, job_count] = planned_warnings();
  for (const auto& [text, numbers] : warnings) {
    std::string jobs;
    if (numbers.size() == job_count && job_count > 1) {
      jobs = "every job";
    } else {
      jobs = numbers.size() == 1 ? "job " : "jobs ";
      for (size_t i = 0; i < numbers.size() && i < 10; ++i) jobs += (i > 0 ? ", " : "") + std::to_string(numbers[i]);
      if (numbers.size() > 10) jobs += " and " + std::to_string(numbers.size() - 10) + " more";
    }
    log::warning("[" + jobs + "] " + text);
    note_sweep_warning(text);  // its jobs' logs say it again: not repeated as each ends
  }
  planned_warnings() = {};
}

// The checkpoint directory of each job of a fit sweep (resolved in the job's directory).
std::vector<CheckpointDirectory> checkpoint_directories(const ComposedSweep& sweep) {
  std::vector<CheckpointDirectory> directories;
  if (sweep.plan.command != "fit") return directories;
  for (size_t i = 0; i < sweep.plan.jobs.size(); ++i) {
    config::ResolveContext ctx;
    ctx.hydra = sweep.configs[i].find("hydra");
    directories.push_back(job_checkpoint_directory(sweep.configs[i], sweep.plan.jobs[i].run_dir, ctx));
  }
  return directories;
}

// Two jobs of one sweep never share a checkpoint directory: each would replace the other's
// last.ckpt, and ckpt_path=best|last of either would load the other's model.
void refuse_shared_checkpoint_directories(const ComposedSweep& sweep) {
  std::map<std::string, int> first_job;
  const std::vector<CheckpointDirectory> directories = checkpoint_directories(sweep);
  for (size_t i = 0; i < directories.size(); ++i) {
    const auto [earlier, inserted] = first_job.emplace(directories[i].path, sweep.plan.jobs[i].number);
    if (inserted) continue;
    throw Error(directories[i].key + " (checkpoint directory " + directories[i].path + ")",
                "jobs " + std::to_string(earlier->second) + " and " + std::to_string(sweep.plan.jobs[i].number) +
                    " of this sweep would write their checkpoints into the same directory: each would replace the "
                    "other's last.ckpt; nothing was run",
                "Give each job its own directory: leave callbacks.model_checkpoint.dirpath at its default "
                "(${paths.output_dir}/checkpoints, inside each job's directory), or put ${hydra:job.num} into it.");
  }
}

// The sweep's summary, ASHA and the Optuna objective read each job's <job dir>/metrics.csv. A fit
// sweep whose csv logger writes elsewhere (logger.csv.name or save_dir changed) gets a warning
// before anything runs: its summary would list every job with blank metrics.
void warn_about_metrics_elsewhere(const ComposedSweep& sweep) {
  if (sweep.plan.command != "fit" || sweep.plan.jobs.empty()) return;
  const Node& config = sweep.configs.front();
  const Node* csv = config::select(config, "logger.csv");
  if (csv == nullptr || !csv->is_map()) {
    log::warning(
        "no csv logger in this sweep (logger.csv is not set): the sweep's summary (and "
        "hydra/sweeper=optuna's objective, hydra/sweeper=asha's decisions) read each job's metrics.csv, "
        "and will show no metrics and no best job; choose logger=default (csv and TensorBoard), logger=csv "
        "or logger=many_loggers");
    return;
  }
  const std::string run_dir = sweep.plan.jobs.front().run_dir;
  Node hydra = config.find("hydra") != nullptr ? *config.find("hydra") : Node::map();
  if (Node* runtime = hydra.find("runtime"); runtime != nullptr && runtime->is_map()) {
    runtime->set("output_dir", Node::string(run_dir));
  }
  config::ResolveContext ctx;
  ctx.hydra = &hydra;
  std::string file;
  try {
    const std::string save_dir =
        csv->find("save_dir") != nullptr ? resolve_path_string(config, "logger.csv.save_dir", ctx) : run_dir;
    const std::string name =
        csv->find("name") != nullptr ? resolve_path_string(config, "logger.csv.name", ctx) : "metrics.csv";
    file = (fs::absolute(save_dir) / name).lexically_normal().string();
  } catch (const Error&) {
    return;  // the job's own checks name it
  }
  const std::string expected = (fs::path(run_dir) / "metrics.csv").lexically_normal().string();
  if (file == expected) return;
  log::warning("logger.csv writes job 0's metrics to " + file + ", not to " + expected +
               ": the sweep's summary (and hydra/sweeper=optuna's objective, hydra/sweeper=asha's decisions) read "
               "each job's metrics.csv in its directory, and will show no metrics; keep logger.csv.save_dir="
               "${paths.output_dir} and logger.csv.name=metrics.csv in a sweep");
}

}  // namespace

void refuse_overwriting_checkpoints(const ComposedSweep& sweep) {
  const std::vector<CheckpointDirectory> directories = checkpoint_directories(sweep);
  for (size_t i = 0; i < directories.size(); ++i) {
    const Node* ckpt = sweep.configs[i].find("ckpt_path");
    if (ckpt == nullptr || ckpt->is_null()) refuse_overwriting_checkpoints(directories[i].path, directories[i].key);
  }
}

void compose_sweep(const config::Composer& composer, const std::vector<config::Override>& overrides,
                   const std::string& check_for,
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
  std::vector<config::SweepJob> jobs = config::make_sweep_jobs(sweeper ? *sweeper : Node(), overrides, params, lookup);

  compose_jobs(composer, jobs, check_for, visit);
}

void compose_jobs(const config::Composer& composer, const std::vector<config::SweepJob>& jobs,
                  const std::string& check_for,
                  const std::function<void(const config::SweepJob&, config::ComposeResult&&)>& visit) {
  // Each distinct error once, with the jobs it breaks: a bad key in a config file breaks every job
  // of the sweep alike, and is one entry rather than one per job.
  std::vector<std::pair<std::string, std::vector<int>>> errors;
  auto& warnings = planned_warnings().warnings;
  warnings.clear();
  planned_warnings().job_count = jobs.size();
  int bad = 0;
  for (const auto& job : jobs) {
    try {
      std::vector<config::Override> parsed = config::parse_overrides(job.overrides);
      config::ComposeResult result = composer.compose(parsed, config::RunMode::kMultirun);
      if (Node* num = config::select(result.config, "hydra.job"); num && num->is_map()) {
        num->set("num", Node::integer(job.number));
        num->set("id", Node::string(std::to_string(job.number)));
      }
      if (!check_for.empty()) {
        for (IdleSetting& setting : check_job(result.config, check_for, "", config::ResolveContext{})) {
          if (!setting.warning) continue;
          auto same =
              std::find_if(warnings.begin(), warnings.end(), [&](const auto& w) { return w.first == setting.text; });
          if (same != warnings.end()) {
            same->second.push_back(job.number);
          } else {
            warnings.emplace_back(std::move(setting.text), std::vector<int>{job.number});
          }
        }
      }
      if (bad == 0) visit(job, std::move(result));
    } catch (const Error& error) {
      ++bad;
      const std::string message = error.what();
      auto same = std::find_if(errors.begin(), errors.end(), [&](const auto& e) { return e.first == message; });
      if (same != errors.end()) {
        same->second.push_back(job.number);
      } else {
        errors.push_back({message, {job.number}});
      }
    }
  }
  if (bad > 0) {
    // The errors that break the most jobs first; at most 20 said in full, the rest counted.
    std::stable_sort(errors.begin(), errors.end(),
                     [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    constexpr size_t kListed = 10, kSaid = 20;
    std::string problems;
    size_t said = 0, left_jobs = 0;
    for (const auto& [message, numbers] : errors) {
      if (++said > kSaid) {
        left_jobs += numbers.size();
        continue;
      }
      problems += numbers.size() == 1 ? "\n  job " : "\n  jobs ";
      for (size_t i = 0; i < numbers.size() && i < kListed; ++i) {
        problems += (i > 0 ? ", " : "") + std::to_string(numbers[i]);
      }
      if (numbers.size() > kListed) problems += " and " + std::to_string(numbers.size() - kListed) + " more";
      problems += ": " + message;
    }
    if (errors.size() > kSaid) {
      problems += "\n  and " + std::to_string(errors.size() - kSaid) + " other error(s), in " +
                  std::to_string(left_jobs) + " more job(s)";
    }
    throw Error("",
                std::to_string(bad) + " of " + std::to_string(jobs.size()) +
                    " sweep jobs are not valid; nothing was run:" + problems,
                "Fix the overrides or config files named above.");
  }
}

ComposedSweep plan_sweep(const config::Composer& composer, const std::string& command,
                         const std::vector<config::Override>& overrides) {
  ComposedSweep sweep;
  sweep.plan.command = command;
  std::vector<config::SweepJob> jobs;
  compose_sweep(composer, overrides, command, [&](const config::SweepJob& job, config::ComposeResult&& result) {
    jobs.push_back(job);
    sweep.configs.push_back(std::move(result.config));
  });
  place_jobs(sweep, jobs);
  return sweep;
}

ComposedSweep plan_jobs(const config::Composer& composer, const std::string& command,
                        const std::vector<config::SweepJob>& jobs) {
  ComposedSweep sweep;
  sweep.plan.command = command;
  compose_jobs(composer, jobs, command, [&](const config::SweepJob&, config::ComposeResult&& result) {
    sweep.configs.push_back(std::move(result.config));
  });
  place_jobs(sweep, jobs);
  return sweep;
}

std::string job_run_dir(const Node& config, const std::string& sweep_dir, config::ResolveContext ctx) {
  ctx.hydra = config.find("hydra");
  return (fs::path(sweep_dir) / resolve_path_string(config, "hydra.sweep.subdir", ctx)).lexically_normal().string();
}

void place_jobs(ComposedSweep& sweep, const std::vector<config::SweepJob>& jobs) {
  if (jobs.empty()) return;
  config::ResolveContext ctx;  // one timestamp for the whole sweep
  ctx.hydra = sweep.configs.front().find("hydra");
  const fs::path sweep_dir =
      fs::absolute(resolve_path_string(sweep.configs.front(), "hydra.sweep.dir", ctx)).lexically_normal();
  sweep.plan.sweep_dir = sweep_dir.string();
  if (!sweep.plan.sweep_dir.empty() && sweep.plan.sweep_dir.back() == '/') sweep.plan.sweep_dir.pop_back();
  if (const Node* node = config::select(sweep.configs.front(), "hydra.launcher")) sweep.plan.launcher = *node;
  check_launcher_settings(sweep.plan.launcher);
  refuse_run_directory_as_sweep(sweep.plan.sweep_dir);
  refuse_directory_inside_run(sweep.plan.sweep_dir, "hydra.sweep.dir");
  if (const Node* node = config::select(sweep.configs.front(), "hydra.sweeper")) sweep.plan.sweeper = *node;
  sweep.plan.executable = self_executable();
  for (size_t i = 0; i < jobs.size(); ++i) {
    PlannedJob planned;
    planned.number = jobs[i].number;
    planned.overrides = jobs[i].overrides;
    planned.run_dir = job_run_dir(sweep.configs[i], sweep.plan.sweep_dir, ctx);
    sweep.plan.jobs.push_back(std::move(planned));
  }
  refuse_shared_checkpoint_directories(sweep);
  warn_about_metrics_elsewhere(sweep);
  say_planned_warnings();
}

void move_sweep(ComposedSweep& sweep, const std::string& sweep_dir) {
  sweep.plan.sweep_dir = sweep_dir;
  for (size_t i = 0; i < sweep.configs.size() && i < sweep.plan.jobs.size(); ++i) {
    Node* hydra = sweep.configs[i].find("hydra");
    if (Node* sweep_node = hydra != nullptr ? hydra->find("sweep") : nullptr; sweep_node && sweep_node->is_map()) {
      sweep_node->set("dir", Node::string(sweep_dir));
    }
    sweep.plan.jobs[i].run_dir = job_run_dir(sweep.configs[i], sweep_dir);
  }
}

void write_sweep_plan(const ComposedSweep& sweep) {
  std::error_code ec;
  fs::create_directories(sweep.plan.sweep_dir, ec);
  if (ec) {
    throw Error(sweep.plan.sweep_dir, "cannot create the sweep directory: " + ec.message(),
                "Set hydra.sweep.dir to a writable place.");
  }
  // A plan cut short (a full disk) is taken back: job records without the index that lists them
  // would lie in the directory a later sweep plans into.
  size_t written = 0;
  try {
    for (; written < sweep.plan.jobs.size(); ++written) {
      write_job_record(sweep.plan.sweep_dir,
                       JobRecord{sweep.plan.command, sweep.plan.jobs[written], sweep.configs[written]});
    }
    write_plan_index(sweep.plan, sweep.configs.front());
  } catch (...) {
    for (size_t i = 0; i <= written && i < sweep.plan.jobs.size(); ++i) {
      fs::remove(job_record_path(sweep.plan.sweep_dir, sweep.plan.jobs[i].number), ec);
    }
    fs::remove(fs::path(job_record_path(sweep.plan.sweep_dir, 0)).parent_path(), ec);  // only when empty
    throw;
  }
}

std::vector<std::string> config_changes(const ComposedSweep& sweep) {
  std::vector<std::string> lines;
  constexpr size_t kMost = 10;
  for (size_t i = 0; i < sweep.plan.jobs.size() && lines.size() < kMost; ++i) {
    Node planned = read_job_record(sweep.plan.sweep_dir, sweep.plan.jobs[i].number).config;
    Node now = sweep.configs[i];
    planned.erase("hydra");
    now.erase("hydra");
    for (const config::ValueDifference& d : config::config_differences(planned, now)) {
      if (lines.size() == kMost) break;
      lines.push_back("job " + std::to_string(sweep.plan.jobs[i].number) + ": " + d.key + ": " + d.before +
                      " when planned, " + d.after + " now");
    }
  }
  return lines;
}

}  // namespace trainer::launch
