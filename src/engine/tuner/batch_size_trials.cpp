#include "trainer/engine/tuner/batch_size_trials.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#if TRAINER_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <mutex>
#include <new>
#include <sstream>
#include <utility>

#include "trainer/engine/checkpoint/checkpoint_writer.h"
#include "trainer/engine/out_of_memory_report.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/engine/tuner/trial_memory_meter.h"
#include "trainer/util/error.h"
#include "trainer/util/fixed_text.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

std::atomic<int64_t> g_batch_size_found{0};

using Clock = std::chrono::steady_clock;

std::string fixed(double value, int digits) { return fixed_text(value, digits); }

// What a trial may take, as text for the log and the result file, and in MiB (0: no limit but
// the device's own).
std::pair<std::string, double> trial_limit(const TunerOptions& tuner, const at::Device& device) {
  if (tuner.max_memory_mb) {
    return {fixed(*tuner.max_memory_mb, 1) + " MiB per trial (tuner.max_memory_mb)", *tuner.max_memory_mb};
  }
  if (device.is_cuda()) return {"none but the GPU's memory (tuner.max_memory_mb unset)", 0.0};
  const double half_available = default_cpu_trial_limit_mb();
  if (!(half_available > 0)) {
    throw Error("tuner.max_memory_mb", "unset, and MemAvailable could not be read from /proc/meminfo",
                "Give the memory a batch-size trial may take, e.g. +tuner.max_memory_mb=2048.");
  }
  return {fixed(half_available, 0) + " MiB per trial (half of MemAvailable; tuner.max_memory_mb unset)",
          half_available};
}

// The state a trial changes, saved before the first: weights, buffers and the random generators
// (the optimizer has no state yet, so a new one is the same).
class TrialSnapshot {
 public:
  explicit TrialSnapshot(const TrialSubject& subject) : subject_(subject) {
    torch::NoGradGuard no_grad;
    for (const auto& parameter : *subject.parameters) parameters_.push_back(parameter.detach().clone());
    for (const auto& buffer : subject.model->buffers()) buffers_.push_back(buffer.detach().clone());
    generators_.push_back(at::detail::getDefaultCPUGenerator());
    if (subject.device.is_cuda()) generators_.push_back(at::globalContext().defaultGenerator(subject.device));
    for (auto& generator : generators_) {
      std::lock_guard<std::mutex> lock(generator.mutex());
      rng_states_.push_back(generator.get_state());
    }
  }

  // Puts weights, buffers, gradients, optimizer and loss scaler back (after every trial).
  void restore_model() const {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor>& parameters = *subject_.parameters;
    for (size_t i = 0; i < parameters.size(); ++i) {
      parameters[i].copy_(parameters_[i]);
      parameters[i].mutable_grad() = at::Tensor();
    }
    std::vector<at::Tensor> buffers = subject_.model->buffers();
    for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(buffers_[i]);
    subject_.fresh_optimizer();
  }

  // Puts the random generators back (once, after the search).
  void restore_generators() {
    for (size_t i = 0; i < generators_.size(); ++i) {
      std::lock_guard<std::mutex> lock(generators_[i].mutex());
      generators_[i].set_state(rng_states_[i]);
    }
  }

 private:
  const TrialSubject& subject_;
  std::vector<at::Tensor> parameters_;
  std::vector<at::Tensor> buffers_;
  std::vector<at::Generator> generators_;
  std::vector<at::Tensor> rng_states_;
};

}  // namespace

int64_t batch_size_found() { return g_batch_size_found.load(); }

void record_batch_size_found(int64_t batch_size) { g_batch_size_found.store(batch_size); }

void forget_batch_size_found() { g_batch_size_found.store(0); }

int64_t run_batch_size_search(ScaleMode mode, const TunerOptions& tuner, const std::string& run_dir,
                              const TrialSubject& subject) {
  const std::pair<std::string, double> limit = trial_limit(tuner, subject.device);
  const std::string& limit_text = limit.first;
  const double limit_mb = limit.second;
  log::info("batch size search (" + std::string(scale_mode_name(mode)) + ") from " + std::to_string(tuner.init_val) +
            ", " + std::to_string(tuner.steps_per_trial) + " step(s) per trial, limit " + limit_text);
  const auto start = Clock::now();
  TrialSnapshot snapshot(subject);

  BatchSizeSearchResult result;
  {
    TrialMemoryMeter meter(subject.device);
    int64_t largest_fit = 0;
    auto trial = [&](int64_t batch_size) {
      // SIGINT/SIGTERM: no new trial starts (one can take tens of seconds on a large GPU).
      if (const int signal = stop_signal_received(); signal != 0) {
        throw Error("signal " + std::to_string(signal),
                    "the batch-size search stopped before its trial of " + std::to_string(batch_size) +
                        (largest_fit > 0 ? "; the largest batch that fit so far was " + std::to_string(largest_fit)
                                         : std::string("; no trial had fit yet")),
                    "Run it again to finish the search, or set data.batch_size yourself.");
      }
      BatchSizeTrial outcome;
      meter.start(limit_mb);  // a CPU limit; on CUDA the device's own
      try {
        subject.run_steps(batch_size);
        outcome.memory_mb = meter.peak_mb();
        outcome.fits = limit_mb <= 0 || outcome.memory_mb <= limit_mb;
        if (!outcome.fits) outcome.failure = "above the limit";
      } catch (const c10::Error& error) {
        if (!is_out_of_memory(error)) throw;
        outcome.memory_mb = meter.peak_mb();
        const std::string what = error.what_without_backtrace();
        outcome.failure = meter.refused() ? "above the limit" : what.substr(0, what.find('\n'));
      } catch (const std::bad_alloc& error) {
        outcome.memory_mb = meter.peak_mb();
        outcome.failure = std::string("std::bad_alloc (") + error.what() + ")";
      }
      snapshot.restore_model();
      if (outcome.fits) largest_fit = std::max(largest_fit, batch_size);
      log::info("batch size trial " + std::to_string(batch_size) + ": " +
                (outcome.fits ? "fits" : "failed, " + outcome.failure) + " (" + fixed(outcome.memory_mb, 3) + " MiB)");
      return outcome;
    };
    result = search_batch_size(mode, tuner.init_val, tuner.max_trials, subject.train_samples, trial);
  }
#if TRAINER_WITH_CUDA
  if (subject.device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
  snapshot.restore_generators();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string paragraph = describe_search(result, limit_text) + " Took " + fixed(seconds, 2) + " s.";
  log::info(paragraph);
  if (result.batch_size == 0) {
    const BatchSizeTrial& first = result.trials.front();
    throw Error("tuner.init_val",
                "the first batch-size trial, a batch of " + std::to_string(first.batch_size) + ", did not fit (" +
                    fixed(first.memory_mb, 3) + " MiB: " + first.failure + "; limit " + limit_text + ")",
                "Start lower (+tuner.init_val=1), allow more memory (+tuner.max_memory_mb=...), or choose a smaller "
                "model.");
  }
  write_file_durably(run_dir + "/tune_batch_size.yaml", search_result_yaml(result, limit_text, limit_mb, seconds),
                     "batch-size search result");
  g_batch_size_found.store(result.batch_size);
  std::printf("%s\ntuned_batch_size=%lld\n", paragraph.c_str(), static_cast<long long>(result.batch_size));
  std::fflush(stdout);
  return result.batch_size;
}

}  // namespace trainer::engine
