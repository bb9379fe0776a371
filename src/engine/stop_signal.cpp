#include "trainer/engine/stop_signal.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include "trainer/util/secondary_rank.h"

namespace trainer::engine {
namespace {

std::atomic<int> g_stop_signal{0};
std::atomic<int> g_interrupts{0};  // SIGINTs so far: the second quits at once
bool g_announce = false;           // this process says what a signal does (not a secondary rank)

constexpr char kStopping[] =
    "\ntrainer: Ctrl-C (SIGINT): stopping after the current step or batch (a fit writes last.ckpt first; a "
    "validation inside fit finishes first). Press Ctrl-C again to quit at once without saving.\n";
constexpr char kQuitting[] = "\ntrainer: second Ctrl-C (SIGINT): quitting now; nothing more is saved.\n";

// write(2), signal(2) and raise(3) are async-signal-safe; nothing else runs here.
void say(const char* text, size_t size) {
  if (g_announce) {
    const ssize_t written = ::write(STDERR_FILENO, text, size);
    static_cast<void>(written);
  }
}

void on_stop_signal(int signal_number) {
  if (signal_number == SIGINT && g_interrupts.fetch_add(1) > 0) {
    // A person pressed Ctrl-C twice: the default action (the signal is blocked in its own
    // handler, so it is delivered, and ends the process, as the handler returns). Launchers and
    // torchrun pass SIGTERM on, never SIGINT, so a forwarded stop never lands here.
    say(kQuitting, sizeof(kQuitting) - 1);
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_stop_signal.store(signal_number);
  if (signal_number == SIGINT) say(kStopping, sizeof(kStopping) - 1);
}

}  // namespace

void install_stop_signal_handlers() {
  g_announce = !is_secondary_rank();
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

int stop_signal_received() { return g_stop_signal.load(std::memory_order_relaxed); }

void record_stop_from_peer() {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, SIGTERM);
}

}  // namespace trainer::engine
