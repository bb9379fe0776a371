// The pipeline schedules: each stage's order of forwards and backwards, played out to check that
// no order deadlocks, that the idle share is GPipe's (p-1)/(m+p-1) for both schedules, and that
// 1F1B holds at most p-s micro-batches of activations where GPipe holds m.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/distributed/pipeline_schedule.h"

#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

using trainer::engine::pipeline_actions;
using trainer::engine::pipeline_bubble_theory;
using trainer::engine::PipelineAction;
using trainer::engine::PipelineScheduleKind;
using trainer::engine::simulate_pipeline;
using Kind = PipelineAction::Kind;

CATCH_TEST_CASE("1F1B: warm-up forwards, then one forward one backward, then the drain") {
  // Stage 0 of 2 with 4 micro-batches: F0, then F1 B0, F2 B1, F3 B2, then B3.
  const std::vector<PipelineAction> stage0 = pipeline_actions(PipelineScheduleKind::kOneFOneB, 0, 2, 4);
  const std::vector<PipelineAction> expected0{{Kind::kForward, 0},  {Kind::kForward, 1},  {Kind::kBackward, 0},
                                              {Kind::kForward, 2},  {Kind::kBackward, 1}, {Kind::kForward, 3},
                                              {Kind::kBackward, 2}, {Kind::kBackward, 3}};
  CATCH_CHECK(stage0 == expected0);
  // The last stage has no warm-up: F0 B0 F1 B1 ...
  const std::vector<PipelineAction> stage1 = pipeline_actions(PipelineScheduleKind::kOneFOneB, 1, 2, 2);
  const std::vector<PipelineAction> expected1{
      {Kind::kForward, 0}, {Kind::kBackward, 0}, {Kind::kForward, 1}, {Kind::kBackward, 1}};
  CATCH_CHECK(stage1 == expected1);
}

CATCH_TEST_CASE("GPipe: every forward, then every backward, in micro-batch order") {
  const std::vector<PipelineAction> actions = pipeline_actions(PipelineScheduleKind::kGPipe, 1, 3, 3);
  const std::vector<PipelineAction> expected{{Kind::kForward, 0},  {Kind::kForward, 1},  {Kind::kForward, 2},
                                             {Kind::kBackward, 0}, {Kind::kBackward, 1}, {Kind::kBackward, 2}};
  CATCH_CHECK(actions == expected);
}

CATCH_TEST_CASE(
    "every schedule runs each micro-batch's forward and backward once, never deadlocks, and idles "
    "(p-1)/(m+p-1)") {
  for (const PipelineScheduleKind kind : {PipelineScheduleKind::kGPipe, PipelineScheduleKind::kOneFOneB}) {
    for (int stages = 2; stages <= 5; ++stages) {
      for (const int m : {1, 2, 3, 4, 8, 13}) {
        CATCH_CAPTURE(static_cast<int>(kind), stages, m);
        for (int s = 0; s < stages; ++s) {
          const std::vector<PipelineAction> actions = pipeline_actions(kind, s, stages, m);
          CATCH_REQUIRE(actions.size() == static_cast<size_t>(2 * m));
          std::vector<int> forwards(static_cast<size_t>(m)), backwards(static_cast<size_t>(m));
          for (const PipelineAction& a : actions) {
            const auto i = static_cast<size_t>(a.microbatch);
            if (a.kind == Kind::kForward) {
              ++forwards[i];
            } else {
              CATCH_CHECK(forwards[i] == 1);  // a backward follows its own forward
              ++backwards[i];
            }
          }
          for (int i = 0; i < m; ++i) {
            CATCH_CHECK(forwards[static_cast<size_t>(i)] == 1);
            CATCH_CHECK(backwards[static_cast<size_t>(i)] == 1);
          }
        }
        const auto run = simulate_pipeline(kind, stages, m, 1.0, 2.0);
        // Equal stage times: the makespan is (m + p - 1) forward-backward pairs.
        CATCH_CHECK(run.makespan == Catch::Detail::Approx(3.0 * (m + stages - 1)));
        for (int s = 0; s < stages; ++s) {
          CATCH_CHECK(run.idle_share(s) == Catch::Detail::Approx(pipeline_bubble_theory(stages, m)));
          const int held = run.peak_in_flight[static_cast<size_t>(s)];
          if (kind == PipelineScheduleKind::kGPipe) {
            CATCH_CHECK(held == m);
          } else {
            CATCH_CHECK(held == std::min(m, stages - s));
          }
        }
      }
    }
  }
}

CATCH_TEST_CASE("the theory: one stage never idles; more micro-batches shrink the bubble") {
  CATCH_CHECK(pipeline_bubble_theory(1, 4) == 0.0);
  CATCH_CHECK(pipeline_bubble_theory(2, 1) == Catch::Detail::Approx(0.5));
  CATCH_CHECK(pipeline_bubble_theory(2, 8) == Catch::Detail::Approx(1.0 / 9.0));
  CATCH_CHECK(pipeline_bubble_theory(4, 4) == Catch::Detail::Approx(3.0 / 7.0));
}

CATCH_TEST_CASE("unequal stages: the slower stage sets the pace and the faster one waits for it") {
  // GPipe, 4 micro-batches; stage 0's forward takes 2, stage 1's 1, every backward 2. Stage 0's
  // forwards end at 2, 4, 6, 8; stage 1 follows each (ends 3, 5, 7, 9), then runs its backwards
  // (11, 13, 15, 17); stage 0's backwards wait for each of them (13, 15, 17, 19).
  const trainer::engine::PipelineSimulation run =
      simulate_pipeline(PipelineScheduleKind::kGPipe, 4, std::vector<double>{2.0, 1.0}, std::vector<double>{2.0, 2.0});
  CATCH_CHECK(run.makespan == Catch::Detail::Approx(19.0));
  CATCH_CHECK(run.idle_share(0) == Catch::Detail::Approx(3.0 / 19.0));
  CATCH_CHECK(run.idle_share(1) == Catch::Detail::Approx(7.0 / 19.0));
  // Equal costs given per stage are the equal-stage theory.
  const std::vector<double> forwards{1.0, 1.0};
  const std::vector<double> backwards{2.0, 2.0};
  const trainer::engine::PipelineSimulation even =
      simulate_pipeline(PipelineScheduleKind::kOneFOneB, 8, forwards, backwards);
  CATCH_CHECK(even.idle_share(0) == Catch::Detail::Approx(pipeline_bubble_theory(2, 8)));
  const std::vector<double> one_stage{1.0};
  const std::vector<double> two_stages{1.0, 2.0};
  CATCH_CHECK_THROWS_AS(simulate_pipeline(PipelineScheduleKind::kGPipe, 4, one_stage, two_stages), std::logic_error);
}
