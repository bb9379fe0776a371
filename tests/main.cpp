// Catch's main for every test executable: a run that runs no test case fails (exit 2), as with
// --warn NoTests, so that a filter matching nothing is an error, not a pass (Catch2 2 takes --warn
// once; the entries pass --warn NoAssertions). Then the skips the cases reported (skip_test.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "skip_test.h"

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int error = session.applyCommandLine(argc, argv)) return error;
  Catch::ConfigData& config = session.configData();
  config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoTests);
  const int failed = session.run();
  trainer::testing::report_skips(failed);
  return failed;
}
