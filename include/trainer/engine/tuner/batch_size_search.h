// Lightning's batch-size search (Tuner.scale_batch_size / BatchSizeFinder) as a pure function of a
// trial: `power` doubles from init_val until a trial fails, max_trials ran or the batch reached the
// training set; `binsearch` doubles the same way and then bisects between the last batch that fit
// and the first that did not. What a trial does (real training steps, memory measured) lives in
// the trainer; this file owns the options, the order of trials and the result file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/config_view.h"

namespace trainer::engine {

enum class ScaleMode { kPower, kBinsearch };

const char* scale_mode_name(ScaleMode mode);

// The `tuner` section plus trainer.auto_scale_batch_size, read once (every key has a default, so
// the shipped configs carry none of them).
struct TunerOptions {
  // trainer fit: search first (trainer.auto_scale_batch_size=power|binsearch; true = power as in
  // Lightning 1.x); null/false: off.
  std::optional<ScaleMode> auto_scale;
  ScaleMode mode = ScaleMode::kPower;  // tuner.mode, for `trainer tune batch_size`
  int64_t init_val = 2;                // tuner.init_val
  int64_t max_trials = 25;             // tuner.max_trials
  int64_t steps_per_trial = 3;         // tuner.steps_per_trial
  // tuner.max_memory_mb: the most memory a trial may take above what is held before it (weights,
  // data set); unset: on the CPU half of MemAvailable when the search starts, on CUDA only the
  // device's own limit (an out-of-memory error).
  std::optional<double> max_memory_mb;

  // Throws trainer::Error naming the key for an unknown mode or a value out of range.
  static TunerOptions from_config(const config::ConfigView& root);
};

struct BatchSizeTrial {
  int64_t batch_size = 0;
  bool fits = false;
  double memory_mb = 0;  // what the trial took above its start (allocator peak); 0 if unmeasured
  std::string failure;   // why it did not fit ("" when it fit)
};

struct BatchSizeSearchResult {
  ScaleMode mode = ScaleMode::kPower;
  int64_t batch_size = 0;  // the largest batch that fit; 0 when not even init_val fit
  std::vector<BatchSizeTrial> trials;
  std::string stopped_because;  // "a trial failed", "max_trials reached", ...
};

// Runs the search. `trial(b)` runs b and reports whether it fit; `max_batch` (the training set
// size) caps every candidate. Never throws itself; `trial` may.
BatchSizeSearchResult search_batch_size(ScaleMode mode, int64_t init_val, int64_t max_trials, int64_t max_batch,
                                        const std::function<BatchSizeTrial(int64_t)>& trial);

// One paragraph: the batch found, the mode, each trial with its outcome and memory.
std::string describe_search(const BatchSizeSearchResult& result, const std::string& limit_text);

// The result file (<run dir>/tune_batch_size.yaml): mode, result, limit (MiB, 0 = none, and
// where it came from), why the search stopped, its time, the trials.
std::string search_result_yaml(const BatchSizeSearchResult& result, const std::string& limit_text, double limit_mb,
                               double seconds);

}  // namespace trainer::engine
