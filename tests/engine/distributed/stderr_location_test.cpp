// Where each rank's stderr went, in the words rank 0's error uses under torchrun or srun.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/distributed/stderr_location.h"

#include <unistd.h>

#include <catch2/catch.hpp>

using trainer::engine::describe_stderr_locations;
using trainer::engine::StderrLocation;

CATCH_TEST_CASE("stderr locations: files by path, the reporter's own stream, pipes, terminals; ranks grouped") {
  const StderrLocation own{"n1", "pipe:[77]"};
  const std::vector<StderrLocation> locations = {own,
                                                 own,
                                                 {"n1", "/logs/2/stderr.log"},
                                                 {"n2", "socket:[5]"},
                                                 {"n2", "socket:[5]"},
                                                 {"n2", "socket:[5]"},
                                                 {"n3", "/dev/pts/4"},
                                                 {}};
  CATCH_CHECK(describe_stderr_locations(locations, own) ==
              "ranks 0, 1: with this message (a pipe on n1); rank 2: /logs/2/stderr.log on n1; ranks 3-5: a socket on "
              "n2 (its launcher's output: srun passes output through one); rank 6: the terminal /dev/pts/4 on n3; "
              "rank 7: not known (the rank did not say)");
  CATCH_CHECK(describe_stderr_locations(locations, own, 2) ==
              "ranks 0, 1: with this message (a pipe on n1); rank 2: /logs/2/stderr.log on n1; and 5 more rank(s)");
  CATCH_CHECK(describe_stderr_locations({{"n1", "pipe:[8]"}}, own) ==
              "rank 0: a pipe on n1 (its launcher's output, or a program reading it)");
}

CATCH_TEST_CASE("stderr location: this process's, and through the store's text form") {
  const StderrLocation mine = StderrLocation::of_this_process();
  char host[256] = {};
  CATCH_REQUIRE(::gethostname(host, sizeof(host) - 1) == 0);
  CATCH_CHECK(mine.host == host);
  CATCH_CHECK(!mine.target.empty());
  CATCH_CHECK(StderrLocation::decode(mine.encode()) == mine);
  CATCH_CHECK(StderrLocation::decode("no newline").target.empty());
}
