#include "error_golden.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace trainer::testing {

namespace {

const std::string kRootMark = "@ROOT@";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The first line of the error message: stderr's first line that is not a log record
// ("[2026-01-01 12:00:00,000][trainer][warning] - ...", whose time differs every run).
std::string first_message_line(const std::string& err) {
  static const std::regex log_record(R"(^\[\d{4}-\d\d-\d\d [^\]]*\]\[)");
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (!std::regex_search(line, log_record)) return line;
  }
  return "";
}

}  // namespace

void check_error_golden(const ProcessResult& result, const std::filesystem::path& golden, const std::string& root) {
  const std::string first_line = first_message_line(result.err);
  const char* update = std::getenv("TRAINER_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary) << result.exit_code << "\n"
                                            << replace_all(first_line, root, kRootMark) << "\n";
  }
  std::ifstream in(golden, std::ios::binary);
  int exit_code = -1;
  std::string expected_line;
  in >> exit_code;
  in.ignore(1);
  std::getline(in, expected_line);
  INFO("golden " << golden.string());
  REQUIRE(in);
  CHECK(result.exit_code == exit_code);
  CHECK(first_line == replace_all(expected_line, kRootMark, root));
  CHECK(result.out.empty());
  check_no_crash(result);
}

}  // namespace trainer::testing
