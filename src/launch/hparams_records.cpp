#include "trainer/launch/hparams_records.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/config/sweeper.h"
#include "trainer/config/yaml.h"
#include "trainer/formats/tensorboard_writer.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

using config::Node;
using config::NodeType;
using formats::HParamValue;

namespace {

bool enabled(const Node* node) {
  if (node == nullptr || node->is_null()) return false;
  if (node->type() == NodeType::kBool) return node->as_bool();
  if (node->type() == NodeType::kInt) return node->as_int() != 0;
  return true;
}

HParamValue value_of(const Node& value, const std::string& text) {
  switch (value.type()) {
    case NodeType::kInt:
      return static_cast<double>(value.as_int());
    case NodeType::kFloat:  // the dashboard's JSON has no NaN or infinities: those show as text
      return std::isfinite(value.as_float()) ? HParamValue(value.as_float()) : HParamValue(text);
    case NodeType::kBool:
      return value.as_bool();
    case NodeType::kString:
      return value.as_string();
    default:
      return text;  // lists, dicts and null as typed
  }
}

// The metric columns of a job's metrics.csv header (epoch and step left out).
std::vector<std::string> metric_columns(const std::string& metrics_csv) {
  std::ifstream in(metrics_csv);
  std::string header;
  if (!in || !std::getline(in, header)) return {};
  std::vector<std::string> columns;
  size_t start = 0;
  while (start <= header.size()) {
    size_t comma = header.find(',', start);
    if (comma == std::string::npos) comma = header.size();
    std::string column = header.substr(start, comma - start);
    if (!column.empty() && column.back() == '\r') column.pop_back();
    if (column != "epoch" && column != "step" && !column.empty()) columns.push_back(column);
    start = comma + 1;
  }
  return columns;
}

bool same_value(const HParamValue& a, const HParamValue& b) { return a == b; }

bool value_less(const HParamValue& a, const HParamValue& b) {
  if (a.index() != b.index()) return a.index() < b.index();
  return a < b;
}

}  // namespace

std::optional<std::string> tensorboard_log_dir(const std::string& command, const Node& resolved_job,
                                               const std::string& run_dir) {
  // Evaluations (validate, test) write scalars only: their directory lies under the training run's,
  // and a session there would add a row to that run's or sweep's table.
  if (command != "fit") return std::nullopt;
  if (enabled(config::select(resolved_job, "trainer.fast_dev_run"))) return std::nullopt;
  const Node* section = config::select(resolved_job, "logger.tensorboard");
  if (section == nullptr || section->is_null()) return std::nullopt;
  const Node* save_dir = section->is_map() ? section->find("save_dir") : nullptr;
  if (save_dir != nullptr && save_dir->type() == NodeType::kString) return save_dir->as_string();
  const Node* root_dir = config::select(resolved_job, "trainer.default_root_dir");
  const std::string base =
      root_dir != nullptr && root_dir->type() == NodeType::kString ? root_dir->as_string() : run_dir;
  return base + "/tensorboard";
}

HParamValue hparam_value(const std::string& value_text) {
  try {
    const config::Override parsed = config::parse_override("x=" + value_text);
    if (parsed.has_value && !parsed.is_sweep()) return value_of(parsed.value, value_text);
  } catch (const Error&) {
  }
  return value_text;
}

formats::HParams hparams_of_overrides(const std::vector<std::string>& task_overrides) {
  formats::HParams hparams;
  for (const std::string& text : task_overrides) {
    std::string key;
    HParamValue value;
    try {
      const config::Override parsed = config::parse_override(text);
      if (parsed.kind == config::OverrideKind::kDelete || !parsed.has_value || parsed.is_sweep()) continue;
      key = parsed.key_with_package();
      value = value_of(parsed.value, parsed.value_text);
    } catch (const Error&) {
      const size_t equals = text.find('=');
      if (equals == std::string::npos) continue;
      key = text.substr(0, equals);
      key.erase(0, key.find_first_not_of('+'));
      value = text.substr(equals + 1);
    }
    const auto same_key = [&](const auto& entry) { return entry.first == key; };
    if (auto found = std::find_if(hparams.begin(), hparams.end(), same_key); found != hparams.end()) {
      found->second = value;  // the later override wins, as in the config
    } else {
      hparams.emplace_back(key, value);
    }
  }
  return hparams;
}

std::string session_group(const Node& hydra, const std::string& run_dir) {
  const Node* mode = hydra.find("mode");
  const Node* num = config::select(hydra, "job.num");
  if (mode == nullptr || mode->type() != NodeType::kString || mode->as_string() != "MULTIRUN") return "";
  if (num == nullptr || num->type() != NodeType::kInt) return "";
  // The sweep's directory is the job's nearest parent that holds the sweep's state (.sweep/): its
  // hydra.sweep.dir may hold ${now:...}, which this process would resolve to another time.
  std::string name;
  std::error_code ec;
  const fs::path job = fs::absolute(run_dir, ec).lexically_normal();
  for (fs::path dir = job.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (fs::is_directory(sweep_state_dir(dir.string()), ec)) {
      name = dir.filename().string();
      break;
    }
  }
  if (name.empty()) {  // not planned here (a hand-made record): the configured name, as written
    const Node* dir = config::select(hydra, "sweep.dir");
    std::string sweep = dir != nullptr && dir->type() == NodeType::kString ? dir->as_string() : std::string();
    while (sweep.size() > 1 && sweep.back() == '/') sweep.pop_back();
    name = fs::path(sweep).filename().string();
  }
  return (name.empty() ? std::string("sweep") : name) + "/" + std::to_string(num->as_int());
}

const char* HParamsSession::file_name() { return "events.out.tfevents.0.hparams"; }

HParamsSession::HParamsSession(const std::string& log_dir, const formats::HParams& hparams, const std::string& group)
    : path_(log_dir + "/" + file_name()) {
  const double now = formats::TensorBoardWriter::now();
  start_ = formats::session_start_content(hparams, group, now);
  formats::write_hparams_event_file(path_, {{formats::kSessionStartTag, start_}}, now);
}

void HParamsSession::end(formats::SessionStatus status) {
  const double now = formats::TensorBoardWriter::now();
  formats::write_hparams_event_file(
      path_,
      {{formats::kSessionStartTag, start_}, {formats::kSessionEndTag, formats::session_end_content(status, now)}}, now);
}

void write_sweep_experiment(const SweepPlan& plan, const std::string& first_metric) {
  // Only for a sweep whose jobs write TensorBoard logs (multirun.yaml is the first job's config).
  try {
    const Node first = config::load_yaml_file((fs::path(plan.sweep_dir) / "multirun.yaml").string()).root;
    if (!tensorboard_log_dir(plan.command, first, plan.sweep_dir)) return;
  } catch (const Error&) {
    return;
  }
  // Every overridden key, in the order the jobs first give it, with the values they take.
  std::vector<std::string> keys;
  std::map<std::string, std::vector<HParamValue>> values;
  std::vector<std::string> metrics = {first_metric};
  for (const PlannedJob& job : plan.jobs) {
    std::vector<std::string> task;
    for (const std::string& o : job.overrides) {
      if (!config::is_hydra_override(o)) task.push_back(o);
    }
    for (auto& [key, value] : hparams_of_overrides(task)) {
      if (!values.count(key)) keys.push_back(key);
      values[key].push_back(value);
    }
    for (std::string& column : metric_columns((fs::path(job.run_dir) / "metrics.csv").string())) {
      if (std::find(metrics.begin(), metrics.end(), column) == metrics.end()) metrics.push_back(std::move(column));
    }
  }
  // A grid's values are its domain; a sampler's numbers are shown as the interval they span.
  const bool grid = plan.sweeper.is_null() || config::sweeper_kind(plan.sweeper) == config::SweeperKind::kBasic;
  std::vector<formats::HParamDomain> domains;
  for (const std::string& key : keys) {
    std::vector<HParamValue> seen = values[key];
    formats::HParamDomain domain;
    domain.name = key;
    // A job that does not override the key takes the config's value: the key differs then too.
    domain.differs = seen.size() < plan.jobs.size() ||
                     std::any_of(seen.begin(), seen.end(), [&](const auto& v) { return !same_value(v, seen[0]); });
    const bool numbers =
        std::all_of(seen.begin(), seen.end(), [](const HParamValue& v) { return std::holds_alternative<double>(v); });
    if (!grid && numbers) {
      const auto [low, high] = std::minmax_element(seen.begin(), seen.end(), value_less);
      domain.interval = std::make_pair(std::get<double>(*low), std::get<double>(*high));
    } else {
      std::sort(seen.begin(), seen.end(), value_less);
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      domain.discrete = std::move(seen);
    }
    domains.push_back(std::move(domain));
  }
  const double now = formats::TensorBoardWriter::now();
  const std::string name = fs::path(plan.sweep_dir).filename().string();
  formats::write_hparams_event_file(
      (fs::path(plan.sweep_dir) / "events.out.tfevents.0.hparams-experiment").string(),
      {{formats::kExperimentTag, formats::experiment_content(name, domains, metrics, now)}}, now);
}

}  // namespace trainer::launch
