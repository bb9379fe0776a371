#include "trainer/launch/slurm_script.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;
using trainer::config::Node;
using trainer::config::NodeType;

namespace trainer::launch {
namespace {

std::string where(const std::string& key) { return "hydra.launcher." + key; }

// Keys the launcher reads; the rest of submitit's options it accepts and ignores (submitit_folder:
// trainer's files live under <sweep_dir>/.sweep/slurm).
const std::set<std::string>& known_keys() {
  static const std::set<std::string> keys = {"_target_",
                                             "submitit_folder",
                                             "timeout_min",
                                             "cpus_per_task",
                                             "gpus_per_node",
                                             "tasks_per_node",
                                             "mem_gb",
                                             "nodes",
                                             "name",
                                             "partition",
                                             "qos",
                                             "comment",
                                             "constraint",
                                             "exclude",
                                             "gres",
                                             "cpus_per_gpu",
                                             "gpus_per_task",
                                             "mem_per_gpu",
                                             "mem_per_cpu",
                                             "account",
                                             "signal_delay_s",
                                             "max_num_timeout",
                                             "additional_parameters",
                                             "array_parallelism",
                                             "setup",
                                             "srun_args",
                                             "wait",
                                             "fail_fast"};
  return keys;
}

void check_one_line(const std::string& key, const std::string& value) {
  if (value.find_first_of("\n\r") != std::string::npos) {
    throw Error(where(key), "the value has a line break, which cannot go into an #SBATCH line", "Give it on one line.");
  }
}

// A scalar's text (strings as they are, numbers as Python prints them); empty for null.
std::string text_of(const Node& node, const std::string& key) {
  if (node.is_null()) return {};
  if (!node.is_scalar() || node.is_missing()) {
    throw Error(where(key), std::string("expected a single value, got ") + config::type_name(node.type()),
                "Set it to a string or a number, e.g. hydra.launcher." + key + "=gpu.");
  }
  std::string text = node.is_string() ? node.as_string() : config::python_str(node);
  check_one_line(key, text);
  return text;
}

std::optional<int64_t> int_of(const Node& node, const std::string& key, int64_t min) {
  if (node.is_null()) return std::nullopt;
  if (node.type() != NodeType::kInt || node.is_big_int()) {
    throw Error(
        where(key),
        std::string("expected an integer, got ") + config::type_name(node.type()) + " " + config::python_str(node),
        "Set it to a whole number, e.g. hydra.launcher." + key + "=" + std::to_string(std::max<int64_t>(min, 1)) + ".");
  }
  if (node.as_int() < min || node.as_int() > 1000000000) {
    throw Error(where(key), key + "=" + node.int_text() + " is out of range",
                "Use a number from " + std::to_string(min) + " up.");
  }
  return node.as_int();
}

bool bool_of(const Node& node, const std::string& key, bool fallback) {
  if (node.is_null()) return fallback;
  if (node.type() != NodeType::kBool) {
    throw Error(where(key), std::string("expected true or false, got ") + config::type_name(node.type()),
                "Use hydra.launcher." + key + "=true or false.");
  }
  return node.as_bool();
}

std::vector<std::string> lines_of(const Node& node, const std::string& key) {
  std::vector<std::string> lines;
  if (node.is_null()) return lines;
  if (node.is_string()) {
    const std::string& text = node.as_string();
    // '[--cpu-bind=none]' quoted whole (to get its '=' past the grammar) is a string, not a list:
    // it would reach the script as one bracketed word.
    if (text.size() > 1 && text.front() == '[' && text.back() == ']') {
      throw Error(where(key), "is the string '" + text + "', not a list: its brackets would reach the script",
                  "Quote the list's elements instead of the list: hydra.launcher." + key + "=['" +
                      text.substr(1, text.size() - 2) + "'] (on a shell command line, in double quotes).");
    }
    lines.push_back(text);  // one line or argument given as a string
    return lines;
  }
  if (!node.is_list()) {
    throw Error(where(key), std::string("expected a list of strings, got ") + config::type_name(node.type()),
                "Give a list, e.g. hydra.launcher." + key + "='[\"module load cuda\"]'.");
  }
  for (const Node& item : node.items()) {
    if (!item.is_scalar() || item.is_null()) {
      throw Error(where(key), std::string("expected a list of strings, found a ") + config::type_name(item.type()),
                  "Give each item as a string.");
    }
    lines.push_back(item.is_string() ? item.as_string() : config::python_str(item));
  }
  return lines;
}

// A value on an #SBATCH line: sbatch splits those lines at blanks and strips double quotes.
std::string sbatch_value(const std::string& key, const std::string& value) {
  if (value.find('"') != std::string::npos) {
    throw Error(key, "'" + value + "' holds a double quote, which an #SBATCH line cannot carry",
                "Use a value (or a sweep directory) without double quotes.");
  }
  if (value.find_first_of("\n\r") != std::string::npos) {
    throw Error(key, "'" + value + "' holds a line break, which an #SBATCH line cannot carry", "Use one line.");
  }
  if (value.empty() || value.find_first_of(" \t") != std::string::npos) return "\"" + value + "\"";
  return value;
}

bool plain_word(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string("_-./:=,+@%").find(c) != std::string::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string shell_quote(const std::string& text) {
  if (plain_word(text)) return text;
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

SlurmOptions slurm_launcher_options(const Node& launcher) {
  SlurmOptions options;
  if (launcher.is_null()) return options;
  if (!launcher.is_map()) {
    throw Error("hydra.launcher", "expected the launcher's options (a dict)", "Pick it with hydra/launcher=slurm.");
  }
  for (const auto& entry : launcher.entries()) {
    const std::string& key = entry.key;
    const Node& value = entry.value;
    if (!known_keys().count(key)) {
      throw Error(where(key), "the SLURM launcher has no option '" + key + "'",
                  "Check the spelling (submitit's names: timeout_min, cpus_per_task, gpus_per_node, mem_gb, "
                  "partition, ...); pass other sbatch options through hydra.launcher.additional_parameters.");
    }
    if (key == "_target_" || key == "submitit_folder") continue;  // accepted, unused (may stay unresolved)
    if (value.is_interpolation()) {
      throw Error(where(key), "'" + value.as_string() + "' is not resolved",
                  "internal: resolve the launcher node first.");
    }
    if (key == "name") {
      const std::string name = text_of(value, key);
      if (!name.empty()) options.job_name = name;
    } else if (key == "timeout_min") {
      options.timeout_min = static_cast<int>(int_of(value, key, 1).value_or(options.timeout_min));
    } else if (key == "nodes" || key == "tasks_per_node") {
      const int count = static_cast<int>(int_of(value, key, 1).value_or(1));
      if (count != 1) {
        throw Error(where(key), key + "=" + std::to_string(count) + ": a trainer job is one process on one node",
                    "Leave " + key + " at 1; give a job more devices with gpus_per_node and cpus_per_task.");
      }
    } else if (key == "cpus_per_task") {
      if (auto v = int_of(value, key, 1)) options.cpus_per_task = static_cast<int>(*v);
    } else if (key == "gpus_per_node") {
      if (auto v = int_of(value, key, 0)) options.gpus_per_node = static_cast<int>(*v);
    } else if (key == "cpus_per_gpu") {
      if (auto v = int_of(value, key, 1)) options.cpus_per_gpu = static_cast<int>(*v);
    } else if (key == "gpus_per_task") {
      if (auto v = int_of(value, key, 0)) options.gpus_per_task = static_cast<int>(*v);
    } else if (key == "mem_gb") {
      if (value.is_null()) continue;
      if (value.type() != NodeType::kInt && value.type() != NodeType::kFloat) {
        throw Error(where(key), std::string("expected a number of GB, got ") + config::type_name(value.type()),
                    "Use e.g. hydra.launcher.mem_gb=16.");
      }
      const double gb = value.type() == NodeType::kInt ? static_cast<double>(value.as_int()) : value.as_float();
      if (!(gb > 0) || gb > 1e9)
        throw Error(where(key), "mem_gb must be above 0", "Use e.g. hydra.launcher.mem_gb=16.");
      options.mem_gb = gb;
    } else if (key == "mem_per_gpu") {
      options.mem_per_gpu = text_of(value, key);
    } else if (key == "mem_per_cpu") {
      options.mem_per_cpu = text_of(value, key);
    } else if (key == "partition") {
      options.partition = text_of(value, key);
    } else if (key == "qos") {
      options.qos = text_of(value, key);
    } else if (key == "comment") {
      options.comment = text_of(value, key);
    } else if (key == "constraint") {
      options.constraint = text_of(value, key);
    } else if (key == "exclude") {
      options.exclude = text_of(value, key);
    } else if (key == "gres") {
      options.gres = text_of(value, key);
    } else if (key == "account") {
      options.account = text_of(value, key);
    } else if (key == "signal_delay_s") {
      options.signal_delay_s = static_cast<int>(int_of(value, key, 0).value_or(0));
    } else if (key == "max_num_timeout") {
      options.max_num_timeout = static_cast<int>(int_of(value, key, 0).value_or(0));
    } else if (key == "array_parallelism") {
      options.array_parallelism = static_cast<int>(int_of(value, key, 1).value_or(0));
    } else if (key == "additional_parameters") {
      if (value.is_null()) continue;
      if (!value.is_map()) {
        throw Error(where(key),
                    std::string("expected a dict of sbatch options, got ") + config::type_name(value.type()),
                    "Use e.g. hydra.launcher.additional_parameters='{mail_type: END}'.");
      }
      for (const auto& parameter : value.entries()) {
        std::string name = parameter.key;
        std::replace(name.begin(), name.end(), '_', '-');
        if (name.empty() || !plain_word(name) || name[0] == '-') {
          throw Error(where(key + "." + parameter.key), "'" + parameter.key + "' is not an sbatch option name",
                      "Use sbatch's long option names without the dashes, e.g. mail_type.");
        }
        // The lines the launcher writes itself: a second one would contradict it (sbatch takes the
        // last; trainer's own checks, signal_delay_s against the time, read the first).
        static const std::vector<std::pair<std::string, std::string>> own = {
            {"job-name", "hydra.launcher.name"},
            {"time", "hydra.launcher.timeout_min"},
            {"cpus-per-task", "hydra.launcher.cpus_per_task"},
            {"gpus-per-node", "hydra.launcher.gpus_per_node"},
            {"cpus-per-gpu", "hydra.launcher.cpus_per_gpu"},
            {"gpus-per-task", "hydra.launcher.gpus_per_task"},
            {"mem", "hydra.launcher.mem_gb"},
            {"mem-per-gpu", "hydra.launcher.mem_per_gpu"},
            {"mem-per-cpu", "hydra.launcher.mem_per_cpu"},
            {"partition", "hydra.launcher.partition"},
            {"qos", "hydra.launcher.qos"},
            {"account", "hydra.launcher.account"},
            {"constraint", "hydra.launcher.constraint"},
            {"exclude", "hydra.launcher.exclude"},
            {"gres", "hydra.launcher.gres"},
            {"comment", "hydra.launcher.comment"},
            {"signal", "hydra.launcher.signal_delay_s"},
            {"requeue", "hydra.launcher.max_num_timeout"},
            {"array", "hydra.launcher.array_parallelism (the array is the sweep's jobs)"},
            {"output", "nothing: each task's output goes to the sweep's .slurm/logs"},
            {"error", "nothing: each task's output goes to the sweep's .slurm/logs"},
            {"open-mode", "nothing: the logs are appended to across requeues"},
            {"nodes", "nothing: a task is one process on one node"},
            {"ntasks-per-node", "nothing: a task is one process on one node"}};
        for (const auto& [option, instead] : own) {
          if (name != option) continue;
          throw Error(
              where(key + "." + parameter.key),
              "--" + option + " is a line the launcher writes itself; a second one would contradict it",
              instead.rfind("nothing:", 0) == 0 ? "Leave it out:" + instead.substr(8) + "." : "Set " + instead + ".");
        }
        if (parameter.value.type() == NodeType::kBool) {
          if (parameter.value.as_bool()) options.additional_parameters.emplace_back(name, std::string());
          continue;
        }
        const std::string text = text_of(parameter.value, key + "." + parameter.key);
        if (!parameter.value.is_null()) options.additional_parameters.emplace_back(name, text);
      }
    } else if (key == "setup") {
      options.setup = lines_of(value, key);
    } else if (key == "srun_args") {
      options.srun_args = lines_of(value, key);
    } else if (key == "wait") {
      options.wait = bool_of(value, key, true);
    } else if (key == "fail_fast") {
      options.fail_fast = bool_of(value, key, false);
    }
  }
  // sbatch refuses these together ("mutually exclusive" in its manual), but only once submitted.
  std::vector<std::string> memory;
  if (options.mem_gb) memory.emplace_back("mem_gb");
  if (!options.mem_per_cpu.empty()) memory.emplace_back("mem_per_cpu");
  if (!options.mem_per_gpu.empty()) memory.emplace_back("mem_per_gpu");
  if (memory.size() > 1) {
    throw Error(where(memory[1]),
                "is set with hydra.launcher." + memory[0] +
                    ": sbatch takes one of --mem, --mem-per-cpu and --mem-per-gpu; nothing was submitted",
                "Give the memory one way: set the other to null (hydra.launcher." + memory[0] + "=null).");
  }
  if (options.cpus_per_task && options.cpus_per_gpu) {
    throw Error(where("cpus_per_gpu"),
                "is set with hydra.launcher.cpus_per_task: sbatch takes --cpus-per-gpu or --cpus-per-task, not "
                "both; nothing was submitted",
                "Give the CPUs one way: hydra.launcher.cpus_per_task=null, or hydra.launcher.cpus_per_gpu=null.");
  }
  if (options.signal_delay_s > 0 && options.signal_delay_s >= options.timeout_min * 60) {
    throw Error("hydra.launcher.signal_delay_s=" + std::to_string(options.signal_delay_s),
                "is not below the time limit (timeout_min=" + std::to_string(options.timeout_min) + ": " +
                    std::to_string(options.timeout_min * 60) +
                    " s): SLURM would send the stop signal as the job starts, and every job would end interrupted "
                    "before it trained; nothing was submitted",
                "Give hydra.launcher.timeout_min more minutes than signal_delay_s / 60, or a smaller "
                "hydra.launcher.signal_delay_s (0: no signal).");
  }
  return options;
}

std::string slurm_array_indices(std::vector<int> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::string text;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(numbers[i]);
    if (j > i) text += '-' + std::to_string(numbers[j]);
    i = j + 1;
  }
  return text;
}

std::string slurm_dir(const std::string& sweep_dir) {
  return (fs::path(sweep_state_dir(sweep_dir)) / "slurm").string();
}
std::string slurm_script_path(const std::string& sweep_dir) {
  return (fs::path(slurm_dir(sweep_dir)) / "array.sbatch").string();
}
std::string slurm_commands_path(const std::string& sweep_dir) {
  return (fs::path(slurm_dir(sweep_dir)) / "commands.txt").string();
}
std::string slurm_log_dir(const std::string& sweep_dir) { return (fs::path(slurm_dir(sweep_dir)) / "logs").string(); }

std::string slurm_array_script(const SlurmOptions& options, const SweepPlan& plan, const std::vector<int>& todo) {
  if (todo.empty()) throw Error("sweep " + plan.sweep_dir, "internal: a SLURM array needs at least one job");
  std::ostringstream out;
  auto line = [&](const std::string& option, const std::string& value) {
    out << "#SBATCH --" << option << "=" << sbatch_value("hydra.launcher (#SBATCH --" + option + ")", value) << "\n";
  };
  out << "#!/bin/bash\n";
  line("job-name", options.job_name);
  std::string array = slurm_array_indices(todo);
  if (options.array_parallelism > 0 && options.array_parallelism < static_cast<int>(todo.size())) {
    array += "%" + std::to_string(options.array_parallelism);
  }
  line("array", array);
  const std::string logs = slurm_log_dir(plan.sweep_dir);
  line("output", logs + "/%a.out");
  line("error", logs + "/%a.err");
  out << "#SBATCH --open-mode=append\n";
  line("time", std::to_string(options.timeout_min));
  out << "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n";
  if (options.cpus_per_task) line("cpus-per-task", std::to_string(*options.cpus_per_task));
  if (options.gpus_per_node) line("gpus-per-node", std::to_string(*options.gpus_per_node));
  if (options.cpus_per_gpu) line("cpus-per-gpu", std::to_string(*options.cpus_per_gpu));
  if (options.gpus_per_task) line("gpus-per-task", std::to_string(*options.gpus_per_task));
  if (options.mem_gb) {
    const double gb = *options.mem_gb;
    if (gb == std::floor(gb)) {
      line("mem", std::to_string(static_cast<int64_t>(gb)) + "G");
    } else {
      line("mem", std::to_string(static_cast<int64_t>(std::ceil(gb * 1024))) + "M");
    }
  }
  if (!options.mem_per_gpu.empty()) line("mem-per-gpu", options.mem_per_gpu);
  if (!options.mem_per_cpu.empty()) line("mem-per-cpu", options.mem_per_cpu);
  if (!options.partition.empty()) line("partition", options.partition);
  if (!options.qos.empty()) line("qos", options.qos);
  if (!options.account.empty()) line("account", options.account);
  if (!options.constraint.empty()) line("constraint", options.constraint);
  if (!options.exclude.empty()) line("exclude", options.exclude);
  if (!options.gres.empty()) line("gres", options.gres);
  if (!options.comment.empty()) line("comment", options.comment);
  if (options.signal_delay_s > 0) line("signal", "B:USR1@" + std::to_string(options.signal_delay_s));
  if (options.max_num_timeout > 0) out << "#SBATCH --requeue\n";
  for (const auto& [name, value] : options.additional_parameters) {
    if (value.empty()) {
      out << "#SBATCH --" << name << "\n";
    } else {
      line(name, value);
    }
  }

  out << "\n# Written by trainer for the sweep " << plan.sweep_dir << " (" << todo.size() << " job(s)).\n"
      << "# Array task N runs sweep job N; each job's command line is in " << slurm_commands_path(plan.sweep_dir)
      << ".\n";
  if (!options.setup.empty()) {
    out << "\n# hydra.launcher.setup\n";
    for (const std::string& setup_line : options.setup) out << setup_line << "\n";
  }
  out << "\ntrainer_exe=" << shell_quote(plan.executable) << "\n"
      << "sweep_dir=" << shell_quote(plan.sweep_dir) << "\n"
      << "job=${SLURM_ARRAY_TASK_ID:?this script runs as a task of a SLURM job array (sbatch)}\n"
      << "max_requeues=" << options.max_num_timeout << "\n"
      << "echo \"[slurm] $(date -u +%FT%TZ) job $job on $(hostname), SLURM job "
         "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}, restart ${SLURM_RESTART_COUNT:-0}\"\n"
      << "\n# USR1 (signal_delay_s before the time limit, or pre-emption) goes to this shell only: pass\n"
      << "# it on as SIGTERM, so the job writes last.ckpt and ends `interrupted` (resumable).\n"
      << "# scancel's SIGTERM reaches the job directly; this shell then waits for it to end.\n"
      << "signalled=0\n"
      << "trap 'signalled=1; [ -n \"${child:-}\" ] && kill -TERM \"$child\" 2>/dev/null' USR1\n"
      << "trap ':' TERM\n";
  out << (options.srun_args.empty() ? "\"$trainer_exe\"" : "srun");
  for (const std::string& arg : options.srun_args) out << " " << shell_quote(arg);
  if (!options.srun_args.empty()) out << " \"$trainer_exe\"";
  out << " sweep run-job \"$sweep_dir\" \"$job\" &\n"
      << "child=$!\n"
      << "while :; do\n"
      << "  wait \"$child\"\n"
      << "  rc=$?\n"
      << "  kill -0 \"$child\" 2>/dev/null || break\n"
      << "done\n"
      << "# wait interrupted by a signal (rc > 128) just as the job ended: its own code\n"
      << "if [ \"$rc\" -gt 128 ]; then wait \"$child\" 2>/dev/null; last=$?; [ \"$last\" -ne 127 ] && rc=$last; fi\n"
      << "echo \"[slurm] $(date -u +%FT%TZ) job $job ended with exit code $rc\"\n"
      << "if [ \"$signalled\" = 1 ] && [ \"${SLURM_RESTART_COUNT:-0}\" -lt \"$max_requeues\" ]; then\n"
      << "  echo \"[slurm] requeueing job $job (it resumes from its last checkpoint)\"\n"
      << "  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n"
      << "fi\n"
      << "exit \"$rc\"\n";
  return out.str();
}

std::string slurm_job_commands(const SweepPlan& plan, const std::vector<int>& todo) {
  std::set<int> wanted(todo.begin(), todo.end());
  std::ostringstream out;
  out << "# The jobs of the SLURM array for the sweep " << plan.sweep_dir << ": array task N runs job N.\n";
  for (const PlannedJob& job : plan.jobs) {
    if (!wanted.count(job.number)) continue;
    out << "\n# job " << job.number << " (run dir " << job.run_dir << "): " << task_overrides_text(job.overrides)
        << "\n"
        << shell_quote(plan.executable) << " sweep run-job " << shell_quote(plan.sweep_dir) << " " << job.number
        << "\n";
  }
  return out.str();
}

}  // namespace trainer::launch
