// What a process killed by a signal most likely met, for the one-paragraph errors about it (a
// rank of a distributed job, a job of a sweep): "killed from outside (the kernel's out-of-memory
// killer, ...)" for SIGKILL, "it crashed" for SIGSEGV, ...; and whether the signal is a crash (a
// run that would crash again when resumed) rather than a stop from outside.
#pragma once

#include <string>

namespace trainer {

// "signal 9 (Killed)": the number and the C library's name for it.
std::string signal_text(int number);
std::string signal_cause(int number);
bool signal_is_crash(int number);

}  // namespace trainer
