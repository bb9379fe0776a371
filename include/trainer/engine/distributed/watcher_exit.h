// Ending the process from a watcher thread (the hang watchdog, the rendezvous guard) while the
// training thread is stuck in a call nothing can interrupt (a collective, a read from the store):
// destructors cannot run then, so what they would clean up is named here beforehand and removed
// on the way out.
#pragma once

#include <string>

namespace trainer::engine {

// The file a watcher's exit removes: the rendezvous file of this process's local ranks
// (local_ranks.h); "" forgets it. One at a time: a process launches one set of ranks.
void remove_on_watcher_exit(const std::string& path);

// Prints "Error: <paragraph>" to stderr, removes the file named above, and ends the process with
// status 1 at once (std::_Exit: no destructor, no atexit handler).
[[noreturn]] void exit_from_watcher(const std::string& paragraph);

}  // namespace trainer::engine
