// The order in which one pipeline stage runs the forward and backward passes of a batch's
// micro-batches (torch.distributed.pipelining's ScheduleGPipe and Schedule1F1B; shared/notes/
// formats.md). Torch-free: the same lists drive the engine and the unit tests' simulation.
// - GPipe: every forward, then every backward. Holds all m micro-batches' activations.
// - 1F1B: stage s of p runs min(p-1-s, m) forwards to fill the pipe, then alternates one forward
//   and one backward, then drains the remaining backwards. Same bubble as GPipe, (p-1)/(m+p-1),
//   but at most p-s micro-batches of activations in flight.
// Both run the backwards in micro-batch order, so a stage's sends and its neighbour's receives
// pair up in the same order (NCCL needs that: it ignores tags; Gloo matches by tag).
#pragma once

#include <string>
#include <vector>

namespace trainer::engine {

enum class PipelineScheduleKind { kGPipe, kOneFOneB };

// "gpipe" / "1f1b" (the config's words).
PipelineScheduleKind pipeline_schedule_kind(const std::string& name);
const char* pipeline_schedule_name(PipelineScheduleKind kind);

struct PipelineAction {
  enum class Kind { kForward, kBackward };
  Kind kind = Kind::kForward;
  int microbatch = 0;
  bool operator==(const PipelineAction& other) const { return kind == other.kind && microbatch == other.microbatch; }
};

// Stage `stage` (0-based) of `stages`: its forwards and backwards of `microbatches` micro-batches.
std::vector<PipelineAction> pipeline_actions(PipelineScheduleKind kind, int stage, int stages, int microbatches);

// GPipe's (and 1F1B's) idle share of each stage with equal stage times: (p-1)/(m+p-1).
double pipeline_bubble_theory(int stages, int microbatches);

// The schedule played out with a forward costing `forward_cost` and a backward `backward_cost` on
// every stage and free communication: when each stage is busy, and the most micro-batches whose
// activations one stage holds at once. Throws std::logic_error if the stages' orders deadlock.
struct PipelineSimulation {
  double makespan = 0;
  std::vector<double> busy;         // per stage
  std::vector<int> peak_in_flight;  // per stage: forwards done whose backward has not run
  double idle_share(int stage) const { return makespan > 0 ? 1.0 - busy[static_cast<size_t>(stage)] / makespan : 0; }
};
PipelineSimulation simulate_pipeline(PipelineScheduleKind kind, int stages, int microbatches, double forward_cost = 1.0,
                                     double backward_cost = 2.0);
// The same with each stage's own costs (one entry a stage): the idle the schedule itself implies for
// stages of unequal times (the trainer's end-of-fit report, beside what it measured). Throws
// std::logic_error when the two lists are empty or of different lengths.
PipelineSimulation simulate_pipeline(PipelineScheduleKind kind, int microbatches,
                                     const std::vector<double>& forward_costs,
                                     const std::vector<double>& backward_costs);

}  // namespace trainer::engine
