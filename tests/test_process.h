// What the unit tests share for running real processes: shell quoting, a command's output, and
// the test Python that reads trainer's outputs back (temporary directories: temp_dir.h).
#pragma once

#include <string>

namespace trainer::testing {

// `text` in single quotes for /bin/sh.
std::string shell_quote(const std::string& text);

// Runs `command` with /bin/sh and returns what it wrote to stdout (append 2>&1 for stderr too);
// `status` gets pclose's status (0: exit code 0).
std::string command_output(const std::string& command, int& status);

// The Python the tests read outputs back with: $TRAINER_TEST_PYTHON when set (even empty), else
// `configured` (the CMake option TRAINER_TEST_PYTHON, passed by the test). Empty: none.
std::string test_python(const char* configured);

// True when `python` is set and imports `module`.
bool python_has(const std::string& python, const std::string& module);

}  // namespace trainer::testing
