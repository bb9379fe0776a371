#include "trainer/launch/job_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "trainer/config/yaml.h"
#include "trainer/launch/evaluation_run.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

void refuse_overwriting_run(const std::string& run_dir) {
  std::error_code ec;
  const fs::path checkpoints = fs::path(run_dir) / "checkpoints";
  for (const auto& entry : fs::directory_iterator(checkpoints, ec)) {
    if (entry.path().extension() != ".ckpt") continue;
    throw Error("hydra.run.dir=" + run_dir,
                "this directory already holds a training run (" + entry.path().string() +
                    "): a new fit would overwrite its last.ckpt and mix both runs' metrics",
                "Resume it with ckpt_path=last, evaluate it with trainer test ckpt_path=best hydra.run.dir=" + run_dir +
                    ", or give this fit a new hydra.run.dir (or delete the old run).");
  }
}

void refuse_sweep_directory(const std::string& run_dir) {
  std::error_code ec;
  const bool plan = fs::exists(fs::path(run_dir) / ".sweep", ec);
  if (!plan && !fs::exists(fs::path(run_dir) / "multirun.yaml", ec)) return;
  throw Error("hydra.run.dir=" + run_dir,
              std::string("this is a sweep's directory (it holds ") + (plan ? ".sweep/" : "multirun.yaml") +
                  "; its jobs run in its numbered subdirectories): a fit here would write its checkpoints, metrics "
                  "and .hydra/ among the sweep's records; nothing was written",
              "Give this fit a hydra.run.dir of its own; to run the sweep's unfinished jobs again, use trainer sweep "
              "resume " +
                  run_dir + ".");
}

void refuse_directory_inside_run(const std::string& dir, const std::string& key) {
  std::error_code ec;
  const fs::path path = fs::absolute(dir, ec).lexically_normal();
  fs::path below = path.filename().empty() ? path.parent_path() : path;
  for (fs::path run = below.parent_path(); !run.empty() && run != below; below = run, run = run.parent_path()) {
    const std::string part = below.filename().string();
    if (part != "checkpoints" && part != ".hydra" && part != "tensorboard") continue;
    bool training_run = fs::exists(run / ".hydra" / "config.yaml", ec);
    for (const auto& entry : fs::directory_iterator(run / "checkpoints", ec)) {
      training_run = training_run || entry.path().extension() == ".ckpt";
    }
    if (!training_run) continue;
    throw Error(key + "=" + path.string(),
                "lies inside the training run " + run.string() + " (in its " + part +
                    "/): this run's .hydra, metrics and log would be written among that run's files, and that run "
                    "could no longer be resumed; nothing was written",
                "Give " + key + " a directory outside " + run.string() + " (to evaluate that run, trainer test " +
                    "ckpt_path=best hydra.run.dir=" + run.string() + " writes into its eval/).");
  }
}

void refuse_run_directory_as_sweep(const std::string& sweep_dir) {
  std::error_code ec;
  if (fs::exists(fs::path(sweep_dir) / ".sweep", ec) || !fs::exists(fs::path(sweep_dir) / ".hydra", ec)) return;
  throw Error("hydra.sweep.dir=" + sweep_dir,
              "this is a single run's directory (it holds .hydra/): the sweep's records and numbered job "
              "directories would land among that run's files, and the run could no longer be resumed there (it "
              "would be a sweep's directory); nothing was written",
              "Give the sweep a hydra.sweep.dir of its own.");
}

void refuse_overwriting_checkpoints(const std::string& checkpoint_dir, const std::string& key) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir, ec)) {
    if (entry.path().extension() != ".ckpt") continue;
    const std::optional<std::string> run = run_of_checkpoint_directory(checkpoint_dir);
    throw Error(key + " (checkpoint directory " + checkpoint_dir + ")",
                "this directory already holds checkpoints (" + entry.path().filename().string() +
                    (run ? " of the training run " + *run : std::string()) +
                    "): a new fit would replace their last.ckpt and add its own epoch files, and that run's "
                    "ckpt_path=best|last would then load this fit's model; nothing was written",
                (run ? "Resume that run with ckpt_path=last hydra.run.dir=" + *run
                     : std::string("Resume the run that wrote them with ckpt_path=last and its hydra.run.dir")) +
                    ", or give this fit another callbacks.model_checkpoint.dirpath (or delete the old checkpoints).");
  }
}

void write_job_files(const std::string& run_dir, const std::string& output_subdir, const config::Node& job_config,
                     const config::Node& hydra, const std::vector<std::string>& task_overrides) {
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) {
    throw Error(run_dir, "cannot create the output directory: " + ec.message(),
                "Set hydra.run.dir (or hydra.sweep.dir) to a writable place.");
  }
  if (output_subdir.empty()) return;
  const fs::path meta = fs::path(run_dir) / output_subdir;
  fs::create_directories(meta, ec);
  if (ec) throw Error(meta.string(), "cannot create directory: " + ec.message());

  write_file_atomically((meta / "config.yaml").string(), config::to_yaml(job_config));
  config::Node wrapped = config::Node::map();
  wrapped.set("hydra", hydra);
  write_file_atomically((meta / "hydra.yaml").string(), config::to_yaml(wrapped));
  config::Node overrides = config::Node::list();
  for (const std::string& text : task_overrides) overrides.push_back(config::Node::string(text));
  write_file_atomically((meta / "overrides.yaml").string(), config::to_yaml(overrides));
}

namespace {

std::string identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

// The run's files outside checkpoints/ and eval/ (an evaluation's), sorted.
std::vector<std::string> run_files(const std::string& run_dir) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(run_dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path relative = it->path().lexically_relative(run_dir);
    if (it.depth() == 0 && it->is_directory(ec) && (relative == "checkpoints" || relative == "eval")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// Where a resume keeps second names of the run's record files (a directory of its own, so that
// no tool reading the run's files, TensorBoard's scan for "tfevents" names included, meets them).
constexpr const char* kBeforeResume = ".before-resume";

}  // namespace

RecordSnapshot::RecordSnapshot(const std::string& run_dir, const std::vector<std::string>& records,
                               const std::string& log, std::string last_checkpoint)
    : run_dir_(run_dir),
      log_((fs::path(run_dir) / log).string()),
      backup_dir_((fs::path(run_dir) / kBeforeResume).string()),
      last_checkpoint_(std::move(last_checkpoint)),
      checkpoint_identity_(identity_of(last_checkpoint_)) {
  std::error_code ec;
  fs::remove_all(backup_dir_, ec);  // a killed resume's
  present_ = run_files(run_dir);
  std::vector<std::string> kept;
  kept.reserve(records.size());
  for (const std::string& relative : records) kept.push_back((fs::path(run_dir) / relative).string());
  for (const std::string& path : present_) {
    if (fs::path(path).extension() == ".hparams") kept.push_back(path);
  }
  const bool backups = fs::create_directory(backup_dir_, ec) && !ec;
  for (const std::string& path : kept) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    files_.emplace_back(path, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    // The new record replaces the file by a rename: this second name keeps the old one's bytes.
    const std::string second = backup_dir_ + "/" + std::to_string(files_.size() - 1);
    linked_.push_back(backups && ::link(path.c_str(), second.c_str()) == 0 ? second : std::string());
  }
}

RecordSnapshot::~RecordSnapshot() {
  std::error_code ec;
  fs::remove_all(backup_dir_, ec);
}

bool RecordSnapshot::restore_if_not_trained() {
  if (files_.empty() || checkpoint_identity_.empty() || identity_of(last_checkpoint_) != checkpoint_identity_) {
    return false;
  }
  std::string failed;
  for (size_t i = 0; i < files_.size(); ++i) {
    const auto& [path, bytes] = files_[i];
    if (!linked_[i].empty() && ::rename(linked_[i].c_str(), path.c_str()) == 0) continue;
    try {
      write_file_atomically(path, bytes);
    } catch (const Error& error) {
      failed += "\n  " + path + ": " + error.problem();
    }
  }
  const fs::path backups(backup_dir_);
  for (const std::string& path : run_files(run_dir_)) {
    std::error_code ec;
    if (path != log_ && fs::path(path).parent_path() != backups &&
        !std::binary_search(present_.begin(), present_.end(), path)) {
      fs::remove(path, ec);
    }
  }
  if (!failed.empty()) {
    throw Error(run_dir_, "the run's record could not be put back as it was before the resume:" + failed,
                "Its checkpoints are the earlier run's: free space, then resume again (ckpt_path=last), which "
                "writes the record anew.");
  }
  return true;
}

}  // namespace trainer::launch
