// Helpers shared by the end-to-end tests that run the real trainer binary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "skip_test.h"  // tests/skip_test.h: skips that ctest reports as skips

namespace trainer::testing {

struct ProcessResult;

// A failed command that failed cleanly: exit 1, a one-paragraph "Error: ...", no C++ backtrace or
// std::terminate message (checked with CHECK).
void check_clean_error(const ProcessResult& result);

// What a failed command never writes, whatever its error: a C++ backtrace ("frame #"), a
// std::terminate or uncaught-exception message, a crash or a sanitizer report; nor does it end
// by a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL). Checked with CHECK.
void check_no_crash(const ProcessResult& result);

// The reason of the cases that need the engine, in a build without it (TRAINER_LIBTORCH=none).
inline const char* const kNoEngine = "engine not built in this configuration (TRAINER_LIBTORCH=none)";

// Whether this build has the engine (TRAINER_LIBTORCH=none builds only the config tools).
bool engine_built();

// Whether TRAINER_TEST_PYTHON is set and imports `modules` ("torch, safetensors").
bool test_python_imports(const std::string& modules);

std::string read_file(const std::filesystem::path& path);
// The pid of rank `rank` that trainer started for the run in `run_dir` (a data-parallel or
// pipeline job's process found in /proc), or -1.
int find_rank(const std::string& run_dir, int rank);
// A line of a cases.txt (tests/data/cli_trees, tests/data/template_optuna) as words: split on
// spaces, "␣" (U+2423) inside a word standing for a space.
std::vector<std::string> split_case(const std::string& line);
// `text` as the whole of the file at `path` (bytes as they are).
void write_text(const std::filesystem::path& path, const std::string& text);
// The only predictions.csv below `dir` (an evaluation's run directory; fails the test when none).
std::filesystem::path predictions_under(const std::filesystem::path& dir);

// Whether `part` occurs in `text`.
bool contains(const std::string& text, const std::string& part);

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

// Float32 tensors by name, as a .safetensors file holds them (float64 ones read as float32).
using Weights = std::map<std::string, std::vector<float>>;
Weights read_safetensors(const std::filesystem::path& path);
// The weights of `run_dir`'s last.ckpt, exported by the real binary (trainer export) and read back.
Weights exported_weights(const std::filesystem::path& run_dir);
// The largest absolute difference between two sets of the same tensors (fails the test when their
// names or sizes differ).
double largest_difference(const Weights& a, const Weights& b);

// A .npy file (format 1.0) as numpy.save writes it, its header padded with spaces to 64 bytes:
// `data` (raw bytes, not checked against the shape) as an array of NumPy dtype `descr` ("|u1",
// "<f4", ...) and `shape`.
void write_npy(const std::filesystem::path& path, const std::string& descr, const std::vector<int64_t>& shape,
               const std::string& data, bool fortran_order = false);

}  // namespace trainer::testing
