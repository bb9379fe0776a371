// The end-to-end tests' main: as tests/main.cpp (a run of no test case fails, as with
// --warn NoTests), then the skips the cases reported (skip_test in e2e_support.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "e2e_support.h"

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int error = session.applyCommandLine(argc, argv)) return error;
  Catch::ConfigData& config = session.configData();
  config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoTests);
  const int failed = session.run();
  trainer::testing::report_skips(failed);
  return failed;
}
