// logger.mlflow: one MLflow run per job, fed through tracking::MlflowRun.
#include "trainer/engine/loggers/mlflow_logger.h"

#include <fstream>

#include "trainer/config/python_str.h"
#include "trainer/engine/posix_files.h"
#include "trainer/options/mlflow_settings.h"
#include "trainer/tracking/mlflow_run.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

// MLflow takes keys of letters, digits, '_', '-', '.', ' ' and '/': anything else becomes '_'.
std::string mlflow_key(const std::string& key) {
  std::string out = key;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == ' ' || c == '/')) c = '_';
  }
  return out;
}

// The config as MLflow params: dotted keys (as overrides write them), values as Python's str().
void flatten(const config::Node& node, const std::string& prefix, tracking::MlflowTags& out) {
  if (node.is_map() && !node.entries().empty()) {
    for (const auto& entry : node.entries()) {
      flatten(entry.value, prefix.empty() ? entry.key : prefix + "." + entry.key, out);
    }
    return;
  }
  out.emplace_back(mlflow_key(prefix), tracking::cut_param_value(config::python_str(node)));
}

class MlflowLogger final : public MetricLogger {
 public:
  MlflowLogger(options::MlflowSettings settings, std::string run_dir)
      : settings_(std::move(settings)), record_path_(std::move(run_dir) + "/" + kMlflowRunRecord) {
    if (settings_.run_name.empty()) settings_.run_name = "run";
    // Checked now, so that a URI trainer cannot log to is an error before the loop starts.
    (void)tracking::open_mlflow_store(settings_.tracking_uri, "logger.mlflow.tracking_uri");
  }

  void log_hyperparams(const config::ConfigView& root) override {
    tracking::MlflowTags all;
    flatten(root.node(), "", all);
    // MLflow refuses a whole batch for one key over its limit: such keys are left out, and said.
    std::string long_keys;
    for (auto& param : all) {
      if (param.first.size() <= tracking::kMaxKeyLength) {
        params_.push_back(std::move(param));
      } else {
        long_keys += (long_keys.empty() ? "" : ", ") + param.first.substr(0, 40) + "...";
      }
    }
    if (!long_keys.empty()) {
      log::warning("MLflow: config keys longer than " + std::to_string(tracking::kMaxKeyLength) +
                   " characters are not logged as params (MLflow refuses them): " + long_keys);
    }
  }

  void on_fit_start(std::optional<int64_t> resumed_step, const std::string& /*saved_state*/) override {
    // A resumed fit continues the run its first attempt made (unless run_id names one).
    if (resumed_step && settings_.run_id.empty() && posix::exists(record_path_)) {
      std::ifstream in(record_path_);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (tracking::run_record_field(text, "tracking_uri") == settings_.tracking_uri) {
        settings_.run_id = tracking::run_record_field(text, "run_id");
        if (!settings_.run_id.empty()) {
          log::info("MLflow: continuing run " + settings_.run_id + " at " + settings_.tracking_uri +
                    " (its params stay those of its first attempt)");
        }
      }
    }
    run().start();
  }

  void log_metrics(const MetricRow& metrics, int64_t epoch, int64_t step) override {
    MetricRow values;
    values.reserve(metrics.size() + 1);
    for (const auto& [name, value] : metrics) {
      values.emplace_back(mlflow_key(settings_.prefix.empty() ? name : settings_.prefix + "-" + name), value);
    }
    if (epoch >= 0) values.emplace_back(settings_.prefix.empty() ? "epoch" : settings_.prefix + "-epoch", epoch);
    run().log_metrics(values, std::max<int64_t>(step, 0));
  }

  void finalize(RunEnd end) override {
    try {
      run().finish(end == RunEnd::kFinished ? tracking::MlflowRunStatus::kFinished
                   : end == RunEnd::kFailed ? tracking::MlflowRunStatus::kFailed
                                            : tracking::MlflowRunStatus::kKilled,
                   end == RunEnd::kFinished ? 30 : 5);
    } catch (const std::exception& error) {
      log::warning(std::string("MLflow: ") + error.what());
    }
  }

 private:
  // Made at the first event, when the params are known and a resumed fit has found its run.
  tracking::MlflowRun& run() {
    if (!run_) make_run();
    return *run_;
  }

  void make_run() {
    tracking::MlflowRunOptions options;
    options.tracking_uri = settings_.tracking_uri;
    options.experiment_name = settings_.experiment_name;
    options.run_name = settings_.run_name;
    options.artifact_location = settings_.artifact_location;
    options.run_id = settings_.run_id;
    options.tags = settings_.tags;
    options.tags.emplace_back("mlflow.source.name", "trainer");
    options.tags.emplace_back("mlflow.source.type", "LOCAL");
    // MLflow's params cannot change: a continued run (run_id, or a resumed fit) keeps its own.
    if (settings_.run_id.empty()) options.params = params_;
    options.warn = [](const std::string& message) { log::warning(message); };
    const std::string uri = settings_.tracking_uri;
    const std::string record = record_path_;
    options.on_run = [uri, record](const std::string& run_id, const std::string& experiment_id) {
      try {
        // trainer.default_root_dir holds the loggers' files and may not exist yet (Lightning makes it).
        posix::make_directories(posix::parent(record));
        AtomicWriteOptions write;
        write.noun = "MLflow run record";
        write.durable = false;
        write_file_atomically(
            record, tracking::run_record({{"tracking_uri", uri}, {"experiment_id", experiment_id}, {"run_id", run_id}}),
            write);
      } catch (const std::exception& error) {
        log::warning(std::string("MLflow: ") + error.what());
      }
      log::info("MLflow: run " + run_id + " at " + uri);
    };
    run_ = std::make_unique<tracking::MlflowRun>(std::move(options));
  }

  options::MlflowSettings settings_;
  std::string record_path_;
  tracking::MlflowTags params_;
  std::unique_ptr<tracking::MlflowRun> run_;
};

}  // namespace

std::unique_ptr<MetricLogger> make_mlflow_logger(const config::ConfigView& section, const std::string& run_dir) {
  return std::make_unique<MlflowLogger>(options::read_mlflow_settings(section), run_dir);
}

}  // namespace trainer::engine
