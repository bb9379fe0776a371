#include "trainer/util/signal_cause.h"

#include <csignal>
#include <cstring>

namespace trainer {

std::string signal_text(int number) {
  const char* name = ::strsignal(number);
  return "signal " + std::to_string(number) + (name != nullptr ? " (" + std::string(name) + ")" : "");
}

bool signal_is_crash(int number) {
  return number == SIGABRT || number == SIGSEGV || number == SIGBUS || number == SIGILL || number == SIGFPE;
}

std::string signal_cause(int number) {
  switch (number) {
    case SIGKILL:
      return "killed from outside (the kernel's out-of-memory killer, see dmesg, or a kill command)";
    case SIGABRT:
      return "it aborted (an uncaught exception or a failed check inside a library)";
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
      return "it crashed";
    default:
      return "a signal sent from outside";
  }
}

}  // namespace trainer
