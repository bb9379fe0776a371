// The golden of a command line that must fail: <case>.error, next to the case's other expected
// files, holds the exit code trainer uses for that error on its first line and the first line of
// its message on the second: stderr's first line that is not a timestamped log record (the
// checkout's root written as @ROOT@).
#pragma once

#include <filesystem>
#include <string>

namespace trainer::testing {

struct ProcessResult;

// Checks `result` against `golden` (exit code, first line of stderr, nothing on stdout) and that it
// shows no crash (check_no_crash). With TRAINER_UPDATE_GOLDENS=1 in the environment it writes the
// golden from `result` instead, for a reviewed change of messages.
void check_error_golden(const ProcessResult& result, const std::filesystem::path& golden, const std::string& root);

}  // namespace trainer::testing
