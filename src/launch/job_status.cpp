#include "trainer/launch/job_status.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "trainer/config/yaml.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/sweep_plan.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;
using trainer::config::Node;

namespace trainer::launch {

const char* state_name(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kInterrupted:
      return "interrupted";
    case JobState::kStoppedEarly:
      return "stopped_early";
  }
  return "failed";
}

JobState parse_state(const std::string& name) {
  for (JobState state : {JobState::kPending, JobState::kRunning, JobState::kDone, JobState::kFailed,
                         JobState::kInterrupted, JobState::kStoppedEarly}) {
    if (name == state_name(state)) return state;
  }
  return JobState::kFailed;
}

std::string job_status_path(const std::string& sweep_dir, int number) {
  return (fs::path(sweep_state_dir(sweep_dir)) / "status" / (std::to_string(number) + ".yaml")).string();
}

void write_job_status(const std::string& sweep_dir, int number, const JobStatus& status) {
  Node node = Node::map();
  node.set("status", Node::string(state_name(status.state)));
  node.set("pid", Node::integer(status.pid));
  if (status.pid_start > 0) node.set("pid_start", Node::integer(status.pid_start));
  node.set("host", Node::string(status.host));
  node.set("start_time", Node::string(status.start_time));
  node.set("start_epoch_s", Node::floating(status.start_epoch_s));
  if (!status.end_time.empty()) {
    node.set("end_time", Node::string(status.end_time));
    node.set("duration_s", Node::floating(status.duration_s));
    node.set("exit_code", Node::integer(status.exit_code));
  }
  if (!status.error.empty()) node.set("error", Node::string(status.error));
  node.set("resumed", Node::boolean(status.resumed));
  const fs::path path = job_status_path(sweep_dir, number);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  write_file_atomically(path.string(), config::to_yaml(node));
}

std::optional<JobStatus> read_job_status(const std::string& sweep_dir, int number) {
  const std::string path = job_status_path(sweep_dir, number);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const Node root = config::load_yaml_file(path).root;
  if (!root.is_map()) throw Error(path, "not a job status file", "Delete it to run the job again.");
  JobStatus status;
  auto text = [&](const char* key) {
    const Node* node = root.find(key);
    return node != nullptr && node->is_string() ? node->as_string() : std::string();
  };
  auto number_of = [&](const char* key) {
    const Node* node = root.find(key);
    if (node == nullptr) return 0.0;
    if (node->type() == config::NodeType::kInt) return static_cast<double>(node->as_int());
    if (node->type() == config::NodeType::kFloat) return node->as_float();
    return 0.0;
  };
  status.state = parse_state(text("status"));
  status.pid = static_cast<int>(number_of("pid"));
  status.pid_start = static_cast<int64_t>(number_of("pid_start"));
  status.host = text("host");
  status.start_time = text("start_time");
  status.start_epoch_s = number_of("start_epoch_s");
  status.end_time = text("end_time");
  status.duration_s = number_of("duration_s");
  status.exit_code = static_cast<int>(number_of("exit_code"));
  status.error = text("error");
  const Node* resumed = root.find("resumed");
  status.resumed = resumed != nullptr && resumed->type() == config::NodeType::kBool && resumed->as_bool();
  return status;
}

int64_t process_start_ticks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the fields follow its last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int number = 3; fields >> field; ++number) {
    if (number == 3 && field == "Z") return -1;
    if (number == 22) return std::strtoll(field.c_str(), nullptr, 10);
  }
  return -1;
}

bool job_process_alive(const JobStatus& status) {
  if (status.pid <= 0 || status.host != host_name()) return false;
  if (::kill(status.pid, 0) != 0 && errno == ESRCH) return false;
  const int64_t started = process_start_ticks(status.pid);
  if (started < 0) return false;
  if (status.pid_start > 0) return started == status.pid_start;
  // A status of an older trainer: a reused pid is not our job when its command line lacks `sweep
  // run-job` (a job forked from the sweep process has the sweep's, and reads as gone).
  std::ifstream in("/proc/" + std::to_string(status.pid) + "/cmdline", std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string cmdline = buffer.str();
  return cmdline.find(std::string("run-job") + '\0') != std::string::npos;
}

JobState effective_state(const std::optional<JobStatus>& status) {
  if (!status) return JobState::kPending;
  if (status->state == JobState::kRunning && !job_process_alive(*status)) {
    // On another host the process cannot be checked: SLURM's requeue or the user decides.
    if (status->host != host_name()) return JobState::kRunning;
    return JobState::kInterrupted;
  }
  return status->state;
}

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof(buffer) - 1) != 0) return "localhost";
  return buffer;
}

double now_epoch_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso_time(double epoch_s) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace trainer::launch
