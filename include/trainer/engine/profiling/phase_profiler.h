// The phases of fit (waiting for data, host-to-device copy, forward, backward, ...) as scopes in
// the loop, feeding two profilers:
// - trainer.profiler=simple: wall time per phase (as Lightning's SimpleProfiler), reported as a
//   table (count, mean, total, share of fit) at the end of fit, in the log and in
//   <run dir>/fit-profiler.txt. A phase nested in another (the copy inside waiting for data, a
//   checkpoint inside a mid-epoch validation) is subtracted from it, so the rows add up.
// - trainer.profiler=pytorch (trace_profiler.h): while it records a step, each phase is also a
//   user-scope range in LibTorch's profiler (and an NVTX range in CUDA builds).
// With neither on, every scope is one branch: no clock read, no range.
//
// Times are host wall clock. On CUDA, kernels run asynchronously: a phase's time is the time the
// host spent in it (launching work, or waiting where the phase synchronises), as in Lightning.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "trainer/engine/distributed/progress_beacon.h"

namespace at {
struct RecordFunction;
}

namespace trainer::engine {

enum class Phase { kData, kCopy, kForward, kBackward, kAllReduce, kOptimizer, kLogging, kValidation, kCheckpoint };
constexpr int kPhaseCount = 9;

// The phase's name in the table ("waiting for data (loader)", "forward + loss", ...).
const char* phase_name(Phase phase);
// The phase's range name in a trace ("data", "h2d_copy", "forward", ...).
const char* phase_range_name(Phase phase);

class PhaseProfiler {
 public:
  using Clock = std::chrono::steady_clock;

  PhaseProfiler();
  explicit PhaseProfiler(bool table);
  ~PhaseProfiler();
  PhaseProfiler(PhaseProfiler&&) noexcept;
  PhaseProfiler& operator=(PhaseProfiler&&) noexcept;

  // trainer.profiler=simple: phases are timed for the table.
  bool table_enabled() const { return table_; }
  // Phases become ranges in LibTorch's profiler (and NVTX): set by TraceProfiler around the
  // steps it records, never while a phase is open.
  void set_ranges(bool on);
  // Any phase scope does work (timing or ranges).
  bool on() const { return on_; }

  // Times (and/or marks) the enclosing block as `phase`.
  // Also tells the hang watchdog which phase runs (progress_beacon.h: one relaxed store each way).
  class Scope {
   public:
    Scope(PhaseProfiler& profiler, Phase phase)
        : profiler_(profiler.on_ && profiler.begin(phase) ? &profiler : nullptr),
          outer_phase_(progress_beacon().phase.exchange(static_cast<int>(phase), std::memory_order_relaxed)) {}
    ~Scope() {
      progress_beacon().phase.store(outer_phase_, std::memory_order_relaxed);
      if (profiler_ != nullptr) profiler_->end();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseProfiler* profiler_;
    int outer_phase_;
  };

  // The same as a Scope, for phases whose start and end are callbacks (the loader's copy):
  // begin() returns whether a matching end() is owed (false when off).
  bool begin(Phase phase);
  void end();

  int64_t count(Phase phase) const { return entries_[static_cast<size_t>(phase)].count; }
  double total(Phase phase) const { return entries_[static_cast<size_t>(phase)].total; }
  // A line shown in the table for a phase that never ran on the training thread, saying why
  // (e.g. the copy happens in loader workers, or there is no device to copy to).
  void set_note(Phase phase, std::string note) { entries_[static_cast<size_t>(phase)].note = std::move(note); }
  // The phase's row name in the table, in place of phase_name() (a pipeline's forward phase holds
  // its whole schedule, backwards included).
  void set_label(Phase phase, std::string label) { entries_[static_cast<size_t>(phase)].label = std::move(label); }

  // The table: one row per phase that ran (its own time, nested phases subtracted), rows for
  // the notes, then "other" (fit time not in any phase) and the total.
  std::string table(double fit_seconds) const;

 private:
  struct Entry {
    int64_t count = 0;
    double total = 0;
    std::string note;
    std::string label;  // "": phase_name()
  };
  // An open phase. Phases nest at most a few deep (data > copy, validation > checkpoint).
  struct Frame {
    Phase phase = Phase::kData;
    Clock::time_point start;
    double nested = 0;  // seconds spent in phases opened inside this one
    bool timed = false;
    bool nvtx = false;
    std::unique_ptr<at::RecordFunction> range;
  };
  static constexpr size_t kMaxDepth = 8;

  void update() { on_ = table_ || ranges_; }

  bool table_ = false;
  bool ranges_ = false;
  bool on_ = false;
  size_t depth_ = 0;
  std::array<Frame, kMaxDepth> frames_;
  std::array<Entry, kPhaseCount> entries_{};
};

}  // namespace trainer::engine
