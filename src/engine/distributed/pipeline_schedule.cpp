#include "trainer/engine/distributed/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace trainer::engine {

PipelineScheduleKind pipeline_schedule_kind(const std::string& name) {
  return name == "gpipe" ? PipelineScheduleKind::kGPipe : PipelineScheduleKind::kOneFOneB;
}

const char* pipeline_schedule_name(PipelineScheduleKind kind) {
  return kind == PipelineScheduleKind::kGPipe ? "gpipe" : "1f1b";
}

std::vector<PipelineAction> pipeline_actions(PipelineScheduleKind kind, int stage, int stages, int microbatches) {
  using Kind = PipelineAction::Kind;
  std::vector<PipelineAction> actions;
  actions.reserve(2 * static_cast<size_t>(microbatches));
  if (kind == PipelineScheduleKind::kGPipe) {
    for (int i = 0; i < microbatches; ++i) actions.push_back({Kind::kForward, i});
    for (int i = 0; i < microbatches; ++i) actions.push_back({Kind::kBackward, i});
    return actions;
  }
  const int warmup = std::min(stages - 1 - stage, microbatches);
  int forward = 0;
  int backward = 0;
  for (; forward < warmup; ++forward) actions.push_back({Kind::kForward, forward});
  while (forward < microbatches) {
    actions.push_back({Kind::kForward, forward++});
    actions.push_back({Kind::kBackward, backward++});
  }
  while (backward < microbatches) actions.push_back({Kind::kBackward, backward++});
  return actions;
}

double pipeline_bubble_theory(int stages, int microbatches) {
  return static_cast<double>(stages - 1) / static_cast<double>(microbatches + stages - 1);
}

PipelineSimulation simulate_pipeline(PipelineScheduleKind kind, int stages, int microbatches, double forward_cost,
                                     double backward_cost) {
  return simulate_pipeline(kind, microbatches, std::vector<double>(static_cast<size_t>(stages), forward_cost),
                           std::vector<double>(static_cast<size_t>(stages), backward_cost));
}

PipelineSimulation simulate_pipeline(PipelineScheduleKind kind, int microbatches,
                                     const std::vector<double>& forward_costs,
                                     const std::vector<double>& backward_costs) {
  using Kind = PipelineAction::Kind;
  if (forward_costs.size() != backward_costs.size() || forward_costs.empty()) {
    throw std::logic_error("simulate_pipeline: one forward and one backward cost a stage");
  }
  const int stages = static_cast<int>(forward_costs.size());
  const auto p = static_cast<size_t>(stages);
  const auto m = static_cast<size_t>(microbatches);
  std::vector<std::vector<PipelineAction>> orders(p);
  for (int s = 0; s < stages; ++s) orders[static_cast<size_t>(s)] = pipeline_actions(kind, s, stages, microbatches);
  // When each stage finished each micro-batch's forward and backward (-1: not yet).
  std::vector<std::vector<double>> forward_done(p, std::vector<double>(m, -1));
  std::vector<std::vector<double>> backward_done(p, std::vector<double>(m, -1));
  std::vector<size_t> next(p, 0);
  std::vector<double> clock(p, 0);
  PipelineSimulation result;
  result.busy.assign(p, 0);
  result.peak_in_flight.assign(p, 0);
  std::vector<int> in_flight(p, 0);
  size_t remaining = p * 2 * m;
  while (remaining > 0) {
    bool progressed = false;
    for (size_t s = 0; s < p; ++s) {
      if (next[s] == orders[s].size()) continue;
      const PipelineAction action = orders[s][next[s]];
      const auto i = static_cast<size_t>(action.microbatch);
      double ready = 0;  // when its input arrives
      if (action.kind == Kind::kForward) {
        if (s > 0) ready = forward_done[s - 1][i];
      } else {
        ready = s + 1 < p ? backward_done[s + 1][i] : forward_done[s][i];
      }
      if (ready < 0) continue;  // its input has not been produced yet
      const double cost = action.kind == Kind::kForward ? forward_costs[s] : backward_costs[s];
      const double start = std::max(clock[s], ready);
      clock[s] = start + cost;
      result.busy[s] += cost;
      if (action.kind == Kind::kForward) {
        forward_done[s][i] = clock[s];
        result.peak_in_flight[s] = std::max(result.peak_in_flight[s], ++in_flight[s]);
      } else {
        backward_done[s][i] = clock[s];
        --in_flight[s];
      }
      ++next[s];
      --remaining;
      progressed = true;
    }
    if (!progressed) throw std::logic_error("pipeline schedule deadlocks");
  }
  result.makespan = *std::max_element(clock.begin(), clock.end());
  return result;
}

}  // namespace trainer::engine
