#include "trainer/engine/profiling/trace_profiler.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include "trainer/engine/checkpoint/checkpoint_writer.h"
#include "trainer/engine/torch_compat.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

#if defined(TRAINER_WITH_CUDA)
#include <nvtx3/nvToolsExt.h>
#endif

namespace trainer::engine {
namespace {

namespace profiler = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

impl::ProfilerConfig profiler_config() { return impl::ProfilerConfig(impl::ProfilerState::KINETO); }

std::set<impl::ActivityType> activities(bool cuda) {
  std::set<impl::ActivityType> wanted{impl::ActivityType::CPU};
  if (cuda) wanted.insert(impl::ActivityType::CUDA);
  return wanted;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Nanoseconds as the trace's microseconds with three decimals, exactly (no floating point).
std::string microseconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return text;
}

// The Chrome trace format's "X" (complete) events from the profiler's events, for a LibTorch
// without Kineto (whose ProfilerResult::save refuses). Our ranges are user-scope events, in
// Kineto's category for them.
std::string chrome_trace_json(const profiler::ProfilerResult& result) {
  std::ostringstream out;
  const long pid = static_cast<long>(::getpid());
  out << "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid
      << ",\"tid\":0,\"args\":{\"name\":\"trainer\"}}";
  const auto user_scope = static_cast<uint8_t>(at::RecordScope::USER_SCOPE);
  for (const auto& event : result.events()) {
    const char* category = event.deviceType() != c10::DeviceType::CPU ? "kernel"
                           : event.scope() == user_scope              ? "user_annotation"
                                                                      : "cpu_op";
    out << ",\n{\"ph\":\"X\",\"cat\":\"" << category << "\",\"name\":" << json_string(event.name())
        << ",\"pid\":" << pid << ",\"tid\":" << event.startThreadId()
        << ",\"ts\":" << microseconds(compat::profiler_event_start_ns(event))
        << ",\"dur\":" << microseconds(compat::profiler_event_duration_ns(event)) << "}";
  }
  out << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"writer\":\"trainer (LibTorch " << compat::torch_version_text()
      << " without Kineto)\"}}\n";
  return out.str();
}

}  // namespace

TraceProfiler::TraceProfiler() = default;
TraceProfiler::~TraceProfiler() { abandon(); }

void TraceProfiler::start(const TraceSchedule& schedule, std::string path, bool cuda, PhaseProfiler& phases) {
  schedule_ = schedule;
  path_ = std::move(path);
  cuda_ = cuda;
  phases_ = &phases;
  enabled_ = true;
  next_step_ = 0;
}

TraceProfiler::Step::~Step() {
  if (tracer_ == nullptr) return;
  if (std::uncaught_exceptions() > 0) {
    // An error is ending fit: stop the profiler, write nothing, let the error through.
    range_.reset();
#if defined(TRAINER_WITH_CUDA)
    if (recorded_) nvtxRangePop();  // the step's NVTX range, as end_step would
#endif
    if (recorded_) tracer_->abandon();
    return;
  }
  try {
    tracer_->end_step(*this);
  } catch (const std::exception& e) {
    log::warning(std::string("profiler (pytorch): no trace written: ") + e.what());
    tracer_->abandon();
  }
}

void TraceProfiler::begin_step(Step& step) {
  step.number_ = next_step_++;
  const TraceAction action = schedule_.action_at(step.number_);
  if (action == TraceAction::kNone) return;
  if (!prepared_) {
    // As torch.profiler's warmup: the profiler is set up a step ahead so its start-up cost
    // stays out of the recorded steps.
    profiler::prepareProfiler(profiler_config(), activities(cuda_));
    prepared_ = true;
  }
  if (action == TraceAction::kWarmup) return;
  if (!recording_) {
    profiler::enableProfiler(profiler_config(), activities(cuda_));
    recording_ = true;
    first_recorded_ = step.number_;
    phases_->set_ranges(true);
  }
  step.recorded_ = true;
  const std::string name = "train_step#" + std::to_string(step.number_);
  step.range_ = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (step.range_->isActive()) step.range_->before(name);
#if defined(TRAINER_WITH_CUDA)
  nvtxRangePushA(name.c_str());
#endif
}

void TraceProfiler::end_step(Step& step) {
  if (!step.recorded_) return;
  step.range_.reset();  // ends the step's range before the profiler stops
#if defined(TRAINER_WITH_CUDA)
  nvtxRangePop();
#endif
  last_recorded_ = step.number_;
  if (step.number_ == schedule_.last_recorded()) stop_and_write("");
}

void TraceProfiler::stop_and_write(const std::string& why) {
  phases_->set_ranges(false);
  recording_ = false;
  enabled_ = false;
  std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
  std::string writer = "Kineto";
  std::error_code error;
  try {
    const std::string partial = path_ + ".partial";  // Kineto writes to a path: renamed when whole
    result->save(partial);
    std::filesystem::rename(partial, path_, error);
    if (error) throw Error(path_, "could not move the trace into place: " + error.message());
  } catch (const c10::Error&) {
    // No Kineto in this LibTorch (Debian's 1.13): "Saving a trace requires ... Kineto".
    write_file_durably(path_, chrome_trace_json(*result), "trace");
    writer = "trainer, no Kineto in this LibTorch";
  }
  const double megabytes = static_cast<double>(std::filesystem::file_size(path_, error)) / (1024.0 * 1024.0);
  char size[32];
  std::snprintf(size, sizeof size, "%.2f MB", error ? 0.0 : megabytes);
  log::info("profiler (pytorch): training steps " + std::to_string(first_recorded_) + "-" +
            std::to_string(last_recorded_) + why + " traced to " + path_ + " (" +
            std::to_string(result->events().size()) + " LibTorch events, " + size + ", written by " + writer +
            "; open it in ui.perfetto.dev or chrome://tracing)");
}

void TraceProfiler::finish() {
  if (recording_) {
    stop_and_write(" (fit ended inside the window, which was to end at step " +
                   std::to_string(schedule_.last_recorded()) + ")");
    return;
  }
  if (!enabled_) return;
  enabled_ = false;
  if (prepared_) {
    // Warmed up but never recording: close the session so LibTorch's profiler state is clean.
    profiler::enableProfiler(profiler_config(), activities(cuda_));
    profiler::disableProfiler();
  }
  log::warning("profiler (pytorch): fit ended after " + std::to_string(next_step_) +
               " training step(s), before the traced window (steps " + std::to_string(schedule_.first_recorded()) +
               "-" + std::to_string(schedule_.last_recorded()) +
               "); no trace written. Lower trainer.profiler_schedule.skip_first/wait/warmup or run "
               "more steps.");
}

void TraceProfiler::abandon() noexcept {
  if (!recording_) return;
  recording_ = false;
  enabled_ = false;
  if (phases_ != nullptr) phases_->set_ranges(false);
  try {
    profiler::disableProfiler();
  } catch (...) {
    // Nothing to do: the process is ending with another error.
  }
}

}  // namespace trainer::engine
