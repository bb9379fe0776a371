// The phase scopes behind trainer.profiler=simple/pytorch: counts for the table (nested phases
// counted once each), the note for a phase that never ran, nothing at all when off, and the
// ranges they put into LibTorch's profiler around the operators they cover; and the trace
// schedule's torch.profiler semantics.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/profiling/phase_profiler.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/csrc/autograd/profiler_kineto.h>

#include "trainer/engine/profiling/trace_schedule.h"
#include "trainer/engine/torch_compat.h"

using trainer::engine::Phase;
using trainer::engine::PhaseProfiler;
using trainer::engine::TraceAction;
using trainer::engine::TraceSchedule;

CATCH_TEST_CASE("trace schedule: skip_first, wait, warmup, then active steps, then nothing") {
  TraceSchedule s;  // defaults: wait 1, warmup 1, active 3
  CATCH_CHECK(s.action_at(0) == TraceAction::kNone);
  CATCH_CHECK(s.action_at(1) == TraceAction::kWarmup);
  CATCH_CHECK(s.action_at(2) == TraceAction::kRecord);
  CATCH_CHECK(s.action_at(4) == TraceAction::kRecord);
  CATCH_CHECK(s.action_at(5) == TraceAction::kNone);
  CATCH_CHECK(s.first_recorded() == 2);
  CATCH_CHECK(s.last_recorded() == 4);

  TraceSchedule t{/*skip_first=*/3, /*wait=*/2, /*warmup=*/0, /*active=*/1};
  std::string actions;  // n: none, w: warmup, r: record
  for (int64_t step = 0; step < 8; ++step) {
    const TraceAction a = t.action_at(step);
    actions += a == TraceAction::kNone ? 'n' : a == TraceAction::kWarmup ? 'w' : 'r';
  }
  CATCH_CHECK(actions == "nnnnnrnn");
  CATCH_CHECK(t.first_recorded() == 5);
  CATCH_CHECK(t.last_recorded() == 5);
}

CATCH_TEST_CASE(
    "phase profiler: off counts nothing; on counts nested phases once each, notes a phase that "
    "never ran") {
  PhaseProfiler off;
  CATCH_CHECK_FALSE(off.on());
  {
    PhaseProfiler::Scope data(off, Phase::kData);
    CATCH_CHECK_FALSE(off.begin(Phase::kCopy));
  }
  CATCH_CHECK(off.count(Phase::kData) == 0);

  PhaseProfiler table(/*table=*/true);
  for (int step = 0; step < 3; ++step) {
    PhaseProfiler::Scope data(table, Phase::kData);
    CATCH_REQUIRE(table.begin(Phase::kCopy));
    table.end();
  }
  {
    PhaseProfiler::Scope validation(table, Phase::kValidation);
    PhaseProfiler::Scope checkpoint(table, Phase::kCheckpoint);
  }
  CATCH_CHECK(table.count(Phase::kData) == 3);
  CATCH_CHECK(table.count(Phase::kCopy) == 3);
  CATCH_CHECK(table.count(Phase::kValidation) == 1);
  CATCH_CHECK(table.count(Phase::kCheckpoint) == 1);
  CATCH_CHECK(table.count(Phase::kForward) == 0);
  table.set_note(Phase::kForward, "not in this test");
  const std::string text = table.table(1.0);
  CATCH_CHECK(text.find("| host-to-device copy | 3 |") != std::string::npos);
  CATCH_CHECK(text.find("| forward + loss: not in this test | | | | |") != std::string::npos);
  CATCH_CHECK(text.find("| backward") == std::string::npos);
  // A label names the row in place of the phase's name (a pipeline's schedule).
  table.set_label(Phase::kCopy, "copy, relabelled");
  CATCH_CHECK(table.table(1.0).find("| copy, relabelled | 3 |") != std::string::npos);
}

CATCH_TEST_CASE("phase profiler: with ranges on, phases are user-scope ranges around their operators") {
  namespace profiler = torch::autograd::profiler;
  namespace impl = torch::profiler::impl;
  PhaseProfiler phases;  // no table: ranges only
  const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
  const std::set<impl::ActivityType> cpu{impl::ActivityType::CPU};
  profiler::prepareProfiler(config, cpu);
  profiler::enableProfiler(config, cpu);
  phases.set_ranges(true);
  const at::Tensor a = at::ones({8, 8});
  {
    PhaseProfiler::Scope forward(phases, Phase::kForward);
    const at::Tensor product = at::mm(a, a);
  }
  phases.set_ranges(false);
  // Clear of the forward range by far more than 1.13's whole-microsecond timestamps can blur: an
  // 8x8 product takes under a microsecond, so back to back it could fall inside the tolerance.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  {
    PhaseProfiler::Scope backward(phases, Phase::kBackward);  // off again: no range
    const at::Tensor product = at::mm(a, a);
  }
  auto result = profiler::disableProfiler();
  CATCH_CHECK(phases.count(Phase::kForward) == 0);  // ranges do not time for the table

  int forward_ranges = 0;
  int backward_ranges = 0;
  uint64_t forward_start = 0;
  uint64_t forward_end = 0;
  for (const auto& e : result->events()) {
    if (e.name() == "forward") {
      ++forward_ranges;
      forward_start = trainer::engine::compat::profiler_event_start_ns(e);
      forward_end = forward_start + trainer::engine::compat::profiler_event_duration_ns(e);
      CATCH_CHECK(e.scope() == static_cast<uint8_t>(at::RecordScope::USER_SCOPE));
    }
    if (e.name() == "backward") ++backward_ranges;
  }
  CATCH_REQUIRE(forward_ranges == 1);
  CATCH_CHECK(backward_ranges == 0);
  int mm_inside = 0;
  int mm_outside = 0;
  for (const auto& e : result->events()) {
    if (e.name() != "aten::mm") continue;
    const uint64_t start = trainer::engine::compat::profiler_event_start_ns(e);
    const uint64_t end = start + trainer::engine::compat::profiler_event_duration_ns(e);
    // 1.13 reports whole microseconds: allow one of rounding at the end.
    (start >= forward_start && end <= forward_end + 1000 ? mm_inside : mm_outside) += 1;
  }
  CATCH_CHECK(mm_inside == 1);
  CATCH_CHECK(mm_outside == 1);
}
