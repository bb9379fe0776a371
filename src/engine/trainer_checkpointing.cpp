// What a checkpoint holds (model, optimizer, loop, callback and loss-scaler state), when the loop
// writes one (epoch end, every_n_train_steps, a signal) and where (top-k names, last.ckpt).
#include <algorithm>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>

#include "trainer/config/node.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/checkpoint/checkpoint_policy.h"
#include "trainer/engine/posix_files.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

#include "trainer_impl.h"

namespace trainer::engine {
// A non-finite training loss stops fit before anything is saved from the damaged weights: the
// last checkpoint on disk stays the last good one.
[[noreturn]] void throw_nonfinite(int64_t batches, int64_t last_step, const std::string& last_checkpoint) {
  throw Error("training step " + std::to_string(last_step),
              "the loss was not finite (NaN or infinite) in at least one of the " + std::to_string(batches) +
                  " batches trained since the last check",
              "Lower optimizer.lr, enable gradient clipping (trainer.gradient_clip_val=1.0) or check the data. "
              "Nothing was saved from the damaged weights; " +
                  (posix::exists(last_checkpoint)
                       ? "the last good checkpoint is " + last_checkpoint + " (resume with ckpt_path=last)."
                       : std::string("no checkpoint had been written yet, so start again with the changes above.")));
}

std::string Trainer::Impl::optimizer_class_name() const {
  switch (options.optimizer.kind) {
    case OptimizerKind::kSgd:
      return "SGD";
    case OptimizerKind::kAdam:
      return "Adam";
    case OptimizerKind::kAdamW:
      return "AdamW";
  }
  return "?";
}

void Trainer::Impl::save_callback_states(LoopState& state) const {
  state.callback_states.clear();
  for (const auto& entry : callbacks) state.callback_states.emplace_back(entry.name, entry.callback->state());
}

void Trainer::Impl::restore_callback_states(const LoopState& state) {
  for (const auto& [name, text] : state.callback_states) {
    for (auto& entry : callbacks) {
      if (entry.name == name) entry.callback->load_state(text);
    }
  }
}

namespace {

// What a callback section watches: its monitor and mode (empty when the config leaves them out);
// nothing when the callback is off (null) or absent.
std::optional<std::pair<std::string, std::string>> watch_of(const config::Node& root, const std::string& section) {
  const config::Node* node = config::select(root, "callbacks." + section);
  if (node == nullptr || !node->is_map()) return std::nullopt;
  auto text = [&](const char* key) {
    const config::Node* value = node->find(key);
    return value != nullptr && value->is_string() ? value->as_string() : std::string();
  };
  return std::make_pair(text("monitor"), text("mode"));
}

std::string watch_text(const std::pair<std::string, std::string>& watch) {
  return watch.first + (watch.second.empty() ? "" : " (mode " + watch.second + ")");
}

}  // namespace

void Trainer::Impl::forget_states_of_other_monitors(const std::string& checkpoint, LoopState& state) const {
  const std::string stored_yaml = formats::read_checkpoint_summary(checkpoint).config_yaml;
  if (stored_yaml.empty() || config_yaml.empty()) return;  // a checkpoint from before configs were stored
  const config::Node stored = config::load_yaml_string(stored_yaml, checkpoint).root;
  const config::Node current = config::load_yaml_string(config_yaml, "the run's config").root;
  for (const char* name : {"model_checkpoint", "early_stopping"}) {
    const std::string section = name;
    const auto before = watch_of(stored, section);
    const auto now = watch_of(current, section);
    if (!before || !now || *before == *now) continue;
    std::string dropped;
    if (section == "model_checkpoint") {
      if (!options.checkpoint.enabled) continue;
      if (!state.top_k.empty()) {
        dropped = "; the earlier run's best files stay where they are, unranked (" +
                  state.top_k.front().path.substr(state.top_k.front().path.find_last_of('/') + 1) +
                  (state.top_k.size() > 1 ? ", ..." : "") + ")";
      }
      state.top_k.clear();
    } else {
      const auto kept = std::remove_if(state.callback_states.begin(), state.callback_states.end(),
                                       [&](const auto& entry) { return entry.first == section; });
      if (kept == state.callback_states.end()) continue;  // no early-stopping record to forget
      state.callback_states.erase(kept, state.callback_states.end());
      dropped = " (its best score and patience)";
    }
    if (is_main) {
      log::warning("ckpt_path: " + checkpoint + " was written watching " + watch_text(*before) + " with callbacks." +
                   section + "; this run watches " + watch_text(*now) + ", so " +
                   (section == "model_checkpoint" ? "its best checkpoints are ranked afresh by " + now->first
                                                  : "early stopping starts afresh on " + now->first) +
                   dropped + ". Lightning starts a callback whose monitor changed afresh too.");
    }
  }
}

void Trainer::Impl::warn_of_another_batch_size(const std::string& checkpoint, const LoopState& state) const {
  if (state.batch_in_epoch == 0 || !is_main) return;
  const std::string stored_yaml = formats::read_checkpoint_summary(checkpoint).config_yaml;
  if (stored_yaml.empty()) return;
  const config::Node stored = config::load_yaml_string(stored_yaml, checkpoint).root;
  const config::Node* size = config::select(stored, "data.batch_size");
  if (size == nullptr || size->type() != config::NodeType::kInt) return;
  const int64_t before = size->as_int();
  const int64_t now = data_options.batch_size;
  if (before == now || before <= 0) return;
  const int64_t batches = state.batch_in_epoch;
  log::warning("ckpt_path: " + checkpoint + " stopped inside epoch " + std::to_string(state.epoch) + " after " +
               std::to_string(batches) + " batch(es) of " + std::to_string(before) +
               " samples; this run's batches hold " + std::to_string(now) +
               ", and the place in the epoch is counted "
               "in batches, so it goes on at sample " +
               std::to_string(batches * now) + " of the epoch's order, not " + std::to_string(batches * before) + ": " +
               (now > before ? "samples of this epoch are skipped" : "samples of this epoch are seen twice") +
               ". Resume with data.batch_size=" + std::to_string(before) +
               " to go on exactly, or from a checkpoint written at an epoch's end.");
}

void Trainer::Impl::save_logger_states(LoopState& state) const {
  state.logger_states.clear();
  for (const auto& entry : loggers) {
    std::string text = entry.logger->checkpoint_state();
    if (!text.empty()) state.logger_states.emplace_back(entry.name, std::move(text));
  }
}

void Trainer::Impl::restore_precision_state(const LoopState& state) {
  const std::string name = precision_name(options.precision);
  if (state.precision != name) {
    log::info("the checkpoint was written with precision=" + state.precision + "; continuing with precision=" + name);
  }
  if (!scaler) return;
  if (state.grad_scaler) {
    scaler->load_state(*state.grad_scaler);
    log::info("loss scale restored: " + scale_text(state.grad_scaler->scale) + ", " +
              std::to_string(state.grad_scaler->growth_tracker) + " good steps towards the next growth");
  } else {
    log::info("the checkpoint holds no loss-scaler state: loss scaling starts from init_scale");
  }
}

std::string Trainer::Impl::resolve_ckpt_path(const std::string& wanted) const {
  return formats::resolve_checkpoint_name(wanted, checkpoint_dir());
}

std::string Trainer::Impl::update_top_k(LoopState& state, double score, int64_t epoch,
                                        std::vector<std::string>& dropped) {
  std::string replaced;
  if (state.global_step == top_k_scored_step && !top_k_scored_path.empty()) {
    const auto earlier = std::find_if(state.top_k.begin(), state.top_k.end(),
                                      [&](const TopKEntry& entry) { return entry.path == top_k_scored_path; });
    if (earlier != state.top_k.end()) {
      replaced = earlier->path;
      state.top_k.erase(earlier);
    }
  }
  // The name's metric fields: the latest validation's, and the monitored value as scored now.
  std::map<std::string, double> metrics = latest_validation;
  metrics[options.checkpoint.monitor] = score;
  const std::string best =
      engine::update_top_k(state.top_k, options.checkpoint, score, epoch, state.global_step, metrics, dropped);
  if (!replaced.empty() && replaced != best) dropped.push_back(replaced);
  top_k_scored_step = state.global_step;
  top_k_scored_path = best;
  return best;
}

void Trainer::Impl::save(LoopState& state, std::vector<std::string> paths, std::vector<std::string> dropped) {
  if (!options.checkpoint.enabled || paths.empty()) return;
  state.fit_seconds = fit_seconds_before + seconds_since(fit_start);
  gather_rng_states(state);
  if (pipeline) {
    save_pipeline(state, paths, dropped);
  } else if (is_main) {
    PhaseProfiler::Scope timed(profiler, Phase::kCheckpoint);
    save_whole(state, std::move(paths), std::move(dropped));
  }
}

void Trainer::Impl::save_whole(LoopState& state, std::vector<std::string> paths, std::vector<std::string> dropped) {
  save_callback_states(state);
  flush_loggers();
  save_logger_states(state);
  state.precision = precision_name(options.precision);
  state.grad_scaler.reset();
  if (scaler) state.grad_scaler = scaler->state();
  state.class_names = class_names;
  state.sample_shape = input_spec.sample_shape;
  state.num_classes = input_spec.num_classes;
  state.data_encoding = train_set->encoding();
  auto bytes = std::make_shared<const std::string>(serialize_checkpoint(*model, *optimizer, state, config_yaml));
  checkpoint_writer.write(std::move(bytes), std::move(paths), std::move(dropped));
}

int64_t Trainer::Impl::skipped_in_epoch() const {
  if (!data_options.skip_bad_samples) return 0;
  // A pipeline's stages all read the same batches: its first stages count them.
  const bool counts = !pipeline || pipeline->stage() == 0;
  int64_t here = counts ? skipped_training + skipped_validation : 0;
  if (!group || group->is_main()) here += skipped_resumed;
  if (!group || group->world_size() < 2) return here;
  at::Tensor total = at::tensor({static_cast<double>(here)}, at::TensorOptions().dtype(at::kDouble));
  if (device.is_cuda()) total = total.to(device);
  group->allreduce_sum(total, "unreadable samples left out");
  return static_cast<int64_t>(total.cpu().item<double>());
}

namespace {

at::Tensor generator_state(at::Generator generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void set_generator_state(at::Generator generator, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state.contiguous().clone());
}

}  // namespace

void Trainer::Impl::gather_rng_states(LoopState& state) const {
  const int64_t ranks = group ? group->world_size() : 1;
  // Each rank fills its own row; the sum of the rows is the table (uint8: no carries, one row
  // each). NCCL reduces device tensors only.
  auto table_of = [&](const at::Tensor& own, const std::string& what) {
    at::Tensor table = at::zeros({ranks, own.numel()}, at::kByte);
    table.select(0, group ? group->rank() : 0).copy_(own.reshape(-1));
    if (ranks < 2) return table;
    if (device.is_cuda()) table = table.to(device);
    group->allreduce_sum(table, "checkpoint: every rank's " + what + " random generator state");
    return table.cpu();
  };
  if (device.is_cuda()) {
    state.rank_cuda_rng_states = table_of(generator_state(at::globalContext().defaultGenerator(device)), "CUDA");
  }
  if (ranks > 1) state.rank_rng_states = table_of(generator_state(at::detail::getDefaultCPUGenerator()), "CPU");
}

void Trainer::Impl::restore_own_rng_state(const LoopState& state) const {
  const int64_t ranks = group ? group->world_size() : 1;
  const int64_t rank = group ? group->rank() : 0;
  auto written_by_others = [&](const at::Tensor& table, const std::string& instead) {
    if (table.size(0) == ranks) return false;
    if (is_main) {
      log::warning("the checkpoint was written by " + std::to_string(table.size(0)) + " process(es), this job has " +
                   std::to_string(ranks) + ": " + instead +
                   ", so random draws (dropout) continue as they would not have in the first job");
    }
    return true;
  };
  if (group && state.rank_rng_states.defined() &&
      !written_by_others(state.rank_rng_states, "every rank resumes with rank 0's CPU random generator state")) {
    set_generator_state(at::detail::getDefaultCPUGenerator(), state.rank_rng_states.select(0, rank));
  }
  if (!device.is_cuda()) return;
  if (!state.rank_cuda_rng_states.defined()) {
    if (is_main) {
      log::warning(
          "the checkpoint keeps no CUDA random generator state (written on the CPU, or by an older "
          "trainer): random draws on the GPU (dropout) continue from the seed, not as they would have");
    }
    return;
  }
  if (written_by_others(state.rank_cuda_rng_states, "the GPUs' random generators continue from the seed")) return;
  set_generator_state(at::globalContext().defaultGenerator(device), state.rank_cuda_rng_states.select(0, rank));
}

void Trainer::Impl::keep_epoch_sums(const DeviceMeter& epoch_meter, const DeviceMeter::Reading& logged,
                                    LoopState& state) const {
  const DeviceMeter::Reading now = epoch_meter.read();
  if (!now.finite()) throw_nonfinite(epoch_meter.batches, state.global_step, last_path());
  state.epoch_sums = sums_of(now);
  state.logged_sums = sums_of(logged);
  state.skipped_in_epoch = skipped_in_epoch();
}

void Trainer::Impl::save_at_step(LoopState& state, const DeviceMeter& epoch_meter, int64_t epoch) {
  const std::string& monitor = options.checkpoint.monitor;
  std::optional<double> value;
  if (const auto found = latest_validation.find(monitor); found != latest_validation.end()) value = found->second;
  if (monitor.rfind("train/", 0) == 0) {
    const DeviceMeter::Reading reading = epoch_meter.read();
    if (monitor == "train/loss") value = reading.loss();
    for (const auto& [name, metric] : reading.metrics()) {
      if (monitor == "train/" + name) value = metric;
    }
  }
  std::vector<std::string> paths;
  std::vector<std::string> dropped;
  if (value) {
    const std::string best = update_top_k(state, *value, epoch, dropped);
    if (!best.empty()) paths.push_back(best);
  }
  paths.push_back(last_path());
  save(state, std::move(paths), std::move(dropped));
}

}  // namespace trainer::engine
