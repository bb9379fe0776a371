// The batch-size search on the real model (Lightning's scale_batch_size): each trial runs a few
// real training steps at one batch size, its memory measured against a limit (trial_memory_meter.h),
// and is undone afterwards (weights, buffers, gradients, optimizer, loss scaler and every random
// generator), so the fit that follows is the fit a fixed batch of the result would run. The order
// of trials and the result file are batch_size_search.h's; SIGINT/SIGTERM start no new trial.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "trainer/engine/tuner/batch_size_search.h"
#include "trainer/models/model.h"

namespace trainer::engine {

// What the search needs from the trainer.
struct TrialSubject {
  models::Model* model = nullptr;
  std::vector<at::Tensor>* parameters = nullptr;
  at::Device device = at::kCPU;
  int64_t train_samples = 0;               // caps every candidate batch
  std::function<void(int64_t)> run_steps;  // tuner.steps_per_trial training steps at this batch
  std::function<void()> fresh_optimizer;   // a new optimizer and loss scaler (no state yet)
};

// Runs the search, logs each trial and one closing paragraph, writes <run_dir>/tune_batch_size.yaml
// and prints the paragraph and `tuned_batch_size=N` on stdout. Returns the batch found. Throws
// trainer::Error when not even tuner.init_val fits or a stop signal arrived.
int64_t run_batch_size_search(ScaleMode mode, const TunerOptions& tuner, const std::string& run_dir,
                              const TrialSubject& subject);

// The batch a search found for this job, or that a resumed fit took over from its first search
// (record_batch_size_found); 0 when none since forget_batch_size_found(). The engine's entry point
// reports it in TrainerJobResult::tuned_batch_size.
int64_t batch_size_found();
void record_batch_size_found(int64_t batch_size);
void forget_batch_size_found();

}  // namespace trainer::engine
