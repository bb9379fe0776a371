#include "trainer/launch/schema_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/formats/checkpoint_name.h"
#include "trainer/options/option_table.h"
#include "trainer/options/task_metrics.h"
#include "trainer/options/value_check.h"
#include "trainer/tracking/mlflow_store.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::launch {
namespace {

struct Problems {
  std::string unknown, values;
  int unknown_count = 0;
};

std::string join_path(const std::string& section, const std::string& key) {
  return section.empty() ? key : section + "." + key;
}

// "an option of optimizer=sgd, not of adam": where a key of another variant of the group lives.
std::string other_variants_with(const options::Section& section, const std::string& key) {
  std::string owners;
  for (const options::Section& other : options::sections()) {
    if (other.path != section.path || other.variant.empty() || other.variant == "*") continue;
    if (options::find_option(other, key) != nullptr) owners += (owners.empty() ? "" : ", ") + other.variant;
  }
  if (owners.empty()) return "";
  const std::string group = options::group_of(section.path);
  return "an option of " + group + "=" + owners + ", not of " + group + "=" + section.variant;
}

// Checks one section's keys against its declarations, and the nested sections it declares.
void check_section(const config::Node& node, const options::Section& section, Problems& problems) {
  std::vector<std::string> keys;
  for (const options::Option& option : section.options) keys.push_back(option.key);
  for (const auto& entry : node.entries()) {
    const std::string path = join_path(section.path, entry.key);
    const options::Option* option = options::find_option(section, entry.key);
    if (option == nullptr) {
      // An open section takes keys of the user's (a registered callback or logger), but one a
      // letter or two from a built-in's name is a typo (callbacks.model_checkpiont).
      const bool near_miss = section.path == "callbacks" || section.path == "logger";
      if (!section.closed && !(near_miss && !config::did_you_mean(entry.key, keys).empty())) continue;
      ++problems.unknown_count;
      std::string hint = config::did_you_mean(entry.key, keys);
      if (hint.empty() && !section.variant.empty()) hint = other_variants_with(section, entry.key);
      problems.unknown += "\n  " + entry.value.origin().describe_key(path) + (hint.empty() ? "" : ": " + hint);
      continue;
    }
    const config::Node& value = entry.value;
    if (value.is_interpolation()) continue;  // checked by the engine's reader once resolved
    if (option->type == options::Type::kMap && value.is_map()) {
      if (const options::Section* nested = options::find_section(path, section.variant)) {
        check_section(value, *nested, problems);
      }
      continue;
    }
    if (const std::string problem = options::check_value(*option, value); !problem.empty()) {
      problems.values += "\n  " + value.origin().describe_key(path) + ": " + problem;
    }
  }
}

// A group's name must be one trainer has, where the group is closed (optimizer, scheduler).
void check_variant(const config::Node& job_config, const std::string& group) {
  if (!options::group_is_closed(group)) return;
  const config::Node* name = config::select(job_config, group + ".name");
  if (name == nullptr || !name->is_string() || name->is_interpolation()) return;
  const std::vector<std::string> known = options::variants_of(group);
  for (const std::string& variant : known) {
    if (variant == name->as_string()) return;
  }
  std::string listed;
  for (const std::string& variant : known) listed += (listed.empty() ? "" : ", ") + variant;
  const std::string hint = config::did_you_mean(name->as_string(), known);
  throw Error(name->origin().describe_key(group + ".name"),
              "'" + name->as_string() + "' is not a" + (group == "optimizer" ? "n " : " ") + group + " trainer has (" +
                  listed + ")" + (hint.empty() ? "" : "; " + hint),
              "Pick one with " + group + "=<name>.");
}

// Lightning's -1 epochs needs something else to end the run.
std::string check_run_length(const config::Node& job_config) {
  const config::Node* epochs = config::select(job_config, "trainer.max_epochs");
  const config::Node* steps = config::select(job_config, "trainer.max_steps");
  const config::Node* time = config::select(job_config, "trainer.max_time");
  if (epochs != nullptr && epochs->type() == config::NodeType::kInt && epochs->as_int() == -1 &&
      (steps == nullptr || (steps->type() == config::NodeType::kInt && steps->as_int() == -1)) &&
      (time == nullptr || time->is_null())) {
    return "\n  " + epochs->origin().describe_key("trainer.max_epochs") +
           ": -1 means no epoch limit, but neither trainer.max_steps nor trainer.max_time ends the run";
  }
  return "";
}

// Loop settings that cannot run together (the engine refuses them too, but only after the run's
// directory and loggers exist): a validation interval of 0, cuDNN autotuning with determinism.
std::string check_loop_settings(const config::Node& job_config) {
  std::string problems;
  const config::Node* interval = config::select(job_config, "trainer.val_check_interval");
  if (interval != nullptr && ((interval->type() == config::NodeType::kInt && interval->as_int() == 0) ||
                              (interval->type() == config::NodeType::kFloat && interval->as_float() == 0.0))) {
    problems += "\n  " + interval->origin().describe_key("trainer.val_check_interval") +
                ": validation after 0 batches (or a share of 0) never comes (use a share in (0, 1] or a number of "
                "batches; to skip validation set trainer.limit_val_batches=0)";
  }
  const config::Node* benchmark = config::select(job_config, "trainer.benchmark");
  const config::Node* deterministic = config::select(job_config, "trainer.deterministic");
  if (benchmark != nullptr && deterministic != nullptr && benchmark->type() == config::NodeType::kBool &&
      deterministic->type() == config::NodeType::kBool && benchmark->as_bool() && deterministic->as_bool()) {
    problems += "\n  " + benchmark->origin().describe_key("trainer.benchmark") +
                ": benchmark=true picks convolution algorithms by timing them, which trainer.deterministic=true "
                "rules out (set one of them to false)";
  }
  return problems;
}

// The batch-size search's mode, named twice and differently: the fit searches in
// trainer.auto_scale_batch_size's, trainer tune batch_size in tuner.mode's; one of them would be
// ignored without a word.
std::string check_tuner_mode(const config::Node& job_config) {
  const config::Node* mode = config::select(job_config, "tuner.mode");
  const config::Node* automatic = config::select(job_config, "trainer.auto_scale_batch_size");
  if (mode == nullptr || automatic == nullptr || !mode->is_string() || !automatic->is_string()) return "";
  const std::string named = automatic->as_string();
  if ((named != "power" && named != "binsearch") || named == mode->as_string()) return "";
  return "\n  " + mode->origin().describe_key("tuner.mode") + ": trainer.auto_scale_batch_size=" + named +
         " names another mode for the same search (give it once: trainer.auto_scale_batch_size=" + mode->as_string() +
         ", or leave tuner.mode out)";
}

// data.normalize's mean and std pair up channel by channel (one value stands for every channel):
// lists of two lengths are refused here rather than once the data has loaded.
std::string check_normalize(const config::Node& job_config) {
  const config::Node* mean = config::select(job_config, "data.normalize.mean");
  const config::Node* std_dev = config::select(job_config, "data.normalize.std");
  if (mean == nullptr || std_dev == nullptr || !mean->is_list() || !std_dev->is_list()) return "";
  const size_t means = mean->items().size(), stds = std_dev->items().size();
  if (means == stds || means <= 1 || stds <= 1) return "";
  return "\n  " + mean->origin().describe_key("data.normalize.mean") + ": " + std::to_string(means) +
         " values beside " + std::to_string(stds) +
         " in data.normalize.std; they pair up channel by channel (give both one value per "
         "channel, or either one value for every channel)";
}

// Lightning refuses more devices than a single-device strategy runs.
std::string check_devices(const config::Node& job_config) {
  const config::Node* strategy = config::select(job_config, "trainer.strategy");
  const config::Node* devices = config::select(job_config, "trainer.devices");
  if (strategy == nullptr || devices == nullptr || !strategy->is_string() || strategy->as_string() != "single_device" ||
      devices->type() != config::NodeType::kInt || devices->as_int() <= 1) {
    return "";
  }
  return "\n  " + devices->origin().describe_key("trainer.devices") +
         ": trainer.strategy=single_device runs one process, but " + config::python_str(*devices) +
         " devices were asked for (use trainer.devices=1, or strategy=ddp or auto)";
}

// strategy=pipeline: the process count, the stages and the micro-batches fit together. The split
// points are checked against the model's module names by the engine, which builds the model.
std::string check_pipeline(const config::Node& job_config) {
  const config::Node* strategy = config::select(job_config, "trainer.strategy");
  if (strategy == nullptr || !strategy->is_string() || strategy->as_string() != "pipeline") return "";
  auto int_at = [&](const std::string& path) -> const config::Node* {
    const config::Node* node = config::select(job_config, path);
    return node != nullptr && node->type() == config::NodeType::kInt ? node : nullptr;
  };
  const config::Node* devices = int_at("trainer.devices");
  const config::Node* stages_node = int_at("trainer.pipeline.stages");
  const config::Node* micro_node = int_at("trainer.pipeline.microbatches");
  const config::Node* batch = int_at("data.batch_size");
  std::string problems;
  if (devices == nullptr) return "";  // devices=auto: the engine counts the devices
  const int64_t processes = devices->as_int();
  if (processes < 2) {
    return "\n  " + devices->origin().describe_key("trainer.devices") +
           ": trainer.strategy=pipeline cuts the model into stages, one process each, but " +
           std::to_string(processes) + " device was asked for (use trainer.devices=2 or more)";
  }
  const int64_t stages = stages_node != nullptr ? stages_node->as_int() : processes;
  if (stages_node != nullptr && processes % stages != 0) {
    problems += "\n  " + stages_node->origin().describe_key("trainer.pipeline.stages") + ": " +
                std::to_string(processes) + " processes (trainer.devices) do not make whole pipelines of " +
                std::to_string(stages) + " stages (use a divisor of trainer.devices, or trainer.devices=" +
                std::to_string((processes / stages + 1) * stages) + ")";
  }
  const int64_t micro = micro_node != nullptr ? micro_node->as_int() : 2 * stages;
  if (batch != nullptr && batch->as_int() % micro != 0) {
    const std::string key = micro_node != nullptr ? "trainer.pipeline.microbatches" : "data.batch_size";
    const config::Node& node = micro_node != nullptr ? *micro_node : *batch;
    problems += "\n  " + node.origin().describe_key(key) + ": a batch of " + std::to_string(batch->as_int()) +
                (batch->as_int() == 1 ? " sample" : " samples") + " (data.batch_size) does not split into " +
                std::to_string(micro) + " equal micro-batches" +
                (micro_node != nullptr ? "" : " (trainer.pipeline.microbatches=null: 2 x stages)") +
                " (use a data.batch_size that " + std::to_string(micro) +
                " divides, or set trainer.pipeline.microbatches to a divisor of it)";
  }
  if (const config::Node* points = config::select(job_config, "trainer.pipeline.split_points");
      points != nullptr && (points->is_list() || points->is_string()) &&
      static_cast<int64_t>(points->is_list() ? points->size() : 1) != stages - 1) {
    const size_t count = points->is_list() ? points->size() : 1;
    problems += "\n  " + points->origin().describe_key("trainer.pipeline.split_points") + ": " + std::to_string(count) +
                " split point(s) make " + std::to_string(count + 1) + " stages, but the pipeline has " +
                std::to_string(stages) + " (give " + std::to_string(stages - 1) +
                " module names, one where each stage after the first starts, or null to balance by parameters)";
  }
  const config::Node* points = config::select(job_config, "trainer.pipeline.split_points");
  const config::Node* balance = config::select(job_config, "trainer.pipeline.balance");
  if (points != nullptr && (points->is_list() || points->is_string()) && balance != nullptr && balance->is_string() &&
      balance->as_string() == "time") {
    problems += "\n  " + balance->origin().describe_key("trainer.pipeline.balance") +
                ": balance=time cuts the model where trainer.pipeline.split_points already does (give one: "
                "split_points=null to cut by measured time, or drop balance=time to cut at the named modules)";
  }
  return problems;
}

// The callbacks' monitors against their modes and the task: a mode that keeps the worst value
// (mode=max for an error such as val/rmse) or a regression metric under classification.
std::string check_monitors(const config::Node& job_config) {
  const config::Node* task = config::select(job_config, "data.task");
  const bool regression = task != nullptr && task->is_string() && task->as_string() == "regression";
  std::string problems;
  for (const std::string callback : {"callbacks.model_checkpoint", "callbacks.early_stopping"}) {
    const config::Node* monitor = config::select(job_config, callback + ".monitor");
    const config::Node* mode = config::select(job_config, callback + ".mode");
    if (monitor == nullptr || mode == nullptr || !monitor->is_string() || !mode->is_string() ||
        monitor->is_interpolation() || mode->is_interpolation()) {
      continue;
    }
    const std::string& name = monitor->as_string();
    if (!regression && options::is_regression_metric(name)) {
      problems += "\n  " + monitor->origin().describe_key(callback + ".monitor") + ": " + name +
                  " is logged only by a regression (data.task=regression); a classifier logs acc and loss";
      continue;
    }
    if (regression && !options::regression_monitor_for(name).empty()) continue;  // watches the loss, mode min
    const std::string better = options::better_mode(name);
    if (!better.empty() && better != mode->as_string()) {
      problems += "\n  " + mode->origin().describe_key(callback + ".mode") + ": mode=" + mode->as_string() +
                  " would keep the " + (better == "min" ? "highest " : "lowest ") + name + ", the worst (" +
                  (better == "min" ? "lower" : "higher") + " is better); set " + callback + ".mode=" + better;
    }
  }
  return problems;
}

}  // namespace

void check_job_schema(const config::Node& job_config) {
  Problems problems;
  std::vector<std::string> checked;
  for (const options::Section& declared : options::sections()) {
    const std::string& path = declared.path;
    if (path.find('.') != std::string::npos) continue;  // nested: reached from its parent
    bool seen = false;
    for (const std::string& done : checked) seen = seen || done == path;
    if (seen) continue;
    checked.push_back(path);
    const config::Node* node = path.empty() ? &job_config : config::select(job_config, path);
    if (node == nullptr || !node->is_map()) continue;
    const options::Section* section = options::find_section(path, options::variant_in(job_config, path));
    if (section != nullptr) check_section(*node, *section, problems);
  }
  for (const char* group : {"optimizer", "scheduler"}) check_variant(job_config, group);
  problems.values += check_run_length(job_config);
  problems.values += check_devices(job_config);
  problems.values += check_tuner_mode(job_config);
  problems.values += check_normalize(job_config);
  problems.values += check_loop_settings(job_config);
  problems.values += check_pipeline(job_config);
  problems.values += check_monitors(job_config);
  if (const config::Node* filename = config::select(job_config, "callbacks.model_checkpoint.filename");
      filename != nullptr && filename->is_string() && !filename->is_interpolation()) {
    const std::string problem = formats::check_checkpoint_name(
        filename->as_string(), {"val/acc", "val/loss", "train/acc", "train/loss", "val/mae", "val/rmse", "val/r2",
                                "train/mae", "train/rmse", "train/r2"});
    if (!problem.empty())
      problems.values +=
          "\n  " + filename->origin().describe_key("callbacks.model_checkpoint.filename") + ": " + problem;
  }
  // An MLflow tracking URI trainer cannot log to (sqlite:, databricks): refused before any job runs.
  if (const config::Node* uri = config::select(job_config, "logger.mlflow.tracking_uri");
      uri != nullptr && uri->is_string() && !uri->is_interpolation()) {
    try {
      (void)tracking::open_mlflow_store(uri->as_string(), "logger.mlflow.tracking_uri");
    } catch (const Error& error) {
      problems.values += "\n  " + uri->origin().describe_key("logger.mlflow.tracking_uri") + ": " + error.problem() +
                         ". " + error.fix();
    }
  }
  // A tree written for Hydra's instantiate (lightning-hydra-template's): its model and data are
  // Python classes, which no key of trainer's can stand for. Said first: it is the cause.
  std::string python;
  for (const auto& [group, choices] :
       {std::pair<std::string, std::string>{"model",
                                            "mlp, cnn, resnet or torchscript "
                                            "(a TorchScript file of yours)"},
        {"data", "fashion_mnist, image_folder, csv, webdataset, tensors or synthetic"}}) {
    const config::Node* target = config::select(job_config, group + "._target_");
    if (target == nullptr || !target->is_string() || target->is_interpolation()) continue;
    python += "\n  " + target->origin().describe_key(group + "._target_") +
              ": a Python class for Hydra's instantiate; trainer builds " + group + " itself: choose " + group + "=" +
              choices + " and set its keys (docs/options.md)";
  }
  std::string listed;
  if (!python.empty()) listed += "a config written for Python (Hydra's instantiate):" + python;
  if (problems.unknown_count > 0) {
    listed += std::string(listed.empty() ? "" : "\n");
    listed += std::to_string(problems.unknown_count) + " unknown key(s) in trainer's own sections:" + problems.unknown;
  }
  if (!problems.values.empty()) {
    listed += std::string(listed.empty() ? "" : "\n") + "values out of range or of the wrong type:" + problems.values;
  }
  if (!listed.empty()) {
    throw Error("config", listed,
                "\nFix the spelling or the value in the file or override named (docs/options.md lists every key and "
                "what it accepts).");
  }
}

}  // namespace trainer::launch

namespace trainer::launch {

void check_mandatory_values(const config::Node& job_config) {
  std::string missing;
  std::string example;
  for (const options::Section& declared : options::sections()) {
    const config::Node* node = declared.path.empty() ? &job_config : config::select(job_config, declared.path);
    if (node == nullptr || !node->is_map()) continue;
    const std::string group = options::group_of(declared.path);
    if (options::find_section(declared.path, options::variant_in(job_config, group)) != &declared) continue;
    for (const options::Option& option : declared.options) {
      if (!option.mandatory) continue;
      const config::Node* value = node->find(option.key);
      if (value == nullptr || !value->is_missing()) continue;
      const std::string key = join_path(declared.path, option.key);
      const std::string variant = options::variant_in(job_config, group);
      missing += "\n  " + key + (variant.empty() ? "" : " (" + group + "=" + variant + ")") + ": " + option.help;
      if (example.empty()) example = key + "=...";
    }
  }
  if (missing.empty()) return;
  throw Error("config", "mandatory value(s) left at ???:" + missing,
              "\nGive them for every such job, on the command line (" + example +
                  ") or in the config; the job would fail as it starts.");
}

void check_job_sections(const config::Node& job_config, const std::string& command, const config::Node& hydra) {
  std::vector<std::string> needed;
  if (command == "fit" || command == "tune_batch_size") needed = {"data", "model"};
  if (command == "data_pack") needed = {"data"};
  std::vector<std::string> missing;
  for (const std::string& section : needed) {
    const config::Node* node = job_config.find(section);
    if (node == nullptr || node->is_null()) missing.push_back(section);
  }
  if (missing.empty()) return;
  // The primary config: its name, and the directory of the search path's main provider.
  std::string primary = "the primary config";
  const config::Node* name = config::select(hydra, "job.config_name");
  if (name != nullptr && name->is_string()) {
    primary = name->as_string() + ".yaml";
    if (const config::Node* sources = config::select(hydra, "runtime.config_sources");
        sources != nullptr && sources->is_list()) {
      for (const config::Node& source : sources->items()) {
        const config::Node* provider = source.find("provider");
        const config::Node* path = source.find("path");
        if (provider != nullptr && provider->is_string() && provider->as_string() == "main" && path != nullptr &&
            path->is_string()) {
          primary = path->as_string() + "/" + primary;
        }
      }
    }
  }
  const bool both = missing.size() == 2;
  const std::string what = both ? "no data and no model section" : "no " + missing.front() + " section";
  throw Error("config",
              "the composed config has " + what + ": " + primary + " and its defaults list choose none, and " +
                  (command == "data_pack"         ? "trainer data pack"
                   : command == "tune_batch_size" ? "trainer tune batch_size"
                                                  : "trainer " + command) +
                  " needs " +
                  (both                        ? "them (which data to read, which model to build)"
                   : missing.front() == "data" ? "it (which data to read)"
                                               : "it (which model to build)"),
              "Give " + primary + " a defaults list that picks " + (both ? "them" : "it") +
                  " from groups of its directory (" +
                  (both ? "data/<name>.yaml, model/<name>.yaml" : missing.front() + "/<name>.yaml") + "), or " +
                  (both ? "the sections themselves (" : "the section itself (") +
                  (both                        ? "data: {name: synthetic} and model: {name: mlp}"
                   : missing.front() == "data" ? "data: {name: synthetic}"
                                               : "model: {name: mlp}") +
                  "; docs/options.md lists their keys). With --config-path the shipped groups are not on the search "
                  "path; --config-dir adds a directory of yours to them instead.");
}

}  // namespace trainer::launch
