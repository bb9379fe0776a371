#include "trainer/launch/mlflow_sweep_run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "trainer/config/config_view.h"
#include "trainer/launch/hparams_records.h"
#include "trainer/launch/sweep_plan.h"
#include "trainer/options/mlflow_settings.h"
#include "trainer/tracking/mlflow_store.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/log.h"

namespace fs = std::filesystem;

namespace trainer::launch {

using config::Node;
using config::NodeType;

namespace {

std::string record_path(const std::string& sweep_dir) { return sweep_state_dir(sweep_dir) + "/mlflow_parent.yaml"; }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Holds an exclusive flock while the parent run is looked up or made: parallel jobs make one.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// The sweep's parent run id at this tracking URI and experiment: the recorded one, or one made now.
std::string parent_run(const std::string& sweep_dir, const options::MlflowSettings& settings) {
  const FileLock lock(sweep_state_dir(sweep_dir) + "/mlflow_parent.lock");
  const std::string path = record_path(sweep_dir);
  const std::string text = read_text(path);
  if (!text.empty() && tracking::run_record_field(text, "tracking_uri") == settings.tracking_uri &&
      tracking::run_record_field(text, "experiment_name") == settings.experiment_name) {
    return tracking::run_record_field(text, "run_id");
  }
  const auto store = tracking::open_mlflow_store(settings.tracking_uri, "logger.mlflow.tracking_uri", 5);
  const std::string experiment = store->experiment_id(settings.experiment_name, settings.artifact_location);
  tracking::MlflowTags tags = settings.tags;
  tags.emplace_back("trainer.sweep_dir", sweep_dir);
  std::string run_id = store->create_run(experiment, fs::path(sweep_dir).filename().string(), tracking::now_ms(), tags);
  AtomicWriteOptions options;
  options.noun = "MLflow parent run record";
  write_file_atomically(path,
                        tracking::run_record({{"tracking_uri", settings.tracking_uri},
                                              {"experiment_name", settings.experiment_name},
                                              {"experiment_id", experiment},
                                              {"run_id", run_id}}),
                        options);
  log::info("MLflow: the sweep's run " + run_id + " at " + settings.tracking_uri);
  return run_id;
}

}  // namespace

void prepare_mlflow_job(Node& resolved_job, const Node& hydra, const std::string& run_dir) {
  Node* section = config::select(resolved_job, "logger.mlflow");
  if (section == nullptr || !section->is_map()) return;
  const options::MlflowSettings settings =
      options::read_mlflow_settings(config::ConfigView(resolved_job).sub("logger.mlflow"));
  const std::string group = session_group(hydra, run_dir);
  if (settings.run_name.empty()) {
    // A single run: its directory from where trainer ran (outputs/2026-11-29/10-00-00), else its
    // last two parts.
    std::string name = group;
    if (name.empty()) {
      const fs::path dir(run_dir);
      const Node* cwd = config::select(hydra, "runtime.cwd");
      const fs::path from =
          cwd != nullptr && cwd->type() == NodeType::kString ? fs::path(cwd->as_string()) : fs::current_path();
      const fs::path relative = dir.lexically_relative(from);
      name = !relative.empty() && *relative.begin() != ".." && relative != "."
                 ? relative.string()
                 : (dir.parent_path().filename() / dir.filename()).string();
    }
    section->set("run_name", Node::string(name));
  }
  const Node* sweep_dir = config::select(hydra, "sweep.dir");
  if (group.empty() || sweep_dir == nullptr || sweep_dir->type() != NodeType::kString) return;
  // The sweep's directory as the launcher planned it: the job's run dir's parent is not always it
  // (hydra.sweep.subdir may nest), so take the one that holds .sweep/.
  fs::path sweep = run_dir;
  while (!sweep.empty() && sweep != sweep.root_path() && !fs::exists(sweep / ".sweep")) sweep = sweep.parent_path();
  if (!fs::exists(sweep / ".sweep")) return;
  bool tagged = false;
  for (const auto& [key, value] : settings.tags) tagged = tagged || key == "mlflow.parentRunId";
  if (tagged) return;  // the user's own parent
  try {
    const std::string parent = parent_run(sweep.string(), settings);
    Node* tags = section->find("tags");
    if (tags == nullptr || !tags->is_map()) {
      section->set("tags", Node::map());
      tags = section->find("tags");
    }
    tags->set("mlflow.parentRunId", Node::string(parent));
  } catch (const std::exception& error) {
    log::warning(std::string("MLflow: the sweep's parent run could not be made (") + error.what() +
                 "); this job's run is logged on its own");
  }
}

void end_mlflow_sweep_run(const std::string& sweep_dir, tracking::MlflowRunStatus status) {
  const std::string text = read_text(record_path(sweep_dir));
  if (text.empty()) return;
  try {
    const auto store =
        tracking::open_mlflow_store(tracking::run_record_field(text, "tracking_uri"), "logger.mlflow.tracking_uri", 5);
    store->update_run(tracking::run_record_field(text, "run_id"), status, tracking::now_ms());
  } catch (const std::exception& error) {
    log::warning(std::string("MLflow: the sweep's run was not ended: ") + error.what());
  }
}

}  // namespace trainer::launch
