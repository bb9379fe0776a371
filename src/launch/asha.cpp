// ASHA's rung bookkeeping (see asha.h).
#include "trainer/launch/asha.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "trainer/util/error.h"

namespace trainer::launch {
namespace {

using config::Node;
using config::NodeType;

const Node* child(const Node& node, const char* key) { return node.is_map() ? node.find(key) : nullptr; }

std::optional<std::string> string_setting(const Node& sweeper, const char* key) {
  const Node* node = child(sweeper, key);
  if (node == nullptr || node->is_null()) return std::nullopt;
  if (!node->is_string()) {
    throw Error(std::string("hydra.sweeper.") + key, "expected a string",
                std::string("e.g. hydra.sweeper.") + key + (std::string(key) == "mode" ? "=max" : "=val/acc"));
  }
  return node->as_string();
}

double number_setting(const Node& sweeper, const char* key, double fallback, const char* example) {
  const Node* node = child(sweeper, key);
  if (node == nullptr || node->is_null()) return fallback;
  if (node->type() == NodeType::kInt && !node->is_big_int()) return static_cast<double>(node->as_int());
  if (node->type() == NodeType::kFloat) return node->as_float();
  throw Error(std::string("hydra.sweeper.") + key, "expected a number",
              std::string("e.g. hydra.sweeper.") + key + "=" + example);
}

int64_t epochs_setting(const Node& sweeper, const char* key, int64_t fallback, const char* example) {
  const double value = number_setting(sweeper, key, static_cast<double>(fallback), example);
  if (value != std::floor(value) || value < 1 || value > 1e15) {
    throw Error(std::string("hydra.sweeper.") + key, "expected a whole number of epochs (1 or more)",
                std::string("e.g. hydra.sweeper.") + key + "=" + example);
  }
  return static_cast<int64_t>(value);
}

// numpy.percentile's default (linear) of the values, q in [0, 100]; values non-empty.
double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double rank = q / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

}  // namespace

AshaOptions asha_options(const Node& sweeper, const Node& job_config) {
  AshaOptions options;
  const Node* checkpoint = child(job_config, "callbacks");
  checkpoint = checkpoint ? child(*checkpoint, "model_checkpoint") : nullptr;
  const Node* monitor = checkpoint ? child(*checkpoint, "monitor") : nullptr;
  const Node* monitor_mode = checkpoint ? child(*checkpoint, "mode") : nullptr;

  if (std::optional<std::string> metric = string_setting(sweeper, "metric")) {
    options.metric = *metric;
  } else if (monitor && monitor->is_string()) {
    options.metric = monitor->as_string();
  } else {
    throw Error("hydra.sweeper.metric",
                "ASHA needs a metric to compare jobs by, and the job has no "
                "monitored metric (callbacks.model_checkpoint.monitor)",
                "name a metric the jobs log every epoch, e.g. hydra.sweeper.metric=val/acc "
                "hydra.sweeper.mode=max");
  }
  if (std::optional<std::string> mode = string_setting(sweeper, "mode")) {
    options.mode = *mode;
  } else if (!string_setting(sweeper, "metric") && monitor_mode && monitor_mode->is_string()) {
    options.mode = monitor_mode->as_string();
  } else {
    options.mode = "min";
  }
  options.max_t = epochs_setting(sweeper, "max_t", options.max_t, "20");
  options.grace_period = epochs_setting(sweeper, "grace_period", options.grace_period, "1");
  options.reduction_factor = number_setting(sweeper, "reduction_factor", options.reduction_factor, "4");
  AshaScheduler check(options);  // validates
  return options;
}

AshaScheduler::AshaScheduler(AshaOptions options) : options_(std::move(options)) {
  if (options_.mode != "min" && options_.mode != "max") {
    throw Error("hydra.sweeper.mode", "mode is '" + options_.mode + "'; ASHA needs min or max",
                "hydra.sweeper.mode=max for accuracies, hydra.sweeper.mode=min for losses");
  }
  if (options_.metric.empty()) {
    throw Error("hydra.sweeper.metric", "ASHA needs a metric to compare jobs by",
                "e.g. hydra.sweeper.metric=val/acc hydra.sweeper.mode=max");
  }
  if (options_.grace_period < 1) {
    throw Error("hydra.sweeper.grace_period", "grace_period must be at least 1 epoch",
                "e.g. hydra.sweeper.grace_period=1");
  }
  if (options_.max_t < options_.grace_period) {
    throw Error("hydra.sweeper.max_t",
                "max_t (" + std::to_string(options_.max_t) + ") is below grace_period (" +
                    std::to_string(options_.grace_period) + ")",
                "give max_t at least grace_period epochs, e.g. hydra.sweeper.max_t=" +
                    std::to_string(options_.grace_period * 4));
  }
  if (!(options_.reduction_factor > 1.0) || !std::isfinite(options_.reduction_factor)) {
    throw Error("hydra.sweeper.reduction_factor", "reduction_factor must be a number above 1",
                "e.g. hydra.sweeper.reduction_factor=4 (keep the top quarter at each rung)");
  }
  // grace_period * rf^k <= max_t; a relative tolerance keeps max_t itself when rf^k lands on it.
  const double limit = static_cast<double>(options_.max_t) * (1 + 1e-9);
  for (double milestone = static_cast<double>(options_.grace_period); milestone <= limit;
       milestone *= options_.reduction_factor) {
    rungs_.insert(rungs_.begin(), Rung{milestone, {}});
  }
}

AshaScheduler::Decision AshaScheduler::on_result(int job, int64_t t, double metric) {
  const double time = static_cast<double>(t);
  if (std::isnan(metric)) return Decision::kStop;
  const double reward = options_.mode == "max" ? metric : -metric;
  Decision decision = Decision::kContinue;
  for (Rung& rung : rungs_) {  // highest milestone first
    if (time + 1e-9 < rung.milestone || rung.rewards.count(job)) continue;
    if (!rung.rewards.empty()) {
      std::vector<double> recorded;
      recorded.reserve(rung.rewards.size());
      for (const auto& [other, value] : rung.rewards) recorded.push_back(value);
      const double cutoff = percentile(std::move(recorded), (1.0 - 1.0 / options_.reduction_factor) * 100.0);
      if (reward < cutoff) decision = Decision::kStop;
    }
    rung.rewards[job] = reward;
    break;
  }
  if (decision == Decision::kContinue && t >= options_.max_t) decision = Decision::kComplete;
  return decision;
}

std::vector<double> AshaScheduler::milestones() const {
  std::vector<double> out;
  for (auto it = rungs_.rbegin(); it != rungs_.rend(); ++it) out.push_back(it->milestone);
  return out;
}

size_t AshaScheduler::recorded_at(size_t k) const {
  return k < rungs_.size() ? rungs_[rungs_.size() - 1 - k].rewards.size() : 0;
}

const char* decision_name(AshaScheduler::Decision decision) {
  switch (decision) {
    case AshaScheduler::Decision::kContinue:
      return "continue";
    case AshaScheduler::Decision::kStop:
      return "stop";
    case AshaScheduler::Decision::kComplete:
      return "complete";
  }
  return "?";
}

}  // namespace trainer::launch
