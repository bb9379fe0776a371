// Helpers shared by the end-to-end tests that run the real trainer binary.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace trainer::testing {

struct ProcessResult;

// A failed command that failed cleanly: exit 1, a one-paragraph "Error: ...", no C++ backtrace or
// std::terminate message (checked with CHECK).
void check_clean_error(const ProcessResult& result);

// What a failed command never writes, whatever its error: a C++ backtrace ("frame #"), a
// std::terminate or uncaught-exception message, a crash or a sanitizer report; nor does it end
// by a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL). Checked with CHECK.
void check_no_crash(const ProcessResult& result);

// Why a test may skip itself (the rest of the case, or all of it).
enum class Skip {
  expected,           // true of this build or machine by design: no GPU, not a CUDA build, no engine
  unexpected_in_ci,   // something scripts/setup.sh installs (test Python, zsh, fish, SLURM): where
                      // the environment variable CI is "true" the case fails instead of skipping
};

// Reports `reason` as a skip: the case passes, and when the whole run passes the test executable
// ends with a line "TRAINER-SKIPPED: <case>: <reason>", which ctest reports as Skipped
// (SKIP_REGULAR_EXPRESSION, tests/CMakeLists.txt). Under CI=true an unexpected_in_ci skip fails
// the case instead. The caller returns right after it: `return skip_test("...", Skip::expected);`
void skip_test(const std::string& reason, Skip why);
// The reason of the cases that need the engine, in a build without it (TRAINER_LIBTORCH=none).
inline const char* const kNoEngine = "engine not built in this configuration (TRAINER_LIBTORCH=none)";
// Prints the skips recorded by skip_test, as skips when `failed` is 0 (main() calls it).
void report_skips(int failed);

// Whether this build has the engine (TRAINER_LIBTORCH=none builds only the config tools).
bool engine_built();

std::string read_file(const std::filesystem::path& path);

// The number printed as `<name>=<number>` on stdout (fails the test when absent).
double printed(const std::string& out, const std::string& name);

// metrics.csv as rows of named cells.
struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // The cell of `column` in the last row where it is not empty ("" when none).
  std::string last(const std::string& column) const;
};
CsvTable read_csv(const std::filesystem::path& path);

// Float32 tensors by name, as a .safetensors file holds them.
using Weights = std::map<std::string, std::vector<float>>;
Weights read_safetensors(const std::filesystem::path& path);
// The weights of `run_dir`'s last.ckpt, exported by the real binary (trainer export) and read back.
Weights exported_weights(const std::filesystem::path& run_dir);
// The largest absolute difference between two sets of the same tensors (fails the test when their
// names or sizes differ).
double largest_difference(const Weights& a, const Weights& b);

}  // namespace trainer::testing
