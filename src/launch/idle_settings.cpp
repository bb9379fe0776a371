#include "trainer/launch/idle_settings.h"

#include <string>
#include <utility>
#include <vector>

#include "trainer/config/python_str.h"
#include "trainer/util/log.h"

namespace trainer::launch {
namespace {

using config::Node;
using config::NodeType;

bool is_true(const Node* node) { return node != nullptr && node->type() == NodeType::kBool && node->as_bool(); }
bool is_false(const Node* node) { return node != nullptr && node->type() == NodeType::kBool && !node->as_bool(); }
bool unset(const Node* node) { return node == nullptr || node->is_null(); }

std::string text_of(const Node* node) {
  if (node == nullptr) return "unset";
  return node->is_string() ? node->as_string() : config::python_str(*node);
}

// Lightning's fast_dev_run (true or a count above 0) writes no checkpoint and logs nothing.
bool fast_dev_run(const Node& job) {
  const Node* node = config::select(job, "trainer.fast_dev_run");
  return is_true(node) || (node != nullptr && node->type() == NodeType::kInt && node->as_int() > 0);
}

void pipeline_settings(const Node& job) {
  const Node* strategy = config::select(job, "trainer.strategy");
  if (strategy != nullptr && strategy->is_string() && strategy->as_string() == "pipeline") return;
  // Split points given to a data-parallel job ran the whole model on each rank, without a word.
  static const std::vector<std::pair<std::string, std::string>> defaults = {
      {"stages", "None"},        {"split_points", "None"}, {"microbatches", "None"},
      {"balance", "parameters"}, {"schedule", "1f1b"},     {"transport", "auto"}};
  for (const auto& [name, fallback] : defaults) {
    const std::string key = "trainer.pipeline." + name;
    const Node* node = config::select(job, key);
    if (node == nullptr || config::python_str(*node) == fallback) continue;
    log::warning(key + "=" + config::python_str(*node) + " is a pipeline's setting, but trainer.strategy is " +
                 text_of(strategy) +
                 ", so it changes nothing: add trainer.strategy=pipeline to cut the model into stages");
    return;
  }
}

void profiler_schedule(const Node& job) {
  const Node* schedule = config::select(job, "trainer.profiler_schedule");
  if (schedule == nullptr || !schedule->is_map() || schedule->entries().empty()) return;
  const Node* profiler = config::select(job, "trainer.profiler");
  if (profiler != nullptr && profiler->is_string() && profiler->as_string() == "pytorch") return;
  log::warning("trainer.profiler_schedule picks the steps trainer.profiler=pytorch records, but trainer.profiler is " +
               (unset(profiler) ? std::string("null") : text_of(profiler)) +
               ", so it changes nothing: add trainer.profiler=pytorch (or debug=trace) to record them");
}

void float16_autocast(const Node& job) {
  if (!is_true(config::select(job, "trainer.cpu_float16_autocast"))) return;
  const Node* precision = config::select(job, "trainer.precision");
  if (precision == nullptr) precision = config::select(job, "precision");
  const std::string value = text_of(precision);
  if (value == "16" || value == "16-mixed") return;
  log::warning(
      "trainer.cpu_float16_autocast=true makes precision=16-mixed compute in float16 on a CPU (not bfloat16), "
      "but precision is " +
      value + ", so it changes nothing");
}

// trainer.default_root_dir stands for the directories left null: the checkpoints' and the csv and
// TensorBoard loggers' (the shipped config sets them all to the run directory).
void default_root_dir(const Node& job) {
  const Node* root = config::select(job, "trainer.default_root_dir");
  if (unset(root)) return;
  std::vector<std::string> set;
  const bool checkpoints = !is_false(config::select(job, "trainer.enable_checkpointing"));
  if (checkpoints) {
    const Node* entry = config::select(job, "callbacks.model_checkpoint");
    if (unset(entry) || unset(config::select(job, "callbacks.model_checkpoint.dirpath"))) return;  // under it
    set.push_back("callbacks.model_checkpoint.dirpath");
  }
  const Node* loggers = job.find("logger");
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
  log::warning("trainer.default_root_dir=" + text_of(root) +
               " is where checkpoints and logs go when their own directories are null, but " +
               (listed.empty() ? std::string("nothing here writes there") : listed + " are set") +
               ", so it changes nothing: set " + (listed.empty() ? std::string("them") : listed) +
               " to null to put them under it");
}

void onecycle_momentum(const Node& job) {
  const Node* name = config::select(job, "scheduler.name");
  if (name == nullptr || !name->is_string() || name->as_string() != "onecycle") return;
  if (!is_false(config::select(job, "scheduler.cycle_momentum"))) return;
  for (const auto& [key, fallback] : std::vector<std::pair<std::string, std::string>>{
           {"scheduler.base_momentum", "0.85"}, {"scheduler.max_momentum", "0.95"}}) {
    const Node* node = config::select(job, key);
    if (node == nullptr || config::python_str(*node) == fallback) continue;
    log::warning(key + "=" + config::python_str(*node) +
                 " bounds the momentum OneCycleLR cycles, but scheduler.cycle_momentum=false, so it changes "
                 "nothing: set scheduler.cycle_momentum=true to cycle it");
    return;
  }
}

void tuner_without_search(const Node& job, const std::string& command) {
  if (command != "fit") return;
  const Node* tuner = job.find("tuner");
  if (tuner == nullptr || !tuner->is_map() || tuner->entries().empty()) return;
  const Node* automatic = config::select(job, "trainer.auto_scale_batch_size");
  if (!unset(automatic) && !is_false(automatic)) return;
  log::warning("tuner." + tuner->entries().front().key +
               " is read by trainer tune batch_size, and by a fit with trainer.auto_scale_batch_size=power or "
               "binsearch; this fit searches no batch size, so it changes nothing");
}

// Lightning adds its own ModelCheckpoint where the callbacks hold none; trainer's, with the
// defaults of docs/options.md, does the same: a null entry does not turn checkpointing off.
void checkpoint_callback(const Node& job, const std::string& command) {
  if (command != "fit" || is_false(config::select(job, "trainer.enable_checkpointing")) || fast_dev_run(job)) return;
  const Node* callbacks = job.find("callbacks");
  const Node* entry = callbacks != nullptr && callbacks->is_map() ? callbacks->find("model_checkpoint") : nullptr;
  const std::string defaults =
      "checkpointing stays on, as in Lightning, with the callback's defaults (last.ckpt, and the best by val/acc in "
      "epoch_NNN.ckpt); trainer.enable_checkpointing=false writes no checkpoint";
  if (entry != nullptr && entry->is_null()) {
    log::warning("callbacks.model_checkpoint is null, but " + defaults);
  } else if (entry == nullptr) {
    log::info("no callbacks.model_checkpoint in the config: " + defaults);
  }
}

}  // namespace

void warn_about_idle_settings(const config::Node& job_config, const std::string& command) {
  pipeline_settings(job_config);
  // The rest are a training run's settings (an evaluation takes the checkpoint's model and data).
  if (command != "fit" && command != "tune_batch_size") return;
  profiler_schedule(job_config);
  float16_autocast(job_config);
  default_root_dir(job_config);
  onecycle_momentum(job_config);
  tuner_without_search(job_config, command);
  checkpoint_callback(job_config, command);
}

}  // namespace trainer::launch
