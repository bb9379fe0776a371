#include "trainer/engine/distributed/hang_watchdog.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "trainer/engine/distributed/progress_beacon.h"
#include "trainer/engine/distributed/watcher_exit.h"
#include "trainer/engine/profiling/phase_profiler.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

std::string key_of(int rank) { return "heartbeat/" + std::to_string(rank); }

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// "<heartbeat count> <pid> <batches> <step> <phase>": the count changes every beat, so a frozen
// value means a frozen process.
std::string heartbeat_text(int64_t beat) {
  const ProgressBeacon& beacon = progress_beacon();
  return std::to_string(beat) + " " + std::to_string(::getpid()) + " " +
         std::to_string(beacon.ticks.load(std::memory_order_relaxed)) + " " +
         std::to_string(beacon.step.load(std::memory_order_relaxed)) + " " +
         std::to_string(beacon.phase.load(std::memory_order_relaxed));
}

std::string state_of(const std::string& heartbeat) {
  std::istringstream in(heartbeat);
  long long beat = 0, pid = 0, ticks = 0, step = 0;
  int phase = -1;
  if (!(in >> beat >> pid >> ticks >> step >> phase)) return "no heartbeat yet";
  const std::string where =
      phase >= 0 && phase < kPhaseCount ? phase_name(static_cast<Phase>(phase)) : "between phases";
  return "pid " + std::to_string(pid) + ", step " + std::to_string(step) + ", " + where;
}

}  // namespace

HangWatchdog::HangWatchdog(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size, double timeout_seconds,
                           OutputOf output_of)
    : store_(std::move(store)),
      rank_(rank),
      world_size_(world_size),
      timeout_seconds_(timeout_seconds),
      output_of_(std::move(output_of)) {
  thread_ = std::thread([this] { run(); });
}

HangWatchdog::~HangWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string HangWatchdog::describe(int reporter, const std::vector<std::string>& heartbeats,
                                   const std::vector<double>& silent_seconds, double own_stall_seconds,
                                   double timeout_seconds) {
  char limit[32];
  std::snprintf(limit, sizeof(limit), "%.0f s", timeout_seconds);
  std::string silent;
  for (size_t r = 0; r < silent_seconds.size(); ++r) {
    if (silent_seconds[r] >= timeout_seconds)
      silent += (silent.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r);
  }
  std::string text = "distributed job stalled (rank " + std::to_string(reporter) + " reports): ";
  if (!silent.empty()) {
    text +=
        silent + " sent no heartbeat for " + limit + " (stopped with SIGSTOP, frozen, or its machine unreachable), ";
  } else {
    char own[32];
    std::snprintf(own, sizeof(own), "%.0f s", own_stall_seconds);
    text += "no rank has made progress for " + std::string(own) + " (a deadlock or a collective that never ends), ";
  }
  text += "last seen:";
  for (size_t r = 0; r < heartbeats.size(); ++r) {
    text += std::string(r == 0 ? " " : "; ") + "rank " + std::to_string(r) + " " + state_of(heartbeats[r]);
  }
  return text;
}

void HangWatchdog::run() {
  const double period = std::clamp(timeout_seconds_ / 10.0, 0.1, 10.0);
  std::vector<std::string> last(static_cast<size_t>(world_size_));
  std::vector<Clock::time_point> changed(static_cast<size_t>(world_size_), Clock::now());
  int64_t own_ticks = -1;
  Clock::time_point own_changed = Clock::now();
  int64_t beat = 0;
  try {
    for (bool first = true;; first = false) {
      if (!first) {  // the first heartbeat goes out at once
        std::unique_lock<std::mutex> lock(mutex_);
        if (wake_.wait_for(lock, std::chrono::duration<double>(period), [this] { return quit_; })) return;
      }
      const Clock::time_point now = Clock::now();
      const std::string mine = heartbeat_text(++beat);
      store_->set(key_of(rank_), std::vector<uint8_t>(mine.begin(), mine.end()));
      last[static_cast<size_t>(rank_)] = mine;
      changed[static_cast<size_t>(rank_)] = now;
      const int64_t ticks = progress_beacon().ticks.load(std::memory_order_relaxed);
      if (ticks != own_ticks) {
        own_ticks = ticks;
        own_changed = now;
      }
      std::vector<double> silent(static_cast<size_t>(world_size_), 0.0);
      bool someone_silent = false;
      for (int r = 0; r < world_size_; ++r) {
        if (r == rank_) continue;
        const size_t i = static_cast<size_t>(r);
        if (store_->check({key_of(r)})) {
          const std::vector<uint8_t> value = store_->get(key_of(r));
          std::string text(value.begin(), value.end());
          if (text != last[i]) {
            last[i] = std::move(text);
            changed[i] = now;
          }
        }
        silent[i] = seconds_between(changed[i], now);
        someone_silent = someone_silent || silent[i] >= timeout_seconds_;
      }
      const double own_stall = seconds_between(own_changed, now);
      if (!someone_silent && own_stall < timeout_seconds_) continue;
      const std::string message = describe(rank_, last, silent, own_stall, timeout_seconds_);
      log::error(message);
      // The silent ranks' output (all other ranks' when none is silent: then all are stuck).
      std::string outputs;
      for (int r = 0; r < world_size_ && output_of_; ++r) {
        if (r == rank_ || (someone_silent && silent[static_cast<size_t>(r)] < timeout_seconds_)) continue;
        const std::string output = output_of_(r);
        if (!output.empty()) outputs += "\n" + output;
      }
      // The training thread is stuck in a collective: nothing else can end it.
      exit_from_watcher(message +
                        ". Fix: see what that rank was doing (a debugger, py-spy dump, or its log); "
                        "trainer.hang_timeout sets how long a silent or stuck rank is waited for." +
                        outputs);
    }
  } catch (const std::exception& error) {
    // The store went away (the job is ending, or rank 0 died): the launcher reports that.
    log::debug(std::string("hang watchdog stopped: ") + error.what());
  }
}

}  // namespace trainer::engine
