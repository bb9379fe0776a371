// Skips that ctest reports as skips, for every test executable (tests/main.cpp prints them).
#pragma once

#include <string>

namespace trainer::testing {

// Why a test may skip itself (the rest of the case, or all of it).
enum class Skip {
  expected,          // true of this build or machine by design: no GPU, not a CUDA build, no engine,
                     // a LibTorch without the feature
  unexpected_in_ci,  // something scripts/setup.sh installs (test Python, zsh, fish, SLURM): where
                     // the environment variable CI is "true" the case fails instead of skipping
};

// Reports `reason` as a skip: the case passes, and when the whole run passes the executable ends
// with a line "TRAINER-SKIPPED: <case>: <reason>", which ctest reports as Skipped
// (SKIP_REGULAR_EXPRESSION; docs/testing.md). Under CI=true an unexpected_in_ci skip fails the case
// instead. The caller returns right after it: `return skip_test("...", Skip::expected);`
void skip_test(const std::string& reason, Skip why);

// Prints the skips recorded by skip_test, as skips only when `failed` is 0: ctest's skip pattern
// would otherwise hide the failure. main() calls it.
void report_skips(int failed);

}  // namespace trainer::testing
