#include "trainer/launch/schema_check.h"

#include <string>
#include <vector>

#include "trainer/config/did_you_mean.h"
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
        "auto_scale_batch_size", "master_addr", "master_port", "cpu_float16_autocast"}},
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
}

}  // namespace trainer::launch
