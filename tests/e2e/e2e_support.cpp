#include "e2e_support.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "subprocess.h"

namespace trainer::testing {

bool engine_built() {
  static const bool built = [] {
    auto version = run_process({TRAINER_BINARY, "--version"});
    return version.out.find("LibTorch ") != std::string::npos &&
           version.out.find("not built") == std::string::npos;
  }();
  return built;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

double printed(const std::string& out, const std::string& name) {
  std::smatch match;
  std::regex pattern(name + "=([0-9.eE+-]+)");
  REQUIRE(std::regex_search(out, match, pattern));
  return std::stod(match[1]);
}

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

}  // namespace

CsvTable read_csv(const std::filesystem::path& path) {
  CsvTable table;
  std::stringstream in(read_file(path));
  std::string line;
  if (std::getline(in, line)) table.columns = split(line);
  while (std::getline(in, line)) table.rows.push_back(split(line));
  return table;
}

std::string CsvTable::last(const std::string& column) const {
  size_t index = 0;
  while (index < columns.size() && columns[index] != column) ++index;
  if (index == columns.size()) return "";
  for (auto row = rows.rbegin(); row != rows.rend(); ++row) {
    if (index < row->size() && !(*row)[index].empty()) return (*row)[index];
  }
  return "";
}

}  // namespace trainer::testing
