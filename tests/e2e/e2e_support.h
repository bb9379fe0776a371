// Helpers shared by the end-to-end tests that run the real trainer binary.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainer::testing {

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

}  // namespace trainer::testing
