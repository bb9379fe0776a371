// MLflow's file store, written the way mlflow.store.tracking.file_store.FileStore writes it:
//   <root>/<experiment id>/meta.yaml              the experiment (name, artifact location, stage)
//   <root>/<experiment id>/<run id>/meta.yaml     the run (status as RunStatus's number, times in ms)
//   <root>/<experiment id>/<run id>/metrics/<key> "<timestamp ms> <value> <step>" lines
//   <root>/<experiment id>/<run id>/params/<key>  the value; tags/<key> likewise
// POSIX calls only, no std::filesystem: the engine links this (see engine/posix_files.h for why).
#include "mlflow_file_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "trainer/util/atomic_file.h"
#include "trainer/util/make_directories.h"

namespace trainer::tracking {
namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// A full or failing disk may recover (retried); a name too long, a read-only or forbidden
// directory will not (the batch is dropped, and said).
MlflowError store_error(const std::string& path, const std::string& problem, int error = EIO) {
  const bool retryable = error == ENOSPC || error == EDQUOT || error == EIO || error == EAGAIN || error == EINTR;
  return MlflowError(path, problem, "Check that the MLflow directory is writable and that the disk is not full.",
                     retryable);
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

void make_directories(const std::string& directory) {
  const MakeDirectoriesFailure failed = trainer::make_directories(directory);
  if (failed.error == 0) return;
  errno = failed.error;
  throw store_error(directory, system_error("cannot create the MLflow directory " + failed.prefix), failed.error);
}

std::string read_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(got));
  ::close(fd);
  return text;
}

std::vector<std::string> entries(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(directory.c_str())) {
    while (dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
  }
  return names;
}

// The value of a top-level `key: value` line of a meta.yaml we or MLflow wrote (quotes taken off).
std::string meta_value(const std::string& yaml, const std::string& key) {
  size_t at = 0;
  while (at < yaml.size()) {
    const size_t end = yaml.find('\n', at);
    const std::string line = yaml.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(key + ": ", 0) == 0) {
      std::string value = line.substr(key.size() + 2);
      if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
        if (value.find("''") != std::string::npos && line[key.size() + 2] == '\'') {
          std::string unquoted;
          for (size_t i = 0; i < value.size(); ++i) {
            unquoted += value[i];
            if (value[i] == '\'' && i + 1 < value.size() && value[i + 1] == '\'') ++i;
          }
          value = unquoted;
        }
      }
      return value;
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

// A YAML scalar in single quotes (MLflow's meta files are yaml.safe_dump'ed; names are strings).
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string random_hex(size_t digits) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* const hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < digits; ++i) out += hex[rng() & 15u];
  return out;
}

int status_number(MlflowRunStatus status) {
  switch (status) {
    case MlflowRunStatus::kRunning:
      return 1;
    case MlflowRunStatus::kFinished:
      return 3;
    case MlflowRunStatus::kFailed:
      return 4;
    case MlflowRunStatus::kKilled:
      return 5;
  }
  return 1;
}

// Holds an exclusive flock on <root>/.trainer-lock: parallel jobs making one experiment make one.
class RootLock {
 public:
  explicit RootLock(const std::string& root) {
    fd_ = ::open((root + "/.trainer-lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~RootLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  RootLock(const RootLock&) = delete;
  RootLock& operator=(const RootLock&) = delete;

 private:
  int fd_ = -1;
};

void write_atomically(const std::string& path, const std::string& text) {
  AtomicWriteOptions options;
  options.noun = "MLflow file";
  options.fix = "Check that the MLflow directory is writable and that the disk is not full.";
  options.durable = false;
  try {
    write_file_atomically(path, text, options);
  } catch (const Error& error) {
    // The writer's message ends with the system's reason: a full disk is worth a retry.
    int reason = EACCES;
    for (const int retryable : {ENOSPC, EDQUOT, EIO}) {
      if (error.problem().find(std::strerror(retryable)) != std::string::npos) reason = retryable;
    }
    throw store_error(path, error.problem(), reason);
  }
}

void append_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw store_error(path, system_error("cannot open the MLflow file"), errno);
  const ssize_t wrote = ::write(fd, text.data(), text.size());
  const int write_errno = errno;
  ::close(fd);
  if (wrote != static_cast<ssize_t>(text.size())) {
    errno = write_errno;
    throw store_error(path, system_error("cannot write the MLflow file"), write_errno);
  }
}

std::string experiment_meta(const std::string& id, const std::string& name, const std::string& artifacts, int64_t now) {
  return "artifact_location: " + quoted(artifacts) + "\ncreation_time: " + std::to_string(now) +
         "\nexperiment_id: " + quoted(id) + "\nlast_update_time: " + std::to_string(now) +
         "\nlifecycle_stage: active\nname: " + quoted(name) + "\n";
}

}  // namespace

MlflowFileStore::MlflowFileStore(std::string root, std::string uri) : root_(std::move(root)), uri_(std::move(uri)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (!root_.empty() && root_[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) != nullptr) root_ = std::string(cwd) + "/" + root_;
  }
}

std::string MlflowFileStore::run_dir(const std::string& run_id) const {
  for (const std::string& experiment : entries(root_)) {
    std::string dir = root_ + "/" + experiment + "/" + run_id;
    if (is_directory(dir)) return dir;
  }
  throw MlflowError(uri_, "no run " + run_id + " in the MLflow file store " + root_,
                    "Check logger.mlflow.run_id and tracking_uri.", /*retryable=*/false);
}

std::string MlflowFileStore::experiment_id(const std::string& name, const std::string& artifact_location) {
  const bool fresh = !is_directory(root_);
  make_directories(root_);
  const int64_t now = now_ms();
  // As MLflow does for a new store: the Default experiment, id 0.
  if (fresh) {
    make_directories(root_ + "/0");
    write_atomically(root_ + "/0/meta.yaml", experiment_meta("0", "Default", "file://" + root_ + "/0", now));
  }
  RootLock lock(root_);
  for (const std::string& entry : entries(root_)) {
    const std::string meta = read_text(root_ + "/" + entry + "/meta.yaml");
    if (!meta.empty() && meta_value(meta, "name") == name && meta_value(meta, "lifecycle_stage") != "deleted") {
      return meta_value(meta, "experiment_id");
    }
  }
  // MLflow's file store numbers new experiments with random 18-digit integers.
  std::string id =
      std::to_string(1 + std::mt19937_64{std::random_device{}()}() % 899999999999999999ULL + 100000000000000000ULL);
  make_directories(root_ + "/" + id);
  const std::string artifacts = artifact_location.empty() ? "file://" + root_ + "/" + id : artifact_location;
  write_atomically(root_ + "/" + id + "/meta.yaml", experiment_meta(id, name, artifacts, now));
  return id;
}

std::string MlflowFileStore::create_run(const std::string& experiment_id, const std::string& run_name, int64_t start_ms,
                                        const MlflowTags& tags) {
  const std::string experiment_dir = root_ + "/" + experiment_id;
  const std::string experiment = read_text(experiment_dir + "/meta.yaml");
  if (experiment.empty()) {
    throw MlflowError(uri_, "no experiment " + experiment_id + " in the MLflow file store " + root_,
                      "Check logger.mlflow.tracking_uri.", /*retryable=*/false);
  }
  std::string run_id = random_hex(32);
  const std::string dir = experiment_dir + "/" + run_id;
  for (const char* sub : {"metrics", "params", "tags", "artifacts"}) make_directories(dir + "/" + sub);
  std::string artifacts = meta_value(experiment, "artifact_location");
  artifacts = (artifacts.empty() ? "file://" + experiment_dir : artifacts) + "/" + run_id + "/artifacts";
  const char* user = ::getenv("USER");
  const std::string meta =
      "artifact_uri: " + quoted(artifacts) + "\nend_time: null\nentry_point_name: ''\n" +
      "experiment_id: " + quoted(experiment_id) + "\nlifecycle_stage: active\nrun_id: " + run_id +
      "\nrun_name: " + quoted(run_name) + "\nrun_uuid: " + run_id +
      "\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: " + std::to_string(start_ms) +
      "\nstatus: 1\ntags: []\nuser_id: " + quoted(user != nullptr ? user : "") + "\n";
  write_atomically(dir + "/meta.yaml", meta);
  MlflowTags all = tags;
  all.emplace_back("mlflow.runName", run_name);
  if (user != nullptr) all.emplace_back("mlflow.user", user);
  log_batch(run_id, {}, {}, all);
  return run_id;
}

void MlflowFileStore::log_batch(const std::string& run_id, const std::vector<MlflowMetric>& metrics,
                                const MlflowTags& params, const MlflowTags& tags) {
  const std::string dir = run_dir(run_id);
  // A key may hold '/' (val/acc): MLflow keeps it as a sub-directory.
  auto path_of = [&](const std::string& kind, const std::string& key) {
    std::string path = dir + "/" + kind + "/" + key;
    make_directories(path.substr(0, path.find_last_of('/')));
    return path;
  };
  for (const auto& [key, value] : params) write_atomically(path_of("params", key), value);
  for (const auto& [key, value] : tags) write_atomically(path_of("tags", key), value);
  // One append per key: the lines of one key in one write.
  std::vector<std::pair<std::string, std::string>> lines;
  for (const MlflowMetric& metric : metrics) {
    char text[96];
    std::snprintf(text, sizeof text, " %.17g ", metric.value);
    std::string line = std::to_string(metric.timestamp_ms) + text + std::to_string(metric.step) + "\n";
    auto found = std::find_if(lines.begin(), lines.end(), [&](const auto& entry) { return entry.first == metric.key; });
    if (found == lines.end()) {
      lines.emplace_back(metric.key, std::move(line));
    } else {
      found->second += line;
    }
  }
  for (const auto& [key, text] : lines) append_text(path_of("metrics", key), text);
}

void MlflowFileStore::update_run(const std::string& run_id, MlflowRunStatus status, std::optional<int64_t> end_ms) {
  const std::string path = run_dir(run_id) + "/meta.yaml";
  std::string meta = read_text(path);
  auto set_line = [&](const std::string& key, const std::string& value) {
    const size_t at = meta.rfind("\n" + key + ": ") != std::string::npos ? meta.rfind("\n" + key + ": ") + 1
                      : meta.rfind(key + ": ", 0) == 0                   ? 0
                                                                         : std::string::npos;
    if (at == std::string::npos) {
      meta += key + ": " + value + "\n";
      return;
    }
    const size_t end = meta.find('\n', at);
    meta.replace(at, end == std::string::npos ? std::string::npos : end - at, key + ": " + value);
  };
  set_line("status", std::to_string(status_number(status)));
  set_line("end_time", end_ms ? std::to_string(*end_ms) : "null");
  write_atomically(path, meta);
}

}  // namespace trainer::tracking
