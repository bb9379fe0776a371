// What the training thread is doing, published for the hang watchdog (hang_watchdog.h) with
// relaxed atomic stores: a counter bumped once per batch, the optimizer step and the phase (the
// phase scopes of phase_profiler.h set it). No lock, no allocation, no device sync.
#pragma once

#include <atomic>
#include <cstdint>

namespace trainer::engine {

struct ProgressBeacon {
  std::atomic<int64_t> ticks{0};  // batches trained or evaluated so far
  std::atomic<int64_t> step{0};   // optimizer steps taken
  std::atomic<int> phase{-1};     // the Phase being run, -1 between phases
};

// The process's one beacon.
inline ProgressBeacon& progress_beacon() {
  static ProgressBeacon beacon;
  return beacon;
}

inline void beacon_tick(int64_t step) {
  ProgressBeacon& beacon = progress_beacon();
  beacon.ticks.fetch_add(1, std::memory_order_relaxed);
  beacon.step.store(step, std::memory_order_relaxed);
}

}  // namespace trainer::engine
