#include "trainer/launch/slurm_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "trainer/config/interpolation.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/job_status.h"
#include "trainer/launch/job_warnings.h"
#include "trainer/launch/slurm_script.h"
#include "trainer/launch/sweep_summary.h"
#include "trainer/util/duration_text.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;
using trainer::config::Node;

namespace trainer::launch {
namespace {

// sbatch's words where this machine's SLURM client has no cluster to talk to (no slurm.conf, no
// controller answering): no launcher option can fix that.
bool cannot_reach_slurm(const std::string& text) {
  for (const char* words : {"Could not establish a configuration source", "Unable to process configuration file",
                            "Unable to contact slurm controller", "Zero Bytes were transmitted"}) {
    if (text.find(words) != std::string::npos) return true;
  }
  return false;
}

struct CommandResult {
  int code = -1;
  std::string out, err;
};

// Runs a program (found on PATH) with `args`, stdin from /dev/null, and collects its output.
CommandResult run_command(const std::vector<std::string>& args) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    throw Error(args[0], std::string("cannot create a pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw Error(args[0], std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  std::vector<std::string> copy = args;
  for (std::string& arg : copy) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error(args[0], std::string("cannot start a process: ") + std::strerror(errno));
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buffer[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

bool ended_state(JobState state) {
  return state == JobState::kDone || state == JobState::kFailed || state == JobState::kInterrupted ||
         state == JobState::kStoppedEarly;
}

// hydra.launcher with its interpolations (name: ${hydra.job.name}, ...) resolved against the first
// job's composed config, as Hydra resolves the launcher's config.
Node resolved_launcher(const SweepPlan& plan) {
  Node launcher = plan.launcher;
  if (!launcher.is_map() || plan.jobs.empty()) return launcher;
  bool any = false;
  for (const auto& entry : launcher.entries()) any = any || entry.value.is_interpolation();
  if (!any) return launcher;
  const JobRecord first = read_job_record(plan.sweep_dir, plan.jobs.front().number);
  config::ResolveContext ctx;
  ctx.hydra = first.config.find("hydra");
  for (auto& entry : launcher.entries()) {
    if (!entry.value.is_interpolation() || entry.key == "submitit_folder") continue;
    entry.value = config::resolve_path(first.config, "hydra.launcher." + entry.key, ctx);
  }
  return launcher;
}

class SlurmLauncher : public Launcher {
 public:
  void launch(const SweepPlan& plan, const std::vector<int>& todo) override;
  bool interrupted() const override { return interrupted_; }
  bool detached() const override { return detached_; }

 private:
  void wait_for(const SweepPlan& plan, const SlurmOptions& options, const std::vector<int>& todo,
                const std::string& job_id);
  bool interrupted_ = false;
  bool detached_ = false;
};

void SlurmLauncher::launch(const SweepPlan& plan, const std::vector<int>& todo) {
  if (todo.empty()) return;
  const SlurmOptions options = slurm_launcher_options(resolved_launcher(plan));
  std::error_code ec;
  fs::create_directories(slurm_log_dir(plan.sweep_dir), ec);
  if (ec) {
    throw Error(slurm_dir(plan.sweep_dir), "cannot create the SLURM launch directory: " + ec.message(),
                "Check that the sweep directory is writable.");
  }
  const std::string script_path = slurm_script_path(plan.sweep_dir);
  const std::string script = slurm_array_script(options, plan, todo);
  write_file_atomically(script_path, script);
  ::chmod(script_path.c_str(), 0755);
  write_file_atomically(slurm_commands_path(plan.sweep_dir), slurm_job_commands(plan, todo));
  const std::string submit = "sbatch --parsable " + shell_quote(script_path);

  if (!on_path("sbatch")) {
    detached_ = true;
    std::cout << "# sbatch is not on PATH here: the job array for " << todo.size()
              << " job(s) is written but not submitted.\n"
              << "# Script: " << script_path << "\n"
              << "# Each job's command line: " << slurm_commands_path(plan.sweep_dir) << "\n"
              << "# Submit it on a SLURM login node with:\n"
              << submit << "\n"
              << "# then follow it with `trainer sweep summary " << shell_quote(plan.sweep_dir)
              << "`; re-running this command (or `trainer sweep resume`) submits only the jobs not done.\n"
              << "# ---- " << script_path << " ----\n"
              << script << std::flush;
    return;
  }

  const CommandResult submitted = run_command({"sbatch", "--parsable", script_path});
  if (submitted.code != 0 && cannot_reach_slurm(submitted.err + submitted.out)) {
    throw Error(submit,
                "sbatch cannot reach a SLURM cluster from this machine (exit code " + std::to_string(submitted.code) +
                    "): " + trimmed(submitted.err + submitted.out),
                "Check that `sinfo` works here (slurm.conf, or SLURM_CONF naming it, and its controller running); "
                "or run the sweep on this machine with hydra/launcher=basic. Nothing was submitted.");
  }
  if (submitted.code != 0) {
    throw Error(submit,
                "sbatch refused the job array (exit code " + std::to_string(submitted.code) +
                    "): " + trimmed(submitted.err + submitted.out),
                "Fix the hydra.launcher options named there (partition, time, gpus, mem, ...) and run the same "
                "command again; the script is " +
                    script_path + ".");
  }
  std::string job_id = trimmed(submitted.out);
  job_id = job_id.substr(0, job_id.find(';'));  // "<id>;<cluster>" on federated clusters
  {
    std::ofstream log(fs::path(slurm_dir(plan.sweep_dir)) / "submitted.txt", std::ios::app);
    log << iso_time(now_epoch_s()) << " job " << job_id << " array " << slurm_array_indices(todo) << "\n";
  }
  std::cerr << "[sweep] submitted SLURM job array " << job_id << ": " << todo.size() << " job(s)"
            << (options.array_parallelism > 0 && options.array_parallelism < static_cast<int>(todo.size())
                    ? ", at most " + std::to_string(options.array_parallelism) + " at once"
                    : std::string())
            << "; script " << script_path << ", logs " << slurm_log_dir(plan.sweep_dir) << "/<job>.out|err"
            << std::endl;
  if (!options.wait) {
    detached_ = true;
    std::cerr << "[sweep] not waiting (hydra.launcher.wait=false). Follow it with: squeue -j " << job_id
              << "; trainer sweep summary " << shell_quote(plan.sweep_dir) << ". Cancel: scancel " << job_id
              << ". Resume what did not finish: trainer sweep resume " << shell_quote(plan.sweep_dir) << std::endl;
    return;
  }
  wait_for(plan, options, todo, job_id);
}

void SlurmLauncher::wait_for(const SweepPlan& plan, const SlurmOptions& options, const std::vector<int>& todo,
                             const std::string& job_id) {
  std::map<int, const PlannedJob*> by_number;
  for (const PlannedJob& job : plan.jobs) by_number[job.number] = &job;
  // A status file counts once its start time differs from the one before submission (a resumed
  // sweep's jobs have old ones).
  std::map<int, std::string> old_start;
  for (int number : todo) {
    if (auto status = read_job_status(plan.sweep_dir, number)) old_start[number] = status->start_time;
  }
  const auto monitor = sweep_monitor(plan.sweep_dir);
  std::set<int> started, ended;
  int failed = 0;
  double ended_seconds = 0;
  bool cancelled_rest = false;
  const double wait_start = now_epoch_s();

  sigset_t wanted, previous;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGTERM);
  sigprocmask(SIG_BLOCK, &wanted, &previous);

  auto report = [&](int number, const JobStatus& status) {
    ended.insert(number);
    ended_seconds += status.duration_s;
    if (status.state == JobState::kFailed) ++failed;
    const PlannedJob& job = *by_number.at(number);
    const MetricHistory metric =
        read_metric_history((fs::path(job.run_dir) / "metrics.csv").string(), monitor.first, monitor.second);
    std::string line = "[sweep] #" + std::to_string(number) + " " + state_name(status.state) + " in " +
                       duration_text(status.duration_s);
    if (metric.last) line += ", " + monitor.first + " " + metric_text(metric.last);
    if (status.state == JobState::kFailed && !status.error.empty()) line += ": " + status.error;
    line += " | " + std::to_string(ended.size()) + "/" + std::to_string(todo.size()) + " ended";
    if (failed > 0) line += ", " + std::to_string(failed) + " failed";
    const size_t running = started.size() - std::min(started.size(), ended.size());
    const size_t remaining = todo.size() - ended.size();
    if (remaining > 0 && running > 0 && !cancelled_rest) {
      line += ", ETA " + duration_text(ended_seconds / static_cast<double>(ended.size()) *
                                       static_cast<double>(remaining) / static_cast<double>(running));
    }
    std::cerr << line << std::endl;
    say_job_warnings(number, job.run_dir);
    try {
      write_sweep_summary(plan);
    } catch (const std::exception& error) {
      std::cerr << "[sweep] warning: summary not written: " << error.what() << std::endl;
    }
    if (status.state == JobState::kFailed && options.fail_fast && !cancelled_rest) {
      cancelled_rest = true;
      const CommandResult cancel = run_command({"scancel", "--state=PENDING", job_id});
      std::cerr << "[sweep] stopping at the first failure (hydra.launcher.fail_fast=true): the array's pending "
                   "tasks are cancelled"
                << (cancel.code == 0 ? "" : " (scancel failed: " + trimmed(cancel.err) + ")") << std::endl;
    }
  };

  // Job `number`'s status file when this run's task wrote it (not an earlier attempt's); none while
  // it is missing or being replaced (read again next time).
  auto fresh_status = [&](int number) -> std::optional<JobStatus> {
    std::optional<JobStatus> status;
    try {
      status = read_job_status(plan.sweep_dir, number);
    } catch (const Error&) {
      return std::nullopt;
    }
    if (status && old_start.count(number) && old_start[number] == status->start_time) return std::nullopt;
    return status;
  };

  auto scan = [&]() {
    for (int number : todo) {
      if (ended.count(number)) continue;
      const std::optional<JobStatus> status = fresh_status(number);
      if (!status) continue;
      if (!started.count(number)) {
        started.insert(number);
        std::cerr << "[sweep] #" << number << " started on " << status->host
                  << (status->resumed ? " (resuming from last.ckpt)" : "") << ": "
                  << task_overrides_text(by_number.at(number)->overrides) << std::endl;
      }
      if (ended_state(status->state)) report(number, *status);
    }
  };

  double last_squeue_warning = 0;
  try {
    for (;;) {
      scan();
      const CommandResult queue = run_command({"squeue", "-h", "-j", job_id, "-o", "%i %T"});
      if (queue.code == 0 && trimmed(queue.out).empty()) break;
      if (queue.code != 0) {
        if (queue.err.find("Invalid job id") != std::string::npos) break;  // gone from the controller
        if (now_epoch_s() - last_squeue_warning > 60) {
          last_squeue_warning = now_epoch_s();
          std::cerr << "[sweep] warning: squeue failed (" << trimmed(queue.err) << "); still waiting for SLURM job "
                    << job_id << std::endl;
        }
      }
      const timespec pause{2, 0};
      siginfo_t info;
      const int signal_number = sigtimedwait(&wanted, &info, &pause);
      if (signal_number == SIGINT || signal_number == SIGTERM) {
        interrupted_ = true;
        std::cerr << "[sweep] stopped waiting; SLURM job " << job_id << " goes on (cancel it with: scancel " << job_id
                  << "). Follow it with: trainer sweep summary " << shell_quote(plan.sweep_dir) << std::endl;
        break;
      }
    }
  } catch (...) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (interrupted_) return;

  // The array is gone. A job whose task never wrote a final status (cancelled before it started,
  // killed at the time limit, node lost) gets one here, so the summary and a resume see it.
  scan();
  for (int number : todo) {
    if (ended.count(number)) continue;
    const std::optional<JobStatus> status = fresh_status(number);
    const bool fresh = status.has_value();
    JobStatus written = fresh ? *status : JobStatus{};
    if (fresh && written.state == JobState::kRunning && job_process_alive(written)) continue;
    const std::string log = slurm_log_dir(plan.sweep_dir) + "/" + std::to_string(number) + ".err";
    if (fresh) {
      written.state = JobState::kInterrupted;
      written.error = "its SLURM task ended while the job ran (time limit, scancel or a lost node); see " + log;
    } else {
      written.state = JobState::kFailed;
      written.error =
          "its SLURM task ended without running the job (cancelled, or the job could not start); see " + log;
      written.start_epoch_s = now_epoch_s();
      written.start_time = iso_time(written.start_epoch_s);
    }
    written.end_time = iso_time(now_epoch_s());
    written.duration_s = std::max(0.0, now_epoch_s() - written.start_epoch_s);
    written.exit_code = 1;
    write_job_status(plan.sweep_dir, number, written);
    if (!started.count(number)) started.insert(number);
    report(number, written);
  }
  std::cerr << "[sweep] SLURM job " << job_id << ": " << ended.size() << " job(s) ended in "
            << duration_text(now_epoch_s() - wait_start)
            << (failed > 0 ? ", " + std::to_string(failed) + " failed" : std::string()) << std::endl;
}

}  // namespace

std::unique_ptr<Launcher> make_slurm_launcher(const SweepPlan& /*plan*/) { return std::make_unique<SlurmLauncher>(); }

int slurm_array_parallelism(const Node& launcher) {
  const Node* value = launcher.is_map() ? launcher.find("array_parallelism") : nullptr;
  return value != nullptr && value->type() == config::NodeType::kInt ? static_cast<int>(value->as_int())
                                                                     : SlurmOptions{}.array_parallelism;
}

bool launch_slurm_trials(const SweepPlan& plan, const std::vector<int>& todo, JobSource& source, int at_once) {
  if (!on_path("sbatch")) {
    throw Error("hydra/launcher=slurm",
                "sbatch is not on PATH here, and the Optuna sweeper submits each trial when a slot frees, so it must "
                "run where it can submit",
                "run the sweep on a SLURM login node (in tmux or screen, or as a batch job of its own)");
  }
  std::error_code ec;
  fs::create_directories(slurm_log_dir(plan.sweep_dir), ec);
  if (ec) {
    throw Error(slurm_dir(plan.sweep_dir), "cannot create the SLURM launch directory: " + ec.message(),
                "Check that the sweep directory is writable.");
  }
  if (const Node* wait = plan.launcher.is_map() ? plan.launcher.find("wait") : nullptr;
      wait != nullptr && wait->type() == config::NodeType::kBool && !wait->as_bool()) {
    throw Error("hydra.launcher.wait",
                "the Optuna sweeper asks for each trial when one ends, so it waits for its trials under SLURM",
                "leave hydra.launcher.wait=true; to leave the sweep running, start it in tmux, screen or a batch "
                "job of its own");
  }
  std::optional<SlurmOptions> options;  // read at the first submission: its interpolations need a job's config
  std::map<int, std::string> job_ids;   // trial number -> SLURM job id
  std::map<int, std::string> old_start;
  std::set<int> started, ended, pruned;
  std::vector<int> submitted_order;
  std::vector<int> queue(todo.rbegin(), todo.rend());  // popped from the back: todo's order
  int failed = 0;
  bool interrupted = false, stop_submitting = false, cancel_queued = false, cancelled_queued = false;
  std::map<int, double> gone_since;  // when squeue first no longer listed a trial without a final status
  const auto monitor = sweep_monitor(plan.sweep_dir);
  const double start = now_epoch_s();

  auto job_of = [&](int number) -> const PlannedJob& {
    for (const PlannedJob& job : plan.jobs) {
      if (job.number == number) return job;
    }
    throw Error("sweep " + plan.sweep_dir, "internal: trial " + std::to_string(number) + " is not in the plan");
  };
  auto submit = [&](int number) {
    if (!options) options = slurm_launcher_options(resolved_launcher(plan));
    if (auto status = read_job_status(plan.sweep_dir, number)) old_start[number] = status->start_time;
    const std::string script_path = slurm_dir(plan.sweep_dir) + "/trial_" + std::to_string(number) + ".sbatch";
    write_file_atomically(script_path, slurm_array_script(*options, plan, {number}));
    ::chmod(script_path.c_str(), 0755);
    submitted_order.push_back(number);
    write_file_atomically(slurm_commands_path(plan.sweep_dir), slurm_job_commands(plan, submitted_order));
    const CommandResult submitted = run_command({"sbatch", "--parsable", script_path});
    if (submitted.code != 0) {
      throw Error("sbatch --parsable " + shell_quote(script_path),
                  "sbatch refused trial " + std::to_string(number) + " (exit code " + std::to_string(submitted.code) +
                      "): " + trimmed(submitted.err + submitted.out),
                  cannot_reach_slurm(submitted.err + submitted.out)
                      ? "sbatch cannot reach a SLURM cluster from this machine: check that `sinfo` works here "
                        "(slurm.conf, or SLURM_CONF naming it, and its controller running), then run the same command "
                        "again: the study goes on from its saved state."
                      : "Fix the hydra.launcher options named there (partition, time, gpus, mem, ...) and run the "
                        "same command again: the study goes on from its saved state.");
    }
    std::string job_id = trimmed(submitted.out);
    job_id = job_id.substr(0, job_id.find(';'));
    job_ids[number] = job_id;
    std::ofstream(fs::path(slurm_dir(plan.sweep_dir)) / "submitted.txt", std::ios::app)
        << iso_time(now_epoch_s()) << " job " << job_id << " trial " << number << "\n";
    std::cerr << "[sweep] #" << number << " submitted as SLURM job " << job_id << ": "
              << task_overrides_text(job_of(number).overrides) << std::endl;
  };
  auto fresh_status = [&](int number) -> std::optional<JobStatus> {
    std::optional<JobStatus> status;
    try {
      status = read_job_status(plan.sweep_dir, number);
    } catch (const Error&) {
      return std::nullopt;
    }
    if (status && old_start.count(number) && old_start[number] == status->start_time) return std::nullopt;
    return status;
  };
  auto finish = [&](int number, JobStatus status) {
    ended.insert(number);
    if (pruned.count(number) && (status.state == JobState::kInterrupted || status.state == JobState::kFailed)) {
      status.state = JobState::kStoppedEarly;  // stopped by the pruner: kept, not resumed
      status.error.clear();
      write_job_status(plan.sweep_dir, number, status);
    }
    if (status.state == JobState::kFailed) ++failed;
    const MetricHistory metric =
        read_metric_history((fs::path(job_of(number).run_dir) / "metrics.csv").string(), monitor.first, monitor.second);
    std::string line = "[sweep] #" + std::to_string(number) + " " + state_name(status.state) + " in " +
                       duration_text(status.duration_s);
    if (metric.last) line += ", " + monitor.first + " " + metric_text(metric.last);
    if (status.state == JobState::kFailed && !status.error.empty()) line += ": " + status.error;
    line += " | " + std::to_string(ended.size()) + " ended";
    if (failed > 0) line += ", " + std::to_string(failed) + " failed";
    std::cerr << line << std::endl;
    say_job_warnings(number, job_of(number).run_dir);
    try {
      write_sweep_summary(plan);
    } catch (const std::exception& error) {
      std::cerr << "[sweep] warning: summary not written: " << error.what() << std::endl;
    }
    source.job_ended(number);
    if (status.state == JobState::kFailed && options && options->fail_fast && !stop_submitting) {
      stop_submitting = true;
      cancel_queued = true;  // done after this scan (the trials' state is read there)
    }
  };
  auto active = [&]() {
    std::vector<int> numbers;
    for (const auto& [number, id] : job_ids) {
      if (!ended.count(number)) numbers.push_back(number);
    }
    return numbers;
  };
  auto signal_trials = [&](const std::vector<int>& numbers) {
    // A started trial gets SIGTERM (it checkpoints and ends); a queued one is taken off the queue.
    for (int number : numbers) {
      if (started.count(number) || fresh_status(number)) {
        run_command({"scancel", "--signal=TERM", "--full", job_ids[number]});
      } else {
        run_command({"scancel", job_ids[number]});
      }
    }
  };

  sigset_t wanted, previous;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGTERM);
  sigprocmask(SIG_BLOCK, &wanted, &previous);
  double last_squeue_warning = 0;
  try {
    for (;;) {
      while (!stop_submitting && !interrupted && static_cast<int>(active().size()) < at_once) {
        std::optional<int> number;
        if (!queue.empty()) {
          number = queue.back();
          queue.pop_back();
        } else {
          number = source.next_job();
        }
        if (!number) break;
        submit(*number);
      }
      const std::vector<int> running = active();
      if (running.empty()) break;
      // Which of them SLURM still holds (queued, running or completing).
      std::string ids;
      for (int number : running) ids += (ids.empty() ? "" : ",") + job_ids[number];
      const CommandResult queue_state = run_command({"squeue", "-h", "-j", ids, "-o", "%i"});
      std::set<std::string> held;
      if (queue_state.code == 0) {
        std::istringstream lines(queue_state.out);
        for (std::string id; lines >> id;) held.insert(id.substr(0, id.find('_')));
      } else if (queue_state.err.find("Invalid job id") == std::string::npos &&
                 now_epoch_s() - last_squeue_warning > 60) {
        last_squeue_warning = now_epoch_s();
        std::cerr << "[sweep] warning: squeue failed (" << trimmed(queue_state.err) << "); still waiting" << std::endl;
      }
      const bool queue_known = queue_state.code == 0 || queue_state.err.find("Invalid job id") != std::string::npos;
      for (int number : running) {
        std::optional<JobStatus> status = fresh_status(number);
        if (status && !started.count(number)) {
          started.insert(number);
          std::cerr << "[sweep] #" << number << " started on " << status->host
                    << (status->resumed ? " (resuming from last.ckpt)" : "") << std::endl;
        }
        const bool held_now = !queue_known || held.count(job_ids[number]) > 0;
        if (status && status->state == JobState::kInterrupted && held_now && !pruned.count(number) && !interrupted &&
            !cancelled_queued && options && options->max_num_timeout > 0) {
          // Stopped by the time-limit signal: the task requeues itself (max_num_timeout) and goes on
          // from last.ckpt; its end is the requeued run's.
          continue;
        }
        if (status && ended_state(status->state)) {
          finish(number, *status);
          continue;
        }
        if (held_now) {
          gone_since.erase(number);
        } else {
          // SLURM no longer has it, and no final status is to be seen (yet: on a network file system
          // the job's last write may show later): cancelled, time limit, lost node. Written after a
          // grace of 10 s, read once more just before.
          const double now = now_epoch_s();
          if (!gone_since.count(number)) gone_since[number] = now;
          if (now - gone_since[number] < 10) continue;
          status = fresh_status(number);
          if (status && ended_state(status->state)) {
            finish(number, *status);
            continue;
          }
          if (status && status->state == JobState::kRunning && job_process_alive(*status)) continue;
          const std::string log = slurm_log_dir(plan.sweep_dir) + "/" + std::to_string(number) + ".err";
          JobStatus written = status ? *status : JobStatus{};
          if (status || interrupted || cancelled_queued) {  // cut short, or taken off the queue: run again on resume
            written.state = JobState::kInterrupted;
            written.error =
                status ? "its SLURM job ended while the trial ran (time limit, scancel or a lost node); see " + log
                : interrupted ? std::string("the sweep was interrupted before its SLURM job started")
                              : std::string("taken off the queue when a trial failed (hydra.launcher.fail_fast)");
            if (!status) {
              written.start_epoch_s = now_epoch_s();
              written.start_time = iso_time(written.start_epoch_s);
            }
          } else {
            written.state = JobState::kFailed;
            written.error =
                "its SLURM job ended without running the trial (cancelled, or it could not start); see " + log;
            written.start_epoch_s = now_epoch_s();
            written.start_time = iso_time(written.start_epoch_s);
          }
          written.end_time = iso_time(now_epoch_s());
          written.duration_s = std::max(0.0, now_epoch_s() - written.start_epoch_s);
          written.exit_code = 1;
          write_job_status(plan.sweep_dir, number, written);
          finish(number, written);
          continue;
        }
        if (status && source.watches() && !pruned.count(number) && !interrupted && source.prune(number)) {
          pruned.insert(number);
          signal_trials({number});
        }
      }
      if (cancel_queued) {
        cancel_queued = false;
        cancelled_queued = true;
        std::vector<int> queued;
        for (int number : active()) {
          if (!started.count(number) && !fresh_status(number)) queued.push_back(number);
        }
        std::cerr << "[sweep] stopping at the first failure (hydra.launcher.fail_fast=true): no more trials are "
                     "submitted, "
                  << queued.size() << " queued one(s) cancelled" << std::endl;
        signal_trials(queued);
      }
      const timespec pause{1, 0};
      siginfo_t info;
      const int signal_number = sigtimedwait(&wanted, &info, &pause);
      if (signal_number == SIGINT || signal_number == SIGTERM) {
        const std::vector<int> left = active();
        if (!interrupted) {
          std::cerr << "[sweep] interrupted: no more trials are submitted; the " << left.size()
                    << " queued or running get SIGTERM (they write last.ckpt and end interrupted)" << std::endl;
        } else {
          std::cerr << "[sweep] interrupted again: SIGTERM sent once more to the " << left.size()
                    << " trial(s) still queued or running" << std::endl;
        }
        interrupted = true;
        signal_trials(left);
      }
    }
  } catch (...) {
    // Submitted trials are not left to run unwatched: the running ones checkpoint and end
    // interrupted, the queued ones are taken off the queue; the study resumes them all.
    const std::vector<int> left = active();
    if (!left.empty()) {
      std::string ids;
      for (int number : left) ids += " " + job_ids[number];
      std::cerr << "[sweep] stopping the " << left.size() << " trial(s) submitted (SLURM jobs" << ids
                << "): they resume with the study" << std::endl;
      try {
        signal_trials(left);
      } catch (...) {
      }
    }
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  std::cerr << "[sweep] " << ended.size() << " trial(s) ended under SLURM in " << duration_text(now_epoch_s() - start)
            << (failed > 0 ? ", " + std::to_string(failed) + " failed" : std::string()) << std::endl;
  return interrupted;
}

}  // namespace trainer::launch
