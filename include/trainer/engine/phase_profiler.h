// trainer.profiler=simple: wall time spent in each phase of fit (as Lightning's SimpleProfiler),
// reported as a table (count, mean, total, share of fit) at the end of fit, in the log and in
// <run dir>/fit-profiler.txt. Disabled, every scope is one branch and no clock read.
//
// Times are host wall clock. On CUDA, kernels run asynchronously: a phase's time is the time the
// host spent in it (launching work, or waiting where the phase synchronises), as in Lightning.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace trainer::engine {

enum class Phase { kData, kForward, kBackward, kAllReduce, kOptimizer, kLogging, kValidation, kCheckpoint };
constexpr int kPhaseCount = 8;

// The phase's name in the table ("waiting for data", "forward", ...).
const char* phase_name(Phase phase);

class PhaseProfiler {
 public:
  using Clock = std::chrono::steady_clock;

  explicit PhaseProfiler(bool enabled = false) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  // Times the enclosing block as `phase`.
  class Scope {
   public:
    Scope(PhaseProfiler& profiler, Phase phase) : profiler_(profiler.enabled_ ? &profiler : nullptr), phase_(phase) {
      if (profiler_ != nullptr) start_ = Clock::now();
    }
    ~Scope() {
      if (profiler_ != nullptr) profiler_->add(phase_, std::chrono::duration<double>(Clock::now() - start_).count());
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseProfiler* profiler_;
    Phase phase_;
    Clock::time_point start_;
  };

  void add(Phase phase, double seconds) {
    auto& entry = entries_[static_cast<size_t>(phase)];
    ++entry.count;
    entry.total += seconds;
  }
  int64_t count(Phase phase) const { return entries_[static_cast<size_t>(phase)].count; }
  double total(Phase phase) const { return entries_[static_cast<size_t>(phase)].total; }

  // The table: one row per phase that ran, then "other" (fit time not in any phase) and the total.
  std::string table(double fit_seconds) const;

 private:
  struct Entry {
    int64_t count = 0;
    double total = 0;
  };
  bool enabled_;
  std::array<Entry, kPhaseCount> entries_{};
};

}  // namespace trainer::engine
