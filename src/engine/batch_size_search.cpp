#include "trainer/engine/batch_size_search.h"

#include <algorithm>
#include <cstdio>

#include "trainer/config/node.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

ScaleMode parse_mode(const config::ConfigView& view, const std::string& key) {
  const std::string text = view.get<std::string>(key);
  if (text == "power") return ScaleMode::kPower;
  if (text == "binsearch") return ScaleMode::kBinsearch;
  throw Error(view.full_path(key), "unknown batch-size search mode '" + text + "'",
              "Use power (double until a trial fails) or binsearch (double, then bisect).");
}

int64_t read_at_least(const config::ConfigView& view, const std::string& key, int64_t fallback, int64_t minimum,
                      const std::string& fix) {
  const int64_t value = view.get_or<int64_t>(key, fallback);
  if (value < minimum) {
    throw Error(view.full_path(key), "must be at least " + std::to_string(minimum) + ", got " + std::to_string(value),
                fix);
  }
  return value;
}

std::string megabytes(double mb) {
  char text[32];
  std::snprintf(text, sizeof text, mb < 10 ? "%.3f" : "%.1f", mb);
  return text;
}

}  // namespace

const char* scale_mode_name(ScaleMode mode) { return mode == ScaleMode::kPower ? "power" : "binsearch"; }

TunerOptions TunerOptions::from_config(const config::ConfigView& root) {
  TunerOptions o;
  if (root.has("trainer.auto_scale_batch_size")) {
    const config::Node& node = root.node("trainer.auto_scale_batch_size");
    if (node.type() == config::NodeType::kBool) {
      if (node.as_bool()) o.auto_scale = ScaleMode::kPower;  // Lightning 1.x: true means power
    } else if (!node.is_null()) {
      o.auto_scale = parse_mode(root, "trainer.auto_scale_batch_size");
    }
  }
  if (!root.has("tuner") || root.node("tuner").is_null()) return o;
  const config::ConfigView t = root.sub("tuner");
  if (t.has("mode") && !t.node("mode").is_null()) o.mode = parse_mode(t, "mode");
  o.init_val = read_at_least(t, "init_val", o.init_val, 1, "Start from a batch of 1 or more (the default is 2).");
  o.max_trials = read_at_least(t, "max_trials", o.max_trials, 1, "Allow at least one trial (the default is 25).");
  o.steps_per_trial =
      read_at_least(t, "steps_per_trial", o.steps_per_trial, 1, "Run at least one step per trial (the default is 3).");
  o.max_memory_mb = t.get_or<std::optional<double>>("max_memory_mb", std::nullopt);
  if (o.max_memory_mb && !(*o.max_memory_mb > 0)) {
    throw Error(t.full_path("max_memory_mb"), "must be above 0 MiB",
                "Give the memory a trial may take in MiB (e.g. 2048), or remove the key for the default.");
  }
  return o;
}

BatchSizeSearchResult search_batch_size(ScaleMode mode, int64_t init_val, int64_t max_trials, int64_t max_batch,
                                        const std::function<BatchSizeTrial(int64_t)>& trial) {
  BatchSizeSearchResult result;
  result.mode = mode;
  int64_t size = std::max<int64_t>(1, std::min(init_val, max_batch));
  int64_t fits = 0;    // the largest batch that fit so far
  int64_t fails = 0;   // the smallest batch that did not (0: none yet)
  result.stopped_because = "max_trials (" + std::to_string(max_trials) + ") reached";
  while (static_cast<int64_t>(result.trials.size()) < max_trials) {
    BatchSizeTrial outcome = trial(size);
    outcome.batch_size = size;
    result.trials.push_back(outcome);
    if (outcome.fits) {
      fits = std::max(fits, size);
    } else {
      fails = fails == 0 ? size : std::min(fails, size);
    }
    if (fits == 0) {
      result.stopped_because = "the first trial did not fit";
      break;
    }
    if (fails == 0) {  // still doubling (both modes)
      if (size >= max_batch) {
        result.stopped_because = "the batch reached the training set size (" + std::to_string(max_batch) + ")";
        break;
      }
      size = std::min(2 * size, max_batch);
      continue;
    }
    if (mode == ScaleMode::kPower) {
      result.stopped_because = "a trial did not fit";
      break;
    }
    if (fails - fits <= 1) {
      result.stopped_because = "the bisection closed in (" + std::to_string(fits) + " fits, " +
                               std::to_string(fails) + " does not)";
      break;
    }
    size = fits + (fails - fits) / 2;
  }
  result.batch_size = fits;
  return result;
}

std::string describe_search(const BatchSizeSearchResult& result, const std::string& limit_text) {
  std::string text = "batch size search (" + std::string(scale_mode_name(result.mode)) + ", limit " + limit_text + "): ";
  text += result.batch_size > 0 ? "the largest batch that fit is " + std::to_string(result.batch_size)
                                : std::string("no batch fit");
  text += " after " + std::to_string(result.trials.size()) + " trial(s); stopped because " + result.stopped_because +
          ". Trials:";
  for (const BatchSizeTrial& trial : result.trials) {
    text += " " + std::to_string(trial.batch_size) + " " + (trial.fits ? "fit" : "failed") + " (" +
            megabytes(trial.memory_mb) + " MiB" + (trial.fits ? "" : ": " + trial.failure) + ");";
  }
  text.back() = '.';
  return text;
}

std::string search_result_yaml(const BatchSizeSearchResult& result, const std::string& limit_text, double limit_mb,
                               double seconds) {
  config::Node root = config::Node::map();
  root.set("mode", config::Node::string(scale_mode_name(result.mode)));
  root.set("batch_size", config::Node::integer(result.batch_size));
  root.set("limit_mb", config::Node::floating(limit_mb));
  root.set("limit", config::Node::string(limit_text));
  root.set("stopped_because", config::Node::string(result.stopped_because));
  root.set("seconds", config::Node::floating(seconds));
  config::Node& trials = root.set("trials", config::Node::list());
  for (const BatchSizeTrial& trial : result.trials) {
    config::Node entry = config::Node::map();
    entry.set("batch_size", config::Node::integer(trial.batch_size));
    entry.set("fits", config::Node::boolean(trial.fits));
    entry.set("memory_mb", config::Node::floating(trial.memory_mb));
    if (!trial.fits) entry.set("failure", config::Node::string(trial.failure));
    trials.push_back(std::move(entry));
  }
  return config::to_yaml(root);
}

}  // namespace trainer::engine
