// Data-parallel gradient averaging without c10d's Reducer (shared/notes/libtorch.md): parameters
// are grouped in buckets of about bucket_cap_mb, in reverse order (the order backward produces
// their gradients). A post-hook on each parameter's gradient accumulator counts the gradients of
// its bucket; the moment a bucket is complete its gradients are copied into one flat tensor and
// an asynchronous all-reduce starts, overlapping with the rest of backward. finish() waits,
// divides by the world size and copies the averages back. Accumulation steps (sync=false)
// all-reduce nothing. The first bucket carries two extra elements: whether any rank was asked to
// stop (SIGINT/SIGTERM) and whether any rank ran out of trainer.max_time, so every rank stops
// after the same step.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "trainer/engine/distributed/process_group.h"

namespace trainer::engine {

class GradReducer {
 public:
  struct LocalFlags {
    bool stop = false;         // this process got SIGINT/SIGTERM
    bool out_of_time = false;  // this process's clock passed max_time
  };
  // `local_flags` is read when the first bucket starts.
  GradReducer(ProcessGroup& group, const std::vector<at::Tensor>& parameters, double bucket_cap_mb,
              std::function<LocalFlags()> local_flags);
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // Before backward: whether this backward ends an optimizer step (all-reduce) or accumulates.
  void prepare(bool sync);
  // After a synchronising backward: starts buckets whose gradients never came (unused
  // parameters: zeros), waits for every all-reduce, and leaves the averaged gradients in p.grad().
  void finish();
  // Whether any rank asked to stop, as of the last finish(). Reads the flag on the host: free on
  // CPU, a device sync on CUDA (call it only where the loop syncs anyway).
  bool stop_requested() const;
  // Whether any rank's clock passed max_time, as of the last finish() (same cost as above).
  bool out_of_time() const;

  size_t bucket_count() const;
  // Timing of the all-reduces so far: total seconds in flight, the part of it that overlapped
  // backward, and the time finish() spent waiting (not hidden).
  struct Timing {
    int64_t steps = 0;
    double comm_seconds = 0;
    double hidden_seconds = 0;
    double wait_seconds = 0;
    double backward_seconds = 0;
  };
  Timing timing() const;
  std::string describe_timing() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Copies rank 0's parameters and buffers to every rank.
void broadcast_module_state(ProcessGroup& group, const std::vector<at::Tensor>& parameters,
                            const std::vector<at::Tensor>& buffers);

}  // namespace trainer::engine
