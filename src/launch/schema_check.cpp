#include "trainer/launch/schema_check.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

namespace trainer::launch {
namespace {

struct Section {
  const char* path;
  std::vector<std::string> keys;
};

// Lightning's Trainer vocabulary (shared/notes/lightning.md) plus our own knobs.
const std::vector<Section>& sections() {
  static const std::vector<Section> known = {
      {"trainer",
       {"accelerator", "devices", "num_nodes", "strategy", "precision", "max_epochs", "min_epochs",
        "max_steps", "max_time", "limit_train_batches", "limit_val_batches", "limit_test_batches",
        "val_check_interval", "check_val_every_n_epoch", "num_sanity_val_steps",
        "log_every_n_steps", "accumulate_grad_batches", "gradient_clip_val",
        "gradient_clip_algorithm", "grad_scaler", "deterministic", "benchmark", "fast_dev_run", "overfit_batches",
        "enable_progress_bar", "enable_checkpointing", "profiler", "profiler_schedule", "sync_batchnorm",
        "default_root_dir", "process_group_backend", "dist_timeout", "bucket_cap_mb",
        "auto_scale_batch_size", "master_addr", "master_port", "cpu_float16_autocast", "hang_timeout"}},
      {"trainer.profiler_schedule", {"skip_first", "wait", "warmup", "active"}},
      {"trainer.grad_scaler", {"enabled", "init_scale", "growth_factor", "backoff_factor", "growth_interval"}},
      {"callbacks.model_checkpoint",
       {"dirpath", "filename", "monitor", "mode", "save_top_k", "save_last", "every_n_train_steps",
        "every_n_epochs", "save_on_train_epoch_end"}},
      {"callbacks.early_stopping",
       {"monitor", "mode", "patience", "min_delta", "check_finite", "stopping_threshold",
        "divergence_threshold"}},
      {"callbacks.lr_monitor", {"logging_interval"}},
      {"tuner", {"mode", "init_val", "max_trials", "steps_per_trial", "max_memory_mb"}},
  };
  return known;
}

// A monitored metric must be one the run logs where the callback reads it: a misspelt name
// would otherwise keep no best checkpoint, silently.
void check_monitor(const config::Node& job_config, const std::string& path, const std::vector<std::string>& metrics) {
  const config::Node* node = config::select(job_config, path);
  if (node == nullptr || node->is_null() || !node->is_string() || node->is_interpolation()) return;
  const std::string& name = node->as_string();
  for (const std::string& metric : metrics) {
    if (metric == name) return;
  }
  std::string listed;
  for (const std::string& metric : metrics) listed += (listed.empty() ? "" : ", ") + metric;
  const std::string where = node->origin().describe();
  const std::string closest = config::closest_match(name, metrics);
  throw Error(path + (where.empty() ? "" : " (" + where + ")"),
              "'" + name + "' is not a metric this callback can watch (it watches one of: " + listed + ")" +
                  (closest.empty() ? "" : "; did you mean '" + closest + "'?"),
              "Set " + path + " to one of them.");
}

// A number with a lower bound (and -1 allowed where Lightning gives it a meaning). Values that are
// still interpolations are checked when the engine reads them.
struct NumberRule {
  const char* path;
  double minimum;
  bool minus_one;     // -1 is also allowed (no limit)
  bool integer;       // an int, not a float
  const char* means;  // what the key is, for the message
  double below = HUGE_VAL;  // an exclusive upper bound, where there is one
};

const std::vector<NumberRule>& number_rules() {
  static const std::vector<NumberRule> rules = {
      {"trainer.max_epochs", 0, true, true, "the number of epochs (-1: no limit, with max_steps or max_time)"},
      {"trainer.max_steps", 1, true, true, "the number of optimizer steps (-1: no limit)"},
      {"trainer.min_epochs", 0, false, true, "the epochs before early stopping may stop the run"},
      {"trainer.accumulate_grad_batches", 1, false, true, "batches per optimizer step"},
      {"trainer.check_val_every_n_epoch", 1, false, true, "epochs between validations"},
      {"trainer.log_every_n_steps", 1, false, true, "steps between logged rows"},
      {"trainer.num_sanity_val_steps", 0, true, true, "validation batches before fit (-1: all)"},
      {"trainer.limit_train_batches", 0, false, false, "a share of the epoch or a number of batches"},
      {"trainer.limit_val_batches", 0, false, false, "a share of the split or a number of batches"},
      {"trainer.limit_test_batches", 0, false, false, "a share of the split or a number of batches"},
      {"optimizer.lr", 0, false, false, "the learning rate (0 freezes the weights, as in PyTorch)"},
      {"optimizer.weight_decay", 0, false, false, "the weight decay"},
      {"optimizer.momentum", 0, false, false, "the momentum"},
      {"data.batch_size", 1, false, true, "samples per batch"},
      {"data.val_fraction", 0, false, false, "the share of the training split held out for validation", 1.0},
      {"data.num_samples", 1, false, true, "samples of the synthetic dataset"},
      {"data.num_classes", 1, false, true, "classes"},
      {"callbacks.model_checkpoint.save_top_k", -1, false, true, "best files kept (-1: all, 0: none)"},
      {"callbacks.model_checkpoint.every_n_epochs", 1, false, true, "epochs between best-checkpoint checks"},
      {"callbacks.model_checkpoint.every_n_train_steps", 0, false, true, "steps between checkpoints (0: off)"},
      {"callbacks.early_stopping.patience", 0, false, true, "checks without improvement before stopping"},
  };
  return rules;
}

// Types and ranges of the numeric keys, for every job before anything runs: a negative learning
// rate or epoch count is a mistake to report at planning time, not after the data has loaded.
std::string check_numbers(const config::Node& job_config) {
  std::string problems;
  for (const NumberRule& rule : number_rules()) {
    const config::Node* node = config::select(job_config, rule.path);
    if (node == nullptr || node->is_null() || node->is_interpolation() || node->is_missing()) continue;
    const std::string where = node->origin().describe();
    const std::string at = std::string(rule.path) + (where.empty() ? "" : " (" + where + ")");
    const bool is_int = node->type() == config::NodeType::kInt;
    const bool is_number = is_int || node->type() == config::NodeType::kFloat;
    if (!is_number || (rule.integer && !is_int)) {
      problems += "\n  " + at + ": expected " + (rule.integer ? "an int" : "a number") + " (" + rule.means +
                  "), got " + config::type_name(node->type()) + " " + config::python_str(*node);
      continue;
    }
    const double value = is_int ? static_cast<double>(node->as_int()) : node->as_float();
    if (rule.minus_one && value == -1) continue;
    if (value >= rule.minimum && value < rule.below) continue;
    char bound[48];
    std::snprintf(bound, sizeof(bound), "%g", rule.minimum);
    std::string range = "at least " + std::string(bound) + (rule.minus_one ? " or -1" : "");
    if (rule.below != HUGE_VAL) {
      char upper[48];
      std::snprintf(upper, sizeof(upper), "%g", rule.below);
      range = "in [" + std::string(bound) + ", " + upper + ")";
    }
    problems += "\n  " + at + ": " + config::python_str(*node) + " is out of range: " + rule.means + ", " + range;
  }
  // Lightning's -1 epochs needs something else to end the run.
  const config::Node* epochs = config::select(job_config, "trainer.max_epochs");
  const config::Node* steps = config::select(job_config, "trainer.max_steps");
  const config::Node* time = config::select(job_config, "trainer.max_time");
  if (epochs != nullptr && epochs->type() == config::NodeType::kInt && epochs->as_int() == -1 &&
      (steps == nullptr || (steps->type() == config::NodeType::kInt && steps->as_int() == -1)) &&
      (time == nullptr || time->is_null())) {
    const std::string where = epochs->origin().describe();
    problems += "\n  trainer.max_epochs" + (where.empty() ? "" : " (" + where + ")") +
                ": -1 means no epoch limit, but neither trainer.max_steps nor trainer.max_time ends the run";
  }
  return problems;
}

}  // namespace

void check_job_schema(const config::Node& job_config) {
  std::string problems;
  int count = 0;
  for (const Section& section : sections()) {
    const config::Node* node = config::select(job_config, section.path);
    if (node == nullptr || !node->is_map()) continue;
    for (const auto& entry : node->entries()) {
      bool known = false;
      for (const std::string& key : section.keys) known = known || key == entry.key;
      if (known) continue;
      ++count;
      std::string where = entry.value.origin().describe();
      std::string hint = config::did_you_mean(entry.key, section.keys);
      problems += "\n  " + std::string(section.path) + "." + entry.key +
                  (where.empty() ? "" : " (" + where + ")") + (hint.empty() ? "" : ": " + hint);
    }
  }
  if (count > 0) {
    throw Error("config", std::to_string(count) + " unknown key(s) in trainer's own sections:" + problems,
                "\nFix the spelling in the file or override named, or remove the key.");
  }
  if (const std::string problems = check_numbers(job_config); !problems.empty()) {
    throw Error("config", "values out of range or of the wrong type:" + problems,
                "\nFix them in the file or override named.");
  }
  check_monitor(job_config, "callbacks.model_checkpoint.monitor", {"val/acc", "val/loss", "train/acc", "train/loss"});
  check_monitor(job_config, "callbacks.early_stopping.monitor",
                {"val/acc", "val/loss", "train/acc_epoch", "train/loss_epoch"});
}

}  // namespace trainer::launch
