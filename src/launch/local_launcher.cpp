#include "trainer/launch/local_launcher.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "trainer/config/sweeper.h"
#include "trainer/launch/asha.h"
#include "trainer/launch/job_runner.h"
#include "trainer/launch/job_status.h"
#include "trainer/launch/job_warnings.h"
#include "trainer/launch/sweep_summary.h"
#include "trainer/util/duration_text.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/signal_cause.h"
#include "trainer/util/usable_cores.h"

extern char** environ;

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

// Where a job process that ended without its status wrote why: its stderr.log, unless that is
// empty on a disk with next to no room (the write of the error itself failed).
std::string where_its_error_went(const std::string& stderr_log) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(stderr_log, ec);
  if (ec || size > 0) return "see " + stderr_log;
  const fs::space_info space = fs::space(fs::path(stderr_log).parent_path(), ec);
  if (ec || space.available >= (uintmax_t{1} << 20)) return "see " + stderr_log + " (empty)";
  return "its " + stderr_log + " is empty, on a disk with " + std::to_string(space.available / 1024) +
         " KiB free: the disk is likely full, and the job's error could not be written";
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int int_option(const config::Node& launcher, const char* key, int fallback) {
  const config::Node* node = launcher.is_map() ? launcher.find(key) : nullptr;
  if (node == nullptr || node->is_null()) return fallback;
  if (node->type() != config::NodeType::kInt) {
    throw Error(std::string("hydra.launcher.") + key,
                std::string("expected an integer, got ") + config::type_name(node->type()),
                std::string("Set it on the command line, e.g. hydra.launcher.") + key + "=2.");
  }
  return static_cast<int>(node->as_int());
}

// A job process being run, and what is needed to report on it.
struct Child {
  int number = 0;
  int slot = 0;
  Clock::time_point start;
  bool killed_by_sweep = false;  // SIGKILL sent on the sweep's second interrupt
};

// The argv/envp of one job process, built before fork (the child only calls async-signal-safe
// functions between fork and exec).
struct ExecImage {
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
  std::string out_path, err_path;
  cpu_set_t cpus;
  bool pin = false;

  void finish() {
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
};

// The job process forked from the sweep process, which has the engine loaded (launcher.h,
// set_in_process_job): it takes the environment the exec'd process would have had (OMP/MKL thread
// counts, CUDA_VISIBLE_DEVICES: read by those libraries only when they first start their threads
// or devices, which this process has not done), default signal dispositions, runs the job and
// exits without the sweep process's static destructors or atexit handlers.
[[noreturn]] void run_job_in_child(const InProcessJob& job, ExecImage& image, const std::string& sweep_dir,
                                   int number) {
  environ = image.envp.data();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  int code = 1;
  try {
    code = job(sweep_dir, number);
  } catch (const std::exception& error) {
    std::cerr << "trainer sweep: job " << number << ": " << error.what() << std::endl;
  }
  std::cout.flush();
  std::cerr.flush();
  log::flush();
  std::fflush(nullptr);
  _exit(code);
}

}  // namespace

LocalLauncherOptions local_launcher_options(const config::Node& launcher, const std::string& name) {
  LocalLauncherOptions options;
  options.name = name;
  options.n_jobs = name == "basic" ? 1 : int_option(launcher, "n_jobs", -1);
  if (options.n_jobs == 0 || options.n_jobs < -1) {
    throw Error("hydra.launcher.n_jobs", "n_jobs=" + std::to_string(options.n_jobs) + " runs no job",
                "Use a positive number of jobs at once, or -1 for one per core.");
  }
  options.gpus_per_job = int_option(launcher, "gpus_per_job", 0);
  if (options.gpus_per_job < 0) {
    throw Error("hydra.launcher.gpus_per_job", "must be 0 or more", "Use 0 (no GPU assignment) or a device count.");
  }
  const config::Node* fail_fast = launcher.is_map() ? launcher.find("fail_fast") : nullptr;
  if (fail_fast != nullptr && !fail_fast->is_null()) {
    if (fail_fast->type() != config::NodeType::kBool) {
      throw Error("hydra.launcher.fail_fast", "expected true or false", "Use hydra.launcher.fail_fast=true.");
    }
    options.fail_fast = fail_fast->as_bool();
  }
  return options;
}

LocalLauncher::LocalLauncher(LocalLauncherOptions options) : options_(std::move(options)) {}

SlotLayout slot_layout(int n_jobs, int cores, int jobs_to_run, int planned_jobs) {
  SlotLayout layout;
  cores = std::max(1, cores);
  const int parallel = n_jobs < 0 ? cores : n_jobs;
  layout.slots = std::max(1, std::min(parallel, std::max(1, jobs_to_run)));
  layout.threads_per_job = std::max(1, cores / std::max(1, std::min(parallel, std::max(jobs_to_run, planned_jobs))));
  return layout;
}

std::vector<std::string> visible_gpus() {
  std::vector<std::string> gpus;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string list = env, item;
    for (char c : list + ",") {
      if (c == ',') {
        if (!item.empty()) gpus.push_back(item);
        item.clear();
      } else if (c != ' ') {
        item += c;
      }
    }
    return gpus;
  }
  for (int i = 0; i < 64; ++i) {
    std::error_code ec;
    if (fs::exists("/dev/nvidia" + std::to_string(i), ec)) gpus.push_back(std::to_string(i));
  }
  return gpus;
}

void LocalLauncher::launch(const SweepPlan& plan, const std::vector<int>& todo) { launch(plan, todo, nullptr); }

void LocalLauncher::launch(const SweepPlan& plan, const std::vector<int>& todo, JobSource* source) {
  const int from_source = source != nullptr ? source->remaining() : 0;
  if (todo.empty() && from_source == 0) return;
  const std::vector<int> cpus = usable_cpus();
  // A grid sweep's threads per job are those of its whole plan, whatever a resume has left to run.
  const int to_run = static_cast<int>(todo.size()) + from_source;
  SlotLayout layout = slot_layout(options_.n_jobs, static_cast<int>(cpus.size()), to_run,
                                  source != nullptr ? to_run : static_cast<int>(plan.jobs.size()));
  if (source != nullptr && source->parallel() < layout.slots) {
    layout.slots = std::max(1, source->parallel());
    layout.threads_per_job = std::max(1, static_cast<int>(cpus.size()) / layout.slots);
  }
  std::vector<std::string> gpus;
  if (options_.gpus_per_job > 0) {
    gpus = visible_gpus();
    const int fit = static_cast<int>(gpus.size()) / options_.gpus_per_job;
    if (fit < 1) {
      throw Error("hydra.launcher.gpus_per_job",
                  "each job needs " + std::to_string(options_.gpus_per_job) + " GPU(s) but " +
                      std::to_string(gpus.size()) + " are visible",
                  "Lower gpus_per_job, or set it to 0 to run without assigning devices.");
    }
    layout.slots = std::min(layout.slots, fit);
    layout.threads_per_job = std::max(1, static_cast<int>(cpus.size()) / layout.slots);
  }
  // Thread counts are set (and jobs pinned) wherever a job gets fewer threads than the cores: also
  // for the one job a resume has left, which keeps the threads it had when it started.
  const bool shared = layout.slots > 1 || layout.threads_per_job < static_cast<int>(cpus.size());

  std::map<int, const PlannedJob*> by_number;
  for (const PlannedJob& job : plan.jobs) by_number[job.number] = &job;

  // Signals come through sigtimedwait: SIGCHLD (a job ended), SIGINT/SIGTERM (stop the sweep).
  sigset_t wanted, previous;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGCHLD);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGTERM);
  sigprocmask(SIG_BLOCK, &wanted, &previous);

  {
    std::string how = options_.name == "basic" ? "one at a time"
                                               : std::to_string(layout.slots) + " at a time, " +
                                                     std::to_string(layout.threads_per_job) + " thread(s) each";
    const std::string count = source == nullptr ? std::to_string(todo.size()) + " job(s)"
                              : todo.empty()    ? "up to " + std::to_string(from_source) + " trial(s)"
                                                : std::to_string(todo.size()) + " job(s) and up to " +
                                                   std::to_string(from_source) + " new trial(s)";
    std::cerr << "[sweep] launching " << count << " (" << options_.name << " launcher, " << how
              << (in_process_job() ? ", each forked from this process with the engine loaded" : "") << ") in "
              << plan.sweep_dir << std::endl;
  }

  const auto monitor = sweep_monitor(plan.sweep_dir);

  // hydra/sweeper=asha: each running job's metrics.csv is read every half second; every epoch it
  // has finished is reported to the scheduler, and a job cut at a rung gets SIGTERM (it writes
  // last.ckpt and ends; recorded as stopped_early). Jobs that ended before (a resumed sweep) are
  // reported first, so the rungs hold their results again.
  std::unique_ptr<AshaScheduler> asha;
  std::map<int, int64_t> asha_reported;                 // job -> epochs reported
  std::map<int, double> asha_last_value;                // job -> the value of its last epoch reported
  std::map<int, AshaScheduler::Decision> asha_decided;  // jobs told to stop (or complete)
  if (!plan.sweeper.is_null() && config::sweeper_kind(plan.sweeper) == config::SweeperKind::kAsha) {
    const JobRecord first = read_job_record(plan.sweep_dir, plan.jobs.front().number);
    asha = std::make_unique<AshaScheduler>(asha_options(plan.sweeper, first.config));
    std::cerr << "[sweep] ASHA on " << asha->options().metric << " (" << asha->options().mode << "), rungs at";
    for (double milestone : asha->milestones()) std::cerr << " " << milestone;
    std::cerr << " epochs" << std::endl;
  }
  // Feeds the epochs job `number` finished since the last call; returns the last decision. A
  // replay (a resumed sweep's jobs, before any runs) records every epoch at its rungs and decides
  // nothing: those jobs' decisions were made when they ran.
  auto asha_feed = [&](int number, bool replay = false) {
    AshaScheduler::Decision decision = AshaScheduler::Decision::kContinue;
    const MetricHistory history =
        read_metric_history((fs::path(by_number.at(number)->run_dir) / "metrics.csv").string(), asha->options().metric,
                            asha->options().mode);
    // One result per epoch: the epoch's last value (epochs are 0-based in metrics.csv).
    std::vector<std::pair<int64_t, double>> per_epoch;
    for (const auto& point : history.points) {
      const int64_t t = static_cast<int64_t>(point.first) + 1;
      if (!per_epoch.empty() && per_epoch.back().first == t) {
        per_epoch.back().second = point.second;
      } else {
        per_epoch.emplace_back(t, point.second);
      }
    }
    int64_t& reported = asha_reported[number];
    for (const auto& [t, value] : per_epoch) {
      if (t <= reported) continue;
      reported = t;
      asha_last_value[number] = value;
      decision = asha->on_result(number, t, value);
      if (decision != AshaScheduler::Decision::kContinue && !replay) break;
    }
    return decision;
  };
  if (asha) {
    // Every job's epochs so far, those to run again included: one interrupted after it passed a
    // rung was judged again at that rung as it resumed, against results that came after it there,
    // and stopped (a decision the uninterrupted sweep never made).
    // A failed job runs again from scratch, so its earlier epochs are not its own any more.
    for (const PlannedJob& job : plan.jobs) {
      const std::optional<JobStatus> status = read_job_status(plan.sweep_dir, job.number);
      if (status && status->state != JobState::kFailed && status->state != JobState::kPending) {
        asha_feed(job.number, /*replay=*/true);
      }
    }
  }
  std::map<pid_t, Child> running;
  std::vector<bool> slot_busy(static_cast<size_t>(layout.slots), false);
  size_t next = 0;
  int sourced = 0;                             // jobs the source made
  int ended = 0, failed = 0, interrupted = 0;  // interrupted: ended, but it resumes
  double ended_seconds = 0;
  bool stop_launching = false;
  const Clock::time_point sweep_start = Clock::now();
  std::optional<Clock::time_point> last_summary;  // none written yet
  const pid_t parent = getpid();

  auto refresh_summary = [&](bool force) {
    if (!force && last_summary && seconds_since(*last_summary) < 2.0) return;
    last_summary = Clock::now();
    try {
      write_sweep_summary(plan);
    } catch (const std::exception& error) {
      std::cerr << "[sweep] warning: summary not written: " << error.what() << std::endl;
    }
  };
  refresh_summary(true);  // from the start: a sweep killed (SIGKILL) in its first job leaves one too

  const InProcessJob& run_here = in_process_job();
  auto start_job = [&](int number) {
    auto found = by_number.find(number);
    if (found == by_number.end()) throw Error("sweep", "internal: job " + std::to_string(number) + " is not planned");
    const PlannedJob& job = *found->second;
    int slot = 0;
    while (slot_busy[static_cast<size_t>(slot)]) ++slot;
    std::error_code ec;
    fs::create_directories(job.run_dir, ec);
    const std::optional<JobStatus> before = read_job_status(plan.sweep_dir, number);
    const std::string resumed_from = checkpoint_to_continue_from(before, job.run_dir);

    ExecImage image;
    image.args = {plan.executable, "sweep", "run-job", plan.sweep_dir, std::to_string(number)};
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry = *e;
      const bool replaced =
          (shared && (entry.rfind("OMP_NUM_THREADS=", 0) == 0 || entry.rfind("MKL_NUM_THREADS=", 0) == 0)) ||
          (!gpus.empty() && entry.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) ||
          entry.rfind("TRAINER_JOB_COMMAND=", 0) == 0;
      if (!replaced) image.env.push_back(entry);
    }
    if (shared) {
      image.env.push_back("OMP_NUM_THREADS=" + std::to_string(layout.threads_per_job));
      image.env.push_back("MKL_NUM_THREADS=" + std::to_string(layout.threads_per_job));
      CPU_ZERO(&image.cpus);
      for (int i = 0; i < layout.threads_per_job; ++i) {
        CPU_SET(cpus[static_cast<size_t>((slot * layout.threads_per_job + i)) % cpus.size()], &image.cpus);
      }
      image.pin = true;
    }
    if (!gpus.empty()) {
      std::string list;
      for (int i = 0; i < options_.gpus_per_job; ++i) {
        list += (list.empty() ? "" : ",") +
                gpus[static_cast<size_t>(slot) * static_cast<size_t>(options_.gpus_per_job) + static_cast<size_t>(i)];
      }
      image.env.push_back("CUDA_VISIBLE_DEVICES=" + list);
    }
    if (run_here) {  // a forked job's /proc/self/cmdline is the sweep's: its own, for its DDP ranks
      std::string command;
      for (const std::string& arg : image.args) command += (command.empty() ? "" : "\x1f") + arg;
      image.env.push_back("TRAINER_JOB_COMMAND=" + command);
    }
    image.out_path = (fs::path(job.run_dir) / "stdout.log").string();
    image.err_path = (fs::path(job.run_dir) / "stderr.log").string();
    image.finish();

    std::cout.flush();  // nothing buffered here may be written twice by a forked job
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw Error("sweep", std::string("cannot start a job process: ") + std::strerror(errno));
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &previous, nullptr);
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // the sweep killed: its jobs checkpoint and stop
      if (getppid() != parent) _exit(143);
      if (image.pin) sched_setaffinity(0, sizeof(image.cpus), &image.cpus);
      const int out = ::open(image.out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      const int err = ::open(image.err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (out >= 0) dup2(out, STDOUT_FILENO);
      if (err >= 0) dup2(err, STDERR_FILENO);
      if (run_here) run_job_in_child(run_here, image, plan.sweep_dir, number);
      execve(image.argv[0], image.argv.data(), image.envp.data());
      const char message[] = "trainer sweep: cannot execute the job process\n";
      (void)!::write(STDERR_FILENO, message, sizeof(message) - 1);
      _exit(127);
    }
    slot_busy[static_cast<size_t>(slot)] = true;
    running[pid] = Child{number, slot, Clock::now()};
    std::cerr << "[sweep] #" << number << " started"
              << (resumed_from.empty() ? ""
                                       : " (resuming from " +
                                             (resumed_from == "last" ? std::string("last.ckpt")
                                                                     : fs::path(resumed_from).filename().string()) +
                                             ")")
              << ": " << task_overrides_text(job.overrides) << std::endl;
  };

  auto job_ended = [&](pid_t pid, int wait_status) {
    auto it = running.find(pid);
    if (it == running.end()) return;
    const Child child = it->second;
    running.erase(it);
    slot_busy[static_cast<size_t>(child.slot)] = false;
    const double seconds = seconds_since(child.start);
    std::optional<JobStatus> status = read_job_status(plan.sweep_dir, child.number);
    // The job process ends by writing its status; one that died first gets it written here. A
    // status of another process is an earlier attempt's, which this one could not replace (a full
    // disk): it says nothing of how this attempt ended.
    const bool stale =
        status && status->pid != static_cast<int>(pid) && status->start_epoch_s + 0.05 < now_epoch_s() - seconds;
    if (!status || stale || status->state == JobState::kRunning || status->state == JobState::kPending) {
      JobStatus written = stale ? JobStatus{} : status.value_or(JobStatus{});
      if (written.start_time.empty()) {
        written.start_epoch_s = now_epoch_s() - seconds;
        written.start_time = iso_time(written.start_epoch_s);
      }
      written.end_time = iso_time(now_epoch_s());
      written.duration_s = seconds;
      if (WIFSIGNALED(wait_status)) {
        // Stopped from outside (SIGKILL: the out-of-memory killer, a kill -9) it resumes from its
        // last checkpoint; a crash would crash again: failed, re-run from scratch on resume.
        const int number = WTERMSIG(wait_status);
        written.state = signal_is_crash(number) ? JobState::kFailed : JobState::kInterrupted;
        written.exit_code = 128 + number;
        written.error = child.killed_by_sweep && number == SIGKILL
                            ? "killed by the sweep on its second interrupt (Ctrl-C or SIGTERM) before it stopped; "
                              "it resumes from its last checkpoint"
                            : "the job process was killed by " + signal_text(number) + ": " + signal_cause(number) +
                                  "; see " + (fs::path(by_number[child.number]->run_dir) / "stderr.log").string();
      } else {
        written.state = JobState::kFailed;
        written.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 1;
        written.error = "the job process exited with code " + std::to_string(written.exit_code) +
                        " before writing its status; " +
                        where_its_error_went((fs::path(by_number[child.number]->run_dir) / "stderr.log").string());
      }
      try {
        write_job_status(plan.sweep_dir, child.number, written);
      } catch (const std::exception& error) {  // a full disk: the sweep goes on, and says so
        std::cerr << "[sweep] #" << child.number << ": cannot record how it ended: " << error.what() << std::endl;
      }
      status = written;
    }
    if (asha && !asha_decided.count(child.number)) asha_feed(child.number);  // its last epochs count too
    if (auto decided = asha_decided.find(child.number);
        decided != asha_decided.end() && decided->second == AshaScheduler::Decision::kStop &&
        (status->state == JobState::kInterrupted || status->state == JobState::kFailed)) {
      // Stopped by the scheduler or the pruner, not by a fault: its checkpoint is kept, it is not
      // resumed.
      status->state = JobState::kStoppedEarly;
      status->error.clear();
      write_job_status(plan.sweep_dir, child.number, *status);
    }
    ++ended;
    ended_seconds += seconds;
    if (status->state == JobState::kFailed) ++failed;
    if (status->state == JobState::kInterrupted) ++interrupted;
    const MetricHistory metric = read_metric_history(
        (fs::path(by_number[child.number]->run_dir) / "metrics.csv").string(), monitor.first, monitor.second);
    const int total = static_cast<int>(todo.size()) + sourced + (source != nullptr ? source->remaining() : 0);
    const int remaining = total - ended;
    std::string line =
        "[sweep] #" + std::to_string(child.number) + " " + state_name(status->state) + " in " + duration_text(seconds);
    if (metric.last) line += ", " + monitor.first + " " + metric_text(metric.last);
    const bool stopped = status->state == JobState::kFailed || status->state == JobState::kInterrupted;
    if (stopped && !status->error.empty()) line += ": " + status->error;  // why (a kill from outside too)
    if (auto decided = asha_decided.find(child.number); decided != asha_decided.end() &&
                                                        decided->second == AshaScheduler::Decision::kStop &&
                                                        status->state == JobState::kDone) {
      // Judged late (its epochs are read every half second): it ended before the stop reached it.
      line += " (it ran to its end before " + std::string(asha ? "ASHA's" : "the pruner's") + " stop reached it)";
    }
    line += " | " + std::to_string(ended) + "/" + std::to_string(total) + " ended";
    if (failed > 0) line += ", " + std::to_string(failed) + " failed";
    if (interrupted > 0) line += ", " + std::to_string(interrupted) + " interrupted (a resume continues them)";
    if (remaining > 0 && !stop_launching) {
      const double eta = ended_seconds / ended * remaining / layout.slots;
      line += ", ETA " + duration_text(eta);
    }
    std::cerr << line << std::endl;
    say_job_warnings(child.number, by_number[child.number]->run_dir);
    if (source != nullptr) source->job_ended(child.number);
    if (status->state == JobState::kFailed && options_.fail_fast && !stop_launching) {
      stop_launching = true;
      std::cerr << "[sweep] stopping at the first failure (hydra.launcher.fail_fast=true): no more jobs start"
                << std::endl;
    }
    refresh_summary(false);
  };

  auto reap = [&]() {
    for (;;) {
      int wait_status = 0;
      const pid_t pid = waitpid(-1, &wait_status, WNOHANG);
      if (pid <= 0) break;
      job_ended(pid, wait_status);
    }
  };

  try {
    for (;;) {
      while (!stop_launching && static_cast<int>(running.size()) < layout.slots) {
        if (next < todo.size()) {
          start_job(todo[next++]);
          continue;
        }
        if (source == nullptr) break;
        const std::optional<int> made = source->next_job();
        if (!made) break;
        ++sourced;
        for (const PlannedJob& job : plan.jobs) by_number[job.number] = &job;  // the plan grew
        start_job(*made);
      }
      if (running.empty()) break;
      siginfo_t info;
      int signal_number = 0;
      const bool pruning = source != nullptr && source->watches();
      if (asha || pruning) {
        const timespec half_second{0, 500000000};
        signal_number = sigtimedwait(&wanted, &info, &half_second);
        for (const auto& [pid, child] : running) {
          if (!pruning || asha_decided.count(child.number) || !source->prune(child.number)) continue;
          asha_decided[child.number] = AshaScheduler::Decision::kStop;
          ::kill(pid, SIGTERM);
        }
        for (const auto& [pid, child] : running) {
          if (!asha) break;
          if (asha_decided.count(child.number)) continue;
          const AshaScheduler::Decision decision = asha_feed(child.number);
          if (decision == AshaScheduler::Decision::kContinue) continue;
          asha_decided[child.number] = decision;
          // kComplete (max_t epochs reached): the job ends on its own (its test included).
          if (decision != AshaScheduler::Decision::kStop) continue;
          // Judged at a rung: the epochs it logs while it stops (the step it is in, its
          // checkpoint) may be one more.
          std::cerr << "[sweep] #" << child.number << " stopped early by ASHA at the rung of "
                    << asha_reported[child.number] << " epoch(s), " << asha->options().metric << " "
                    << metric_text(asha_last_value[child.number]) << std::endl;
          ::kill(pid, SIGTERM);
        }
      } else {
        signal_number = sigwaitinfo(&wanted, &info);
      }
      if (signal_number == SIGINT || signal_number == SIGTERM) {
        if (!interrupted_) {
          std::cerr << "[sweep] " << (signal_number == SIGINT ? "interrupted" : "terminated")
                    << ": stopping the running jobs (they write a checkpoint; a second Ctrl-C kills them); resume "
                       "with: trainer sweep resume "
                    << plan.sweep_dir << std::endl;
          for (const auto& entry : running) ::kill(entry.first, SIGTERM);
        } else {
          // The second signal quits at once, as for a single run: a job that does not stop (hung,
          // stopped, stuck in I/O) is killed; it resumes from its last checkpoint, as after kill -9.
          std::cerr << "[sweep] " << (signal_number == SIGINT ? "interrupted" : "terminated") << " again: killing the "
                    << running.size() << " running job(s); they resume from their last checkpoint" << std::endl;
          for (auto& entry : running) {
            entry.second.killed_by_sweep = true;
            ::kill(entry.first, SIGKILL);
          }
        }
        interrupted_ = true;
        stop_launching = true;
      }
      reap();
    }
  } catch (...) {
    for (const auto& entry : running) ::kill(entry.first, SIGTERM);
    for (const auto& entry : running) waitpid(entry.first, nullptr, 0);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  // An interrupted sweep writes its summary and says how to resume: a further Ctrl-C (one that
  // came as the last job stopped) would end it silently with the summary unwritten.
  if (interrupted_) {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  std::cerr << "[sweep] " << ended << " job(s) ended in " << duration_text(seconds_since(sweep_start))
            << (failed > 0 ? ", " + std::to_string(failed) + " failed" : std::string())
            << (interrupted > 0 ? ", " + std::to_string(interrupted) + " interrupted" : std::string()) << std::endl;
  refresh_summary(true);
}

}  // namespace trainer::launch
