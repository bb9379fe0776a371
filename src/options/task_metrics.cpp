#include "trainer/options/task_metrics.h"

namespace trainer::options {

bool is_regression_metric(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view metric = name.substr(slash + 1);
  if (metric.size() > 6 && metric.substr(metric.size() - 6) == "_epoch") metric.remove_suffix(6);
  return metric == "mae" || metric == "rmse" || metric == "r2";
}

std::string regression_monitor_for(std::string_view monitor) {
  const size_t slash = monitor.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view metric = monitor.substr(slash + 1);
  if (metric != "acc" && metric != "acc_epoch") return {};
  return std::string(monitor.substr(0, slash)) + (metric == "acc" ? "/loss" : "/loss_epoch");
}

std::string better_mode(std::string_view monitor) {
  const size_t slash = monitor.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view metric = monitor.substr(slash + 1);
  if (metric.size() > 6 && metric.substr(metric.size() - 6) == "_epoch") metric.remove_suffix(6);
  if (metric == "acc" || metric == "r2") return "max";
  if (metric == "loss" || metric == "mae" || metric == "rmse") return "min";
  return {};
}

}  // namespace trainer::options
