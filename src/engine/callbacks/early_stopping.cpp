#include "trainer/engine/callbacks/early_stopping.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

std::string number(double value, int digits = 3) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

}  // namespace

EarlyStoppingOptions EarlyStoppingOptions::from_config(const config::ConfigView& section) {
  EarlyStoppingOptions o;
  const options::OptionReader r(section);
  o.monitor = r.choice("monitor");
  o.mode_max = r.choice("mode") == "max";
  o.patience = r.get<int64_t>("patience");
  o.min_delta = std::fabs(r.get<double>("min_delta"));
  o.check_finite = r.get<bool>("check_finite");
  o.stopping_threshold = r.get<std::optional<double>>("stopping_threshold");
  o.divergence_threshold = r.get<std::optional<double>>("divergence_threshold");
  return o;
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)),
      best_(options_.mode_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {}

std::string EarlyStopping::evaluate(double current) {
  const bool max = options_.mode_max;
  auto better = [max](double a, double b) { return max ? a > b : a < b; };
  const std::string& name = options_.monitor;
  if (options_.check_finite && !std::isfinite(current)) {
    return "Monitored metric " + name + " = " + std::to_string(current) + " is not finite. Previous best value was " +
           number(best_) + ". Signaling Trainer to stop.";
  }
  if (options_.stopping_threshold && better(current, *options_.stopping_threshold)) {
    return "Stopping threshold reached: " + name + " = " + std::to_string(current) + (max ? " > " : " < ") +
           std::to_string(*options_.stopping_threshold) + ". Signaling Trainer to stop.";
  }
  if (options_.divergence_threshold && better(-current, -*options_.divergence_threshold)) {
    return "Divergence threshold reached: " + name + " = " + std::to_string(current) + (max ? " < " : " > ") +
           std::to_string(*options_.divergence_threshold) + ". Signaling Trainer to stop.";
  }
  const double shifted = max ? current - options_.min_delta : current + options_.min_delta;
  if (better(shifted, best_)) {
    log::info(std::isfinite(best_)
                  ? "Metric " + name + " improved by " + number(std::fabs(best_ - current)) +
                        " >= min_delta = " + number(options_.min_delta) + ". New best score: " + number(current)
                  : "Metric " + name + " improved. New best score: " + number(current));
    best_ = current;
    wait_ = 0;
    return "";
  }
  ++wait_;
  if (wait_ >= options_.patience) {
    return "Monitored metric " + name + " did not improve in the last " + std::to_string(wait_) +
           " records. Best score: " + number(best_) + ". Signaling Trainer to stop.";
  }
  return "";
}

void EarlyStopping::on_epoch_end(FitContext& context, const std::map<std::string, double>& metrics, bool validated) {
  auto found = metrics.find(options_.monitor);
  if (found == metrics.end()) {
    const bool is_val = options_.monitor.rfind("val/", 0) == 0;
    if (is_val && !validated) return;  // checked in the epochs that validate
    std::string known;
    for (const auto& entry : metrics) known += (known.empty() ? "" : ", ") + entry.first;
    throw Error("callbacks.early_stopping.monitor",
                "early stopping watches '" + options_.monitor + "', which is not logged (logged: " + known + ")",
                "Set callbacks.early_stopping.monitor to one of the logged metrics.");
  }
  const std::string reason = evaluate(found->second);
  if (!reason.empty()) context.request_stop(reason);
}

void EarlyStopping::on_validation_end(FitContext& context, const std::map<std::string, double>& metrics) {
  auto found = metrics.find(options_.monitor);
  if (found == metrics.end()) return;  // a train/* monitor is checked at the epoch's end
  const std::string reason = evaluate(found->second);
  if (!reason.empty()) context.request_stop(reason);
}

std::string EarlyStopping::state() const {
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), "%.17g %lld", best_, static_cast<long long>(wait_));
  return buffer;
}

void EarlyStopping::load_state(const std::string& text) {
  std::istringstream in(text);
  std::string best;
  long long wait = 0;
  if (in >> best >> wait) {
    best_ = std::strtod(best.c_str(), nullptr);  // also reads "inf" / "-inf"
    wait_ = wait;
  }
}

}  // namespace trainer::engine
