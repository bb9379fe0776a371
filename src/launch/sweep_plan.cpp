#include "trainer/launch/sweep_plan.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "trainer/config/sweep_expansion.h"
#include "trainer/config/yaml.h"
#include "trainer/launch/job_files.h"
#include "trainer/util/error.h"
#include "trainer/util/lies_within.h"

namespace fs = std::filesystem;
using trainer::config::Node;

namespace trainer::launch {
namespace {

// Plain write (temporary + rename, no fsync): thousands of records are written at planning time,
// and a plan cut short (no plan.yaml) is planned again.
void write_quickly(const std::string& path, const std::string& text) {
  AtomicWriteOptions options;
  options.durable = false;
  options.fix = "Check that the sweep directory is writable and the disk is not full.";
  write_file_atomically(path, text, options);
}

Node string_list(const std::vector<std::string>& texts) {
  Node list = Node::list();
  for (const std::string& text : texts) list.push_back(Node::string(text));
  return list;
}

std::vector<std::string> strings_of(const Node* node, const std::string& where) {
  std::vector<std::string> out;
  if (node == nullptr || node->is_null()) return out;
  if (!node->is_list()) throw Error(where, "expected a list of strings");
  for (const Node& item : node->items()) {
    if (!item.is_string()) throw Error(where, "expected a list of strings");
    out.push_back(item.as_string());
  }
  return out;
}

const Node& required(const Node& map, const std::string& key, const std::string& file) {
  const Node* node = map.is_map() ? map.find(key) : nullptr;
  if (node == nullptr) {
    throw Error(file, "the key '" + key + "' is missing",
                "This file is written by trainer at planning time; plan the sweep again in a new "
                "hydra.sweep.dir.");
  }
  return *node;
}

std::string string_at(const Node& map, const std::string& key, const std::string& file) {
  const Node& node = required(map, key, file);
  if (!node.is_string()) throw Error(file, "'" + key + "' is not a string");
  return node.as_string();
}

int int_at(const Node& map, const std::string& key, const std::string& file) {
  const Node& node = required(map, key, file);
  if (node.type() != config::NodeType::kInt) throw Error(file, "'" + key + "' is not an integer");
  return static_cast<int>(node.as_int());
}

config::YamlDocument load(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw Error(path, what + " not found",
                "Name a sweep directory (hydra.sweep.dir of a trainer -m run) that was planned; it holds "
                ".sweep/plan.yaml.");
  }
  return config::load_yaml_file(path);
}

}  // namespace

std::string sweep_state_dir(const std::string& sweep_dir) { return (fs::path(sweep_dir) / ".sweep").string(); }

std::string job_record_path(const std::string& sweep_dir, int number) {
  return (fs::path(sweep_state_dir(sweep_dir)) / "jobs" / (std::to_string(number) + ".yaml")).string();
}

std::string task_overrides_text(const std::vector<std::string>& overrides) {
  std::string out;
  for (const std::string& o : overrides) {
    if (!config::is_hydra_override(o)) out += (out.empty() ? "" : " ") + o;
  }
  return out;
}

void write_job_record(const std::string& sweep_dir, const JobRecord& record) {
  Node node = Node::map();
  node.set("command", Node::string(record.command));
  node.set("number", Node::integer(record.job.number));
  node.set("overrides", string_list(record.job.overrides));
  node.set("run_dir", Node::string(record.job.run_dir));
  node.set("config", record.config);
  const fs::path path = job_record_path(sweep_dir, record.job.number);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    throw Error(path.parent_path().string(), "cannot create directory: " + ec.message(),
                "Set hydra.sweep.dir to a writable place.");
  }
  write_quickly(path.string(), config::to_yaml(node));
}

void write_plan_index(const SweepPlan& plan, const Node& first_config) {
  write_file_atomically((fs::path(plan.sweep_dir) / "multirun.yaml").string(), config::to_yaml(first_config));
  Node index = Node::map();
  index.set("command", Node::string(plan.command));
  index.set("sweep_dir", Node::string(plan.sweep_dir));  // where it was planned: a moved copy is told
  Node jobs = Node::list();
  for (const PlannedJob& job : plan.jobs) {
    Node entry = Node::map();
    entry.set("number", Node::integer(job.number));
    entry.set("run_dir", Node::string(job.run_dir));
    entry.set("overrides", string_list(job.overrides));
    jobs.push_back(std::move(entry));
  }
  index.set("jobs", std::move(jobs));
  write_file_atomically((fs::path(sweep_state_dir(plan.sweep_dir)) / "plan.yaml").string(), config::to_yaml(index));
}

bool has_sweep_plan(const std::string& sweep_dir) {
  std::error_code ec;
  return fs::exists(fs::path(sweep_state_dir(sweep_dir)) / "plan.yaml", ec);
}

namespace {

// Where a sweep read from `plan.sweep_dir` was planned, when that is another directory (it was
// moved or copied): "" when in place. Plans written before plan.yaml named its directory are
// judged by their jobs' directories.
std::string planned_elsewhere(const SweepPlan& plan, const Node& index) {
  if (const Node* stored = index.find("sweep_dir"); stored != nullptr && stored->is_string()) {
    return same_place(stored->as_string(), plan.sweep_dir) ? "" : stored->as_string();
  }
  if (plan.jobs.empty()) return "";
  for (const PlannedJob& job : plan.jobs) {
    if (lies_within(job.run_dir, plan.sweep_dir)) return "";
  }
  return fs::path(plan.jobs.front().run_dir).parent_path().string();
}

}  // namespace

SweepPlan read_sweep_plan(const std::string& sweep_dir, bool moved_for_reading) {
  SweepPlan plan;
  plan.sweep_dir = fs::absolute(sweep_dir).lexically_normal().string();
  if (!plan.sweep_dir.empty() && plan.sweep_dir.back() == '/') plan.sweep_dir.pop_back();
  const std::string index_path = (fs::path(sweep_state_dir(plan.sweep_dir)) / "plan.yaml").string();
  config::YamlDocument index = load(index_path, "the sweep's plan");
  plan.command = string_at(index.root, "command", index_path);
  const Node& jobs = required(index.root, "jobs", index_path);
  if (!jobs.is_list()) throw Error(index_path, "'jobs' is not a list");
  for (const Node& entry : jobs.items()) {
    PlannedJob job;
    job.number = int_at(entry, "number", index_path);
    job.run_dir = string_at(entry, "run_dir", index_path);
    job.overrides = strings_of(entry.find("overrides"), index_path);
    plan.jobs.push_back(std::move(job));
  }
  if (const std::string planned = planned_elsewhere(plan, index.root); !planned.empty()) {
    if (!moved_for_reading) {
      throw Error(plan.sweep_dir,
                  "this sweep was planned in " + planned +
                      " (its .sweep/plan.yaml names its jobs' directories there, " + plan.jobs.front().run_dir +
                      ", ...), so it was moved or copied here: resuming it would run its " + "jobs in " + planned +
                      " and read their checkpoints and metrics from there; nothing was run",
                  "Move it back to " + planned +
                      " to resume it there; the finished jobs of a copy are read where they are (trainer sweep "
                      "summary " +
                      plan.sweep_dir + "), and more jobs need a new sweep (another hydra.sweep.dir).");
    }
    // Read only: each job's directory is the same place below the directory the sweep is in now.
    for (PlannedJob& job : plan.jobs) {
      if (lies_within(job.run_dir, planned)) {
        job.run_dir = (fs::path(plan.sweep_dir) / fs::path(job.run_dir).lexically_relative(planned)).string();
      }
    }
  }
  const std::string multirun_path = (fs::path(plan.sweep_dir) / "multirun.yaml").string();
  config::YamlDocument multirun = load(multirun_path, "multirun.yaml");
  if (const Node* node = config::select(multirun.root, "hydra.launcher")) plan.launcher = *node;
  if (const Node* node = config::select(multirun.root, "hydra.sweeper")) plan.sweeper = *node;
  plan.executable = self_executable();
  return plan;
}

JobRecord read_job_record(const std::string& sweep_dir, int number) {
  const std::string path = job_record_path(sweep_dir, number);
  config::YamlDocument document = load(path, "the record of job " + std::to_string(number));
  JobRecord record;
  record.command = string_at(document.root, "command", path);
  record.job.number = int_at(document.root, "number", path);
  record.job.run_dir = string_at(document.root, "run_dir", path);
  record.job.overrides = strings_of(document.root.find("overrides"), path);
  record.config = required(document.root, "config", path);
  if (!record.config.is_map() || record.config.find("hydra") == nullptr) {
    throw Error(path, "'config' is not a composed config with its hydra node",
                "Plan the sweep again in a new hydra.sweep.dir.");
  }
  return record;
}

std::vector<std::string> plan_differences(const SweepPlan& on_disk, const SweepPlan& now) {
  std::vector<std::string> lines;
  if (on_disk.command != now.command) {
    lines.push_back("command: " + on_disk.command + " on disk, " + now.command + " now");
  }
  const size_t common = std::min(on_disk.jobs.size(), now.jobs.size());
  for (size_t i = 0; i < common; ++i) {
    const PlannedJob& a = on_disk.jobs[i];
    const PlannedJob& b = now.jobs[i];
    // Hydra's own overrides (hydra.launcher.n_jobs=4, ...) may change between runs of a sweep.
    if (task_overrides_text(a.overrides) != task_overrides_text(b.overrides) || a.number != b.number) {
      lines.push_back("job " + std::to_string(a.number) + ": " + task_overrides_text(a.overrides) + " on disk, " +
                      task_overrides_text(b.overrides) + " now");
    } else if (a.run_dir != b.run_dir) {
      lines.push_back("job " + std::to_string(a.number) + ": run dir " + a.run_dir + " on disk, " + b.run_dir + " now");
    }
  }
  for (size_t i = common; i < on_disk.jobs.size(); ++i) {
    lines.push_back("job " + std::to_string(on_disk.jobs[i].number) + " (" +
                    task_overrides_text(on_disk.jobs[i].overrides) + ") is on disk but no longer planned");
  }
  for (size_t i = common; i < now.jobs.size(); ++i) {
    lines.push_back("job " + std::to_string(now.jobs[i].number) + " (" + task_overrides_text(now.jobs[i].overrides) +
                    ") is new");
  }
  return lines;
}

void refuse_sweep_job_directory(const std::string& run_dir) {
  std::error_code ec;
  const fs::path path = fs::absolute(run_dir, ec).lexically_normal();
  fs::path sweep = path.filename().empty() ? path.parent_path() : path;
  for (int up = 0; up < 4 && sweep.has_parent_path() && sweep != sweep.parent_path(); ++up) {
    sweep = sweep.parent_path();
    if (!has_sweep_plan(sweep.string())) continue;
    SweepPlan plan;
    try {
      plan = read_sweep_plan(sweep.string(), /*moved_for_reading=*/true);
    } catch (const Error&) {
      return;  // a plan that cannot be read names no job
    }
    for (const PlannedJob& job : plan.jobs) {
      if (!same_place(job.run_dir, path)) continue;
      throw Error("hydra.run.dir=" + path.string(),
                  "this is job " + std::to_string(job.number) + " of the sweep " + sweep.string() + " (" +
                      task_overrides_text(job.overrides) +
                      "): a single fit here would replace the job's .hydra record with this command's config, and "
                      "the sweep's plan and summary would no longer describe it; nothing was written",
                  "Continue the sweep's unfinished jobs with trainer sweep resume " + sweep.string() +
                      ", or give this fit a hydra.run.dir of its own (to evaluate the job, trainer test "
                      "ckpt_path=best hydra.run.dir=" +
                      path.string() + " writes into its eval/).");
    }
    return;
  }
}

std::string self_executable() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0)
    throw Error("/proc/self/exe", "cannot find this program's executable", "Run trainer on Linux with /proc mounted.");
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace trainer::launch
