#include "trainer/engine/stop_signal.h"

#include <atomic>
#include <csignal>

namespace trainer::engine {
namespace {

std::atomic<int> g_stop_signal{0};

void on_stop_signal(int signal_number) { g_stop_signal.store(signal_number); }

}  // namespace

void install_stop_signal_handlers() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

int stop_signal_received() { return g_stop_signal.load(std::memory_order_relaxed); }

void record_stop_from_peer() {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, SIGTERM);
}

}  // namespace trainer::engine
