#include "trainer/launch/idle_settings.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/options/option_table.h"
#include "trainer/util/log.h"

namespace trainer::launch {
namespace {

using config::Node;
using config::NodeType;

// The absolute keys the config's interpolations name (`${trainer.default_root_dir}/csv` names
// trainer.default_root_dir; resolvers and relative keys are left out).
void collect_references(const Node& node, std::vector<std::string>& out) {
  if (node.is_map()) {
    for (const Node::Entry& entry : node.entries()) collect_references(entry.value, out);
    return;
  }
  if (node.is_list()) {
    for (const Node& item : node.items()) collect_references(item, out);
    return;
  }
  if (!node.is_string()) return;
  const std::string& text = node.as_string();
  for (size_t at = text.find("${"); at != std::string::npos; at = text.find("${", at + 2)) {
    size_t end = at + 2;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                 text[end] == '.' || text[end] == '-')) {
      ++end;
    }
    if (end == at + 2 || text[at + 2] == '.' || (end < text.size() && text[end] == ':')) continue;
    out.push_back(text.substr(at + 2, end - at - 2));
  }
}

// The job's resolved config, and the keys its unresolved one interpolates: a key another value
// reads through `${...}` acts there, whatever the checks below see.
struct Job {
  const Node& config;
  std::vector<std::string> references;
  std::vector<IdleSetting>* said;

  void warn(std::string text) const { said->push_back({true, std::move(text)}); }
  void note(std::string text) const { said->push_back({false, std::move(text)}); }

  const Node* at(const std::string& path) const { return config::select(config, path); }
  bool read_elsewhere(const std::string& key) const {
    return std::any_of(references.begin(), references.end(), [&](const std::string& named) {
      return named == key || named.rfind(key + ".", 0) == 0 || key.rfind(named + ".", 0) == 0;
    });
  }
};

bool is_true(const Node* node) { return node != nullptr && node->type() == NodeType::kBool && node->as_bool(); }
bool is_false(const Node* node) { return node != nullptr && node->type() == NodeType::kBool && !node->as_bool(); }
bool unset(const Node* node) { return node == nullptr || node->is_null(); }

std::string text_of(const Node* node) {
  if (node == nullptr) return "unset";
  return node->is_string() ? node->as_string() : config::python_str(*node);
}

// Lightning's fast_dev_run (true or a count above 0) writes no checkpoint and logs nothing.
bool fast_dev_run(const Job& job) {
  const Node* node = job.at("trainer.fast_dev_run");
  return is_true(node) || (node != nullptr && node->type() == NodeType::kInt && node->as_int() > 0);
}

// Top-level keys trainer does not read (the top level is open to keys of your own): one a typo
// away from a key it reads (`precison`), and a map that holds trainer's own sections
// (`experiment.trainer.max_epochs`: a group file without `# @package _global_`).
void root_keys(const Job& job) {
  const Node& job_config = job.config;
  // What trainer reads at the top level: the root's keys and the sections below it.
  std::vector<std::string> keys;      // the root's own keys (values)
  std::vector<std::string> sections;  // maps
  for (const options::Section& section : options::sections()) {
    if (section.path.empty()) {
      for (const options::Option& option : section.options) keys.push_back(option.key);
    } else if (section.path.find('.') == std::string::npos) {
      sections.push_back(section.path);
    }
  }
  std::vector<std::string> known = keys;
  known.insert(known.end(), sections.begin(), sections.end());
  const std::vector<std::string> engine_sections = {"trainer",   "model",     "data",  "optimizer",
                                                    "scheduler", "callbacks", "logger"};
  for (const Node::Entry& entry : job_config.entries()) {
    const std::string& key = entry.key;
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    // A typo keeps the kind of value: `train: true` (lightning-hydra-template's) is no `trainer`.
    const std::string close = config::closest_match(key, entry.value.is_map() ? sections : keys);
    if (!close.empty()) {
      job.warn("the config's top-level key '" + key + "' is not one trainer reads (the top level also takes " +
               "keys of your own, so it was accepted): did you mean '" + close + "'? As written it changes nothing");
      continue;
    }
    if (!entry.value.is_map()) continue;
    std::string held;
    for (const std::string& section : engine_sections) {
      if (entry.value.find(section) != nullptr) held += std::string(held.empty() ? "" : ", ") + section;
    }
    if (held.empty()) continue;
    job.warn("'" + key + "' holds " + held + ": sections trainer reads at the top level, not under '" + key +
             "', so as written they change nothing; a group's file that sets them (experiment=...) starts "
             "with the line '# @package _global_'");
  }
}

// The keys of a declared section (options/) that the job sets to other than their declared
// default and that no other value reads through ${...}, in declaration order.
std::vector<std::string> set_apart_from_default(const Job& job, const std::string& path, const std::string& variant) {
  std::vector<std::string> keys;
  const options::Section* section = options::find_section(path, variant);
  if (section == nullptr) return keys;
  for (const options::Option& option : section->options) {
    const std::string key = path + "." + option.key;
    const Node* node = job.at(key);
    if (node == nullptr || job.read_elsewhere(key)) continue;
    const bool declared =
        option.default_text == "null" ? node->is_null() : config::python_str(*node) == option.default_text;
    if (!declared) keys.push_back(key);
  }
  return keys;
}

void pipeline_settings(const Job& job) {
  const Node* strategy = job.at("trainer.strategy");
  if (strategy != nullptr && strategy->is_string() && strategy->as_string() == "pipeline") return;
  // Split points given to a data-parallel job ran the whole model on each rank, without a word.
  for (const std::string& key : set_apart_from_default(job, "trainer.pipeline", "")) {
    const Node* node = job.at(key);
    job.warn(key + "=" + config::python_str(*node) + " is a pipeline's setting, but trainer.strategy is " +
             text_of(strategy) + ", so it changes nothing: add trainer.strategy=pipeline to cut the model into stages");
    return;
  }
}

void profiler_schedule(const Job& job) {
  const Node* schedule = job.at("trainer.profiler_schedule");
  if (schedule == nullptr || !schedule->is_map() || schedule->entries().empty() ||
      job.read_elsewhere("trainer.profiler_schedule")) {
    return;
  }
  const Node* profiler = job.at("trainer.profiler");
  if (profiler != nullptr && profiler->is_string() && profiler->as_string() == "pytorch") return;
  job.warn("trainer.profiler_schedule picks the steps trainer.profiler=pytorch records, but trainer.profiler is " +
           (unset(profiler) ? std::string("null") : text_of(profiler)) +
           ", so it changes nothing: add trainer.profiler=pytorch (or debug=trace) to record them");
}

void float16_autocast(const Job& job) {
  if (!is_true(job.at("trainer.cpu_float16_autocast")) || job.read_elsewhere("trainer.cpu_float16_autocast")) return;
  const Node* precision = job.at("trainer.precision");
  if (precision == nullptr) precision = job.at("precision");
  const std::string value = text_of(precision);
  if (value == "16" || value == "16-mixed") return;
  job.warn(
      "trainer.cpu_float16_autocast=true makes precision=16-mixed compute in float16 on a CPU (not bfloat16), "
      "but precision is " +
      value + ", so it changes nothing: add precision=16-mixed to train in float16 (or leave the key at false)");
}

// trainer.default_root_dir stands for the directories left null: the checkpoints' and the csv and
// TensorBoard loggers' (the shipped config sets them all to the run directory).
void default_root_dir(const Job& job, const std::string& command) {
  const Node* root = job.at("trainer.default_root_dir");
  if (unset(root) || job.read_elsewhere("trainer.default_root_dir")) return;
  // A batch-size search and fast_dev_run write no checkpoint and log nothing: no directory to name.
  if (command != "fit" || fast_dev_run(job)) return;
  std::vector<std::string> set;
  const bool checkpoints = !is_false(job.at("trainer.enable_checkpointing"));
  if (checkpoints) {
    const Node* entry = job.at("callbacks.model_checkpoint");
    if (unset(entry) || unset(job.at("callbacks.model_checkpoint.dirpath"))) return;  // under it
    set.push_back("callbacks.model_checkpoint.dirpath");
  }
  const Node* loggers = job.config.find("logger");
  if (loggers != nullptr && loggers->is_map()) {
    if (loggers->find("mlflow") != nullptr) return;  // its file store's place is its own rule
    for (const char* name : {"csv", "tensorboard"}) {
      const Node* logger = loggers->find(name);
      if (logger == nullptr || logger->is_null()) continue;
      if (unset(logger->find("save_dir"))) return;
      set.push_back(std::string("logger.") + name + ".save_dir");
    }
  }
  std::string listed;
  for (size_t i = 0; i < set.size(); ++i) listed += (i == 0 ? "" : ", ") + set[i];
  job.warn("trainer.default_root_dir=" + text_of(root) +
           " is where checkpoints and logs go when their own directories are null, but " +
           (listed.empty() ? std::string("nothing here writes there") : listed + " are set") +
           ", so it changes nothing: set " + (listed.empty() ? std::string("them") : listed) +
           " to null to put them under it");
}

void onecycle_momentum(const Job& job) {
  const Node* name = job.at("scheduler.name");
  if (name == nullptr || !name->is_string() || name->as_string() != "onecycle") return;
  if (!is_false(job.at("scheduler.cycle_momentum"))) return;
  for (const std::string& key : set_apart_from_default(job, "scheduler", "onecycle")) {
    if (key != "scheduler.base_momentum" && key != "scheduler.max_momentum") continue;
    const Node* node = job.at(key);
    job.warn(key + "=" + config::python_str(*node) +
             " bounds the momentum OneCycleLR cycles, but scheduler.cycle_momentum=false, so it changes "
             "nothing: set scheduler.cycle_momentum=true to cycle it");
    return;
  }
}

void tuner_without_search(const Job& job, const std::string& command) {
  if (command != "fit") return;
  const Node* tuner = job.config.find("tuner");
  if (tuner == nullptr || !tuner->is_map() || tuner->entries().empty()) return;
  const Node* automatic = job.at("trainer.auto_scale_batch_size");
  if (!unset(automatic) && !is_false(automatic)) return;
  std::string listed;
  int count = 0;
  for (const Node::Entry& entry : tuner->entries()) {
    if (job.read_elsewhere("tuner." + entry.key)) continue;
    listed += std::string(count++ == 0 ? "" : ", ") + "tuner." + entry.key;
  }
  if (count == 0) return;
  job.warn(listed + (count == 1 ? " is" : " are") +
           " read by trainer tune batch_size, and by a fit with trainer.auto_scale_batch_size=power or "
           "binsearch; this fit searches no batch size, so " +
           (count == 1 ? "it changes" : "they change") +
           " nothing: add trainer.auto_scale_batch_size=power (or binsearch) to search before the fit");
}

// Lightning adds its own ModelCheckpoint where the callbacks hold none; trainer's, with the
// defaults of docs/options.md, does the same: a null entry does not turn checkpointing off.
void checkpoint_callback(const Job& job, const std::string& command) {
  if (command != "fit" || is_false(job.at("trainer.enable_checkpointing")) || fast_dev_run(job)) return;
  const Node* callbacks = job.config.find("callbacks");
  const Node* entry = callbacks != nullptr && callbacks->is_map() ? callbacks->find("model_checkpoint") : nullptr;
  // The callback's default monitor, val/acc, is a regression's val/loss (engine: fit_monitors_to_task).
  const Node* task = job.at("data.task");
  const bool regression = task != nullptr && task->is_string() && task->as_string() == "regression";
  const std::string defaults = std::string("checkpointing stays on, as in Lightning, with the callback's defaults ") +
                               "(last.ckpt, and the best by " + (regression ? "val/loss" : "val/acc") +
                               " in epoch_NNN.ckpt); trainer.enable_checkpointing=false writes no checkpoint";
  if (entry != nullptr && entry->is_null()) {
    job.warn("callbacks.model_checkpoint is null, but " + defaults);
  } else if (entry == nullptr) {
    job.note("no callbacks.model_checkpoint in the config: " + defaults);
  }
}

}  // namespace

std::vector<IdleSetting> idle_settings(const config::Node& job_config, const config::Node& unresolved,
                                       const std::string& command) {
  std::vector<IdleSetting> said;
  Job job{job_config, {}, &said};
  collect_references(unresolved, job.references);
  root_keys(job);
  pipeline_settings(job);
  // The rest are a training run's settings (an evaluation takes the checkpoint's model and data).
  if (command != "fit" && command != "tune_batch_size") return said;
  profiler_schedule(job);
  float16_autocast(job);
  default_root_dir(job, command);
  onecycle_momentum(job);
  tuner_without_search(job, command);
  checkpoint_callback(job, command);
  return said;
}

void warn_about_idle_settings(const config::Node& job_config, const config::Node& unresolved,
                              const std::string& command) {
  for (const IdleSetting& setting : idle_settings(job_config, unresolved, command)) {
    if (setting.warning) {
      log::warning(setting.text);
    } else {
      log::info(setting.text);
    }
  }
}

}  // namespace trainer::launch
