// Catch's main for every test executable but the end-to-end one (e2e/e2e_main.cpp): a run that
// runs no test case fails (exit 2), as with --warn NoTests, so that a filter matching nothing is an
// error, not a pass. (Catch2 2 takes --warn once; the entries pass --warn NoAssertions.)
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int error = session.applyCommandLine(argc, argv)) return error;
  Catch::ConfigData& config = session.configData();
  config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoTests);
  return session.run();
}
