#include "trainer/launch/engine_result.h"

#include <cstring>
#include <utility>

#include "trainer/engine/engine_c_abi.h"

namespace trainer::launch {

EngineResult engine_result_of(const TrainerJobResult& raw) {
  EngineResult result;
  result.exit_code = raw.exit_code;
  result.message.assign(raw.message, strnlen(raw.message, sizeof(raw.message)));
  if (raw.tuned_batch_size > 0) result.tuned_batch_size = raw.tuned_batch_size;
  switch (raw.outcome) {
    case TRAINER_JOB_FINISHED:
      result.outcome = JobOutcome::kFinished;
      break;
    case TRAINER_JOB_INTERRUPTED:
      result.outcome = JobOutcome::kInterrupted;
      result.stop_signal = raw.stop_signal;
      break;
    case TRAINER_JOB_FAILED:
      result.outcome = JobOutcome::kFailed;
      break;
    default:
      result.outcome = JobOutcome::kFailed;
      result.message = "the engine reported an unknown outcome " + std::to_string(raw.outcome) +
                       (result.message.empty() ? std::string() : ": " + result.message);
      break;
  }
  // A finished job exits 0; an engine that says otherwise has failed the job.
  if (result.outcome == JobOutcome::kFinished && result.exit_code != 0) result.outcome = JobOutcome::kFailed;
  if (result.outcome != JobOutcome::kFinished && result.exit_code == 0) result.exit_code = 1;
  if (result.outcome == JobOutcome::kInterrupted && result.stop_signal <= 0) result.outcome = JobOutcome::kFailed;
  return result;
}

EngineFailure::EngineFailure(EngineResult result)
    : Error("", result.message.empty() ? "the job failed" : result.message), result_(std::move(result)) {}

}  // namespace trainer::launch
