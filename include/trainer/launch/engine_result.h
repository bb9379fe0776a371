// How a job's engine run ended, as the launcher sees it: the fields of the engine's
// TrainerJobResult (engine_c_abi.h) in C++ types, and the error a failed or interrupted job throws
// up to whoever records its status (a sweep's job process keeps the fields, not the text).
#pragma once

#include <optional>
#include <string>

#include "trainer/util/error.h"

struct TrainerJobResult;

namespace trainer::launch {

enum class JobOutcome { kFinished, kFailed, kInterrupted };

struct EngineResult {
  int exit_code = 0;
  JobOutcome outcome = JobOutcome::kFinished;
  int stop_signal = 0;                        // SIGINT/SIGTERM when interrupted, else 0
  std::optional<long long> tuned_batch_size;  // the batch-size search's result, when the job searched
  std::string message;                        // one paragraph when failed or interrupted
};

// The engine's fields, checked: an outcome the launcher does not know is a failure that says so.
EngineResult engine_result_of(const TrainerJobResult& raw);

// A job the engine ran that did not finish: what() is the engine's message, result() its fields.
class EngineFailure : public Error {
 public:
  explicit EngineFailure(EngineResult result);
  const EngineResult& result() const { return result_; }

 private:
  EngineResult result_;
};

}  // namespace trainer::launch
