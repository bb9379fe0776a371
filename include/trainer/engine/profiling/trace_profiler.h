// trainer.profiler=pytorch: LibTorch's profiler over a window of training steps chosen by a
// TraceSchedule (trainer.profiler_schedule.{skip_first,wait,warmup,active}), written as a
// Chrome/Perfetto trace (<run dir>/fit-trace.json) holding LibTorch's operators and our own
// ranges: one "train_step#N" per recorded step, with the loop's phases (data, forward,
// backward, optimizer, ...) nested inside (PhaseProfiler's ranges). CUDA builds also push
// the same ranges to NVTX.
//
// Where LibTorch has Kineto (the 2.x wheel) the trace is Kineto's own (ProfilerResult::save);
// where it has not (Debian's 1.13) the same events are written as Chrome trace JSON here.
// Off, a step costs one branch; after the window the profiler is off again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trainer/engine/profiling/phase_profiler.h"
#include "trainer/engine/profiling/trace_schedule.h"

namespace at {
struct RecordFunction;
}

namespace trainer::engine {

class TraceProfiler {
 public:
  TraceProfiler();
  ~TraceProfiler();  // stops a session an exception left running
  TraceProfiler(const TraceProfiler&) = delete;
  TraceProfiler& operator=(const TraceProfiler&) = delete;

  // Turns the profiler on for the steps `schedule` picks; `phases` gets its ranges switched
  // on while a step is recorded; `cuda`: record CUDA kernels as well.
  void start(const TraceSchedule& schedule, std::string path, bool cuda, PhaseProfiler& phases);
  bool enabled() const { return enabled_; }

  // One training step (one batch): declared first in the loop body, so the step's range
  // covers everything the step does.
  class Step {
   public:
    explicit Step(TraceProfiler& tracer) : tracer_(tracer.enabled_ ? &tracer : nullptr) {
      if (tracer_ != nullptr) tracer_->begin_step(*this);
    }
    ~Step();
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

   private:
    friend class TraceProfiler;
    TraceProfiler* tracer_;
    int64_t number_ = -1;
    bool recorded_ = false;
    std::unique_ptr<at::RecordFunction> range_;
  };

  // At the end of fit: writes a window that fit ended inside, or says the window was never
  // reached.
  void finish();

 private:
  void begin_step(Step& step);
  void end_step(Step& step);
  void stop_and_write(const std::string& why);
  void abandon() noexcept;

  bool enabled_ = false;  // steps still to come may be recorded
  bool prepared_ = false;
  bool recording_ = false;
  bool cuda_ = false;
  TraceSchedule schedule_;
  std::string path_;
  PhaseProfiler* phases_ = nullptr;
  int64_t next_step_ = 0;
  int64_t first_recorded_ = -1;
  int64_t last_recorded_ = -1;
};

}  // namespace trainer::engine
