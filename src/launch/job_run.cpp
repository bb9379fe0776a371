#include "trainer/launch/job_run.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "trainer/config/yaml.h"
#include "trainer/launch/hparams_records.h"
#include "trainer/launch/idle_settings.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/mlflow_sweep_run.h"
#include "trainer/launch/plugin_names.h"
#include "trainer/launch/schema_check.h"
#include "trainer/launch/tuned_config.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/secondary_rank.h"

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

using config::Node;

// hydra.output_subdir ("" for null: no .hydra files) and the job's log file name (<job name>.log).
std::string output_subdir_of(const Node& hydra) {
  const Node* subdir = config::select(hydra, "output_subdir");
  return subdir != nullptr && subdir->is_string() ? subdir->as_string() : "";
}

std::string log_name_of(const Node& hydra) {
  const Node* name = config::select(hydra, "job.name");
  return (name != nullptr && name->is_string() ? name->as_string() : std::string("trainer")) + ".log";
}

// hydra.job.chdir=true runs the job in its run directory, where a relative data or model path is
// looked up (Hydra's most common surprise): one that exists only where trainer was started is said,
// with Hydra's way to name it, before the engine's "does not exist".
void warn_about_relative_paths(const Node& job, const fs::path& start_dir, const std::string& run_dir) {
  static const char* const kPaths[] = {"data.root",       "data.path",        "data.test_path",    "data.inputs",
                                       "data.targets",    "data.test_inputs", "data.test_targets", "data.shards",
                                       "data.val_shards", "data.test_shards", "model.path",        "ckpt_path"};
  std::error_code ec;
  for (const char* key : kPaths) {
    const Node* node = config::select(job, key);
    if (node == nullptr || !node->is_string() || node->as_string().empty()) continue;
    const fs::path path(node->as_string());
    if (path.is_absolute() || fs::exists(fs::path(run_dir) / path, ec) || !fs::exists(start_dir / path, ec)) continue;
    log::warning(std::string(key) + "=" + path.string() + " is relative, and hydra.job.chdir=true runs the job in " +
                 run_dir + ", where it does not exist (it does in " + start_dir.string() +
                 ", where trainer started): " + "give " + key + "=${hydra:runtime.cwd}/" + path.string() +
                 " (or an absolute path)");
  }
}

}  // namespace

const EngineLoader& process_engine(const EngineEntry* in_process) {
  static const std::unique_ptr<EngineLoader> engine =
      in_process != nullptr ? std::make_unique<EngineLoader>(*in_process) : std::make_unique<EngineLoader>();
  return *engine;
}

namespace {
const EngineEntry* g_engine_in_use = nullptr;
}  // namespace

void use_engine(const EngineEntry* in_process) { g_engine_in_use = in_process; }

const EngineLoader& process_engine() { return process_engine(g_engine_in_use); }

bool is_secondary_rank() { return trainer::is_secondary_rank(); }

std::vector<std::string> job_records(const Node& config) {
  const Node* hydra = config.find("hydra");
  if (hydra == nullptr) return {};
  std::vector<std::string> records = {log_name_of(*hydra)};
  if (const std::string subdir = output_subdir_of(*hydra); !subdir.empty()) {
    for (const char* file : {"config.yaml", "hydra.yaml", "overrides.yaml"}) {
      records.push_back((fs::path(subdir) / file).lexically_normal().string());
    }
  }
  return records;
}

EngineResult run_job(const EngineEntry* in_process, const std::string& command, Node config, const std::string& run_dir,
                     const std::vector<std::string>& task_overrides, const config::ResolveContext& base_ctx,
                     const std::vector<std::string>& notes) {
  Node* hydra = config.find("hydra");
  if (hydra == nullptr) throw Error("", "internal: the composed config has no hydra node");
  config::ResolveContext ctx = base_ctx;
  ctx.hydra = hydra;
  if (Node* runtime = hydra->find("runtime"); runtime != nullptr && runtime->is_map()) {
    runtime->set("output_dir", Node::string(run_dir));
    runtime->set("cwd", Node::string(fs::current_path().string()));
  }
  Node job_config = config;
  job_config.erase("hydra");
  check_job_sections(job_config, command, *hydra);
  check_job_schema(job_config);
  // Resolved once, here: values that come from interpolations (${oc.env:...}, ${other.key}) are
  // checked as the engine will see them, before anything is written, and this is what it gets.
  Node resolved_job = job_config;
  config::resolve_all(resolved_job, ctx);
  check_job_schema(resolved_job);
  if (!is_secondary_rank()) {
    check_plugin_names(resolved_job, command,
                       [in_process](const std::string& kind) { return process_engine(in_process).registered(kind); });
  }
  const std::string output_subdir = output_subdir_of(*hydra);
  const bool secondary = is_secondary_rank();
  if (!secondary) write_job_files(run_dir, output_subdir, job_config, *hydra, task_overrides);

  const std::string log_file = secondary ? std::string() : (fs::path(run_dir) / log_name_of(*hydra)).string();
  if (!secondary) log::set_file(log_file);
  // After the log file is open, so that the run's trainer.log keeps them.
  if (!secondary) warn_about_idle_settings(resolved_job, job_config, command);
  if (secondary) log::set_level(log::Level::kWarning);
  if (const Node* verbose = config::select(*hydra, "verbose");
      verbose && !verbose->is_null() && !(verbose->type() == config::NodeType::kBool && !verbose->as_bool())) {
    log::set_level(log::Level::kDebug);
  }
  // hydra.job.chdir=true runs the job inside its output directory, as Hydra does.
  const fs::path start_dir = fs::current_path();
  const Node* chdir = config::select(*hydra, "job.chdir");
  const bool change_dir = chdir && chdir->type() == config::NodeType::kBool && chdir->as_bool() && !secondary;
  if (change_dir) {
    fs::current_path(run_dir);
    warn_about_relative_paths(resolved_job, start_dir, run_dir);
  }

  if (!secondary) prepare_mlflow_job(resolved_job, *hydra, run_dir);
  const std::string yaml = config::to_yaml(resolved_job);
  log::info("output directory: " + run_dir);
  for (const std::string& note : notes) {
    // An override the evaluation does not use, or one unlike the training's, is a warning; the rest says where settings
    // came from.
    if (note.rfind("ignored", 0) == 0 || note.rfind("not as trained", 0) == 0) {
      log::warning(command + ": " + note);
    } else {
      log::info(command + ": " + note);
    }
  }
  log::debug("job config:\n" + yaml);

  const bool searches = searches_batch_size(command, resolved_job) && !secondary;
  if (searches) forget_earlier_search(run_dir, resolved_job);
  // The HParams dashboard's session, beside the scalars the engine's TensorBoard logger writes (a
  // relative save_dir is taken from here, where the engine will be). Never worth failing a job.
  std::optional<HParamsSession> hparams_session;
  if (const auto tensorboard_dir = tensorboard_log_dir(command, resolved_job, run_dir); tensorboard_dir && !secondary) {
    try {
      hparams_session.emplace(*tensorboard_dir, hparams_of_overrides(task_overrides), session_group(*hydra, run_dir));
    } catch (const std::exception& error) {
      log::warning(std::string("TensorBoard hparams session not recorded: ") + error.what());
    }
  }
  EngineResult result = process_engine(in_process).run(command, yaml, run_dir, log_file);
  if (hparams_session) {
    try {
      // The dashboard has no status for a run stopped on purpose (a signal, a pruner): unknown.
      hparams_session->end(result.outcome == JobOutcome::kFinished ? formats::SessionStatus::kSuccess
                           : result.outcome == JobOutcome::kFailed ? formats::SessionStatus::kFailure
                                                                   : formats::SessionStatus::kUnknown);
    } catch (const std::exception& error) {
      log::warning(std::string("TensorBoard hparams session end not recorded: ") + error.what());
    }
  }
  if (change_dir) fs::current_path(start_dir);
  // Also after a failed fit: the search had ended and its batch is what the fit ran with.
  if (searches && result.tuned_batch_size) {
    record_tuned_batch_size(run_dir, output_subdir, job_config, *result.tuned_batch_size);
    log::info("data.batch_size=" + std::to_string(*result.tuned_batch_size) + " written to the run's config");
  }
  if (result.outcome != JobOutcome::kFinished) throw EngineFailure(std::move(result));
  return result;
}

}  // namespace trainer::launch
