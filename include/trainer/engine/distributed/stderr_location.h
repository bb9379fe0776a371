// Where a rank's stderr goes, so that the job's error can point at another rank's output when a
// launcher (torchrun, srun) started the ranks and trainer never saw their output: every rank
// publishes its own through the store at the rendezvous (process_group.h), and rank 0 names them
// when a peer fails or hangs. No LibTorch here.
#pragma once

#include <string>
#include <vector>

namespace trainer::engine {

struct StderrLocation {
  std::string host;
  std::string target;  // what /proc/self/fd/2 links to: a path, "pipe:[123]", "socket:[45]", "/dev/pts/3"

  // This process's.
  static StderrLocation of_this_process();
  // One line for the store, and back; a text that is not one decodes to an empty location.
  std::string encode() const;
  static StderrLocation decode(const std::string& text);

  bool operator==(const StderrLocation& other) const { return host == other.host && target == other.target; }
};

// Where each rank's stderr went, in words, ranks with the same place grouped ("ranks 0, 1: with
// this message (a pipe on node-a); rank 2: /logs/2/stderr.log on node-b"); `own` is the reporting
// process's. At most `groups` groups are listed, then how many ranks were left out.
std::string describe_stderr_locations(const std::vector<StderrLocation>& locations, const StderrLocation& own,
                                      size_t groups = 8);

// One location in words, as above ("/logs/2/stderr.log on node-b").
std::string describe_stderr_location(const StderrLocation& location, const StderrLocation& own);

}  // namespace trainer::engine
