// SIGINT/SIGTERM as the loop sees them (stop_signal.h): nothing before a signal, the signal's
// number after one, and the process survives it (the handler records, the loop decides). The
// e2e tests send real signals to a training run (resume_test.cpp); this is the flag alone.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/stop_signal.h"

#include <csignal>

#include <catch2/catch.hpp>

CATCH_TEST_CASE("a stop signal is recorded, not fatal, and the latest one is reported") {
  using trainer::engine::stop_signal_received;
  CATCH_CHECK(stop_signal_received() == 0);
  trainer::engine::install_stop_signal_handlers();
  CATCH_CHECK(stop_signal_received() == 0);
  CATCH_REQUIRE(std::raise(SIGTERM) == 0);  // the default action would end this process
  CATCH_CHECK(stop_signal_received() == SIGTERM);
  CATCH_REQUIRE(std::raise(SIGINT) == 0);
  CATCH_CHECK(stop_signal_received() == SIGINT);
}
