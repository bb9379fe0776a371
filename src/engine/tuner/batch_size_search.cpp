#include "trainer/engine/tuner/batch_size_search.h"

#include <algorithm>
#include <cstdio>

#include "trainer/config/node.h"
#include "trainer/config/yaml.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"

namespace trainer::engine {
namespace {

std::string megabytes(double mb) {
  char text[32];
  std::snprintf(text, sizeof text, mb < 10 ? "%.3f" : "%.1f", mb);
  return text;
}

}  // namespace

const char* scale_mode_name(ScaleMode mode) { return mode == ScaleMode::kPower ? "power" : "binsearch"; }

TunerOptions TunerOptions::from_config(const config::ConfigView& root) {
  TunerOptions o;
  auto mode_of = [](const std::string& name) {
    return name == "binsearch" ? ScaleMode::kBinsearch : ScaleMode::kPower;
  };
  if (root.has("trainer")) {
    // Lightning 1.x: true means power; false and null: no search before fit.
    const std::string automatic = options::OptionReader(root.sub("trainer")).choice("auto_scale_batch_size");
    if (automatic == "true" || automatic == "power" || automatic == "binsearch") {
      o.auto_scale = mode_of(automatic == "true" ? "power" : automatic);
    }
  }
  // trainer tune batch_size searches in the mode tuner.mode names, else the one
  // trainer.auto_scale_batch_size names (the launcher refuses the two naming different modes).
  if (o.auto_scale) o.mode = *o.auto_scale;
  if (!root.has("tuner") || root.node("tuner").is_null()) return o;
  const options::OptionReader t(root.sub("tuner"));
  if (root.has("tuner.mode") && !root.node("tuner.mode").is_null()) {
    o.mode = mode_of(t.choice("mode"));
    if (o.auto_scale) o.auto_scale = o.mode;  // auto_scale_batch_size=true: tuner.mode says how
  }
  o.init_val = t.get<int64_t>("init_val");
  o.max_trials = t.get<int64_t>("max_trials");
  o.steps_per_trial = t.get<int64_t>("steps_per_trial");
  o.max_memory_mb = t.get<std::optional<double>>("max_memory_mb");
  return o;
}

BatchSizeSearchResult search_batch_size(ScaleMode mode, int64_t init_val, int64_t max_trials, int64_t max_batch,
                                        const std::function<BatchSizeTrial(int64_t)>& trial) {
  BatchSizeSearchResult result;
  result.mode = mode;
  int64_t size = std::max<int64_t>(1, std::min(init_val, max_batch));
  int64_t fits = 0;   // the largest batch that fit so far
  int64_t fails = 0;  // the smallest batch that did not (0: none yet)
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
      result.stopped_because =
          "the bisection closed in (" + std::to_string(fits) + " fits, " + std::to_string(fails) + " does not)";
      break;
    }
    size = fits + (fails - fits) / 2;
  }
  result.batch_size = fits;
  return result;
}

std::string describe_search(const BatchSizeSearchResult& result, const std::string& limit_text) {
  std::string text =
      "batch size search (" + std::string(scale_mode_name(result.mode)) + ", limit " + limit_text + "): ";
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
