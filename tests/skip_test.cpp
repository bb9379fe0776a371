#include "skip_test.h"

#include <cstdlib>
#include <iostream>
#include <vector>

#include <catch2/catch.hpp>

namespace trainer::testing {

namespace {

std::vector<std::string>& recorded_skips() {
  static std::vector<std::string> skips;
  return skips;
}

}  // namespace

void skip_test(const std::string& reason, Skip why) {
  const char* ci = std::getenv("CI");
  if (why == Skip::unexpected_in_ci && ci != nullptr && std::string(ci) == "true") {
    FAIL(reason << " (CI=true, where scripts/setup.sh installs it: a failure, not a skip)");
  }
  recorded_skips().push_back(Catch::getResultCapture().getCurrentTestName() + ": " + reason);
  SUCCEED("skipped: " << reason);
}

void report_skips(int failed) {
  for (const std::string& skip : recorded_skips()) {
    std::cout << (failed == 0 ? "TRAINER-SKIPPED: " : "(skipped, in a run that failed) ") << skip << std::endl;
  }
}

}  // namespace trainer::testing
