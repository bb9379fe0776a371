// The job process relays the stderr of the ranks it starts: every line passed on, marked with the
// rank, and the last lines kept for the job's error, also those a rank wrote just before dying.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/distributed/rank_stderr_relay.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/util/log.h"

using trainer::engine::RankStderrRelay;

namespace {

void write_all(int fd, const std::string& text) {
  CATCH_REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

CATCH_TEST_CASE("relayed lines keep their order, carry the rank and reach the log file; the tail is bounded") {
  char dir[] = "/tmp/relay-test-XXXXXX";
  CATCH_REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string log_file = std::string(dir) + "/job.log";
  trainer::log::set_file(log_file);
  int fds[2];
  CATCH_REQUIRE(::pipe(fds) == 0);
  {
    RankStderrRelay relay;
    relay.add(3, fds[0]);
    CATCH_CHECK(relay.last_lines(3).empty());
    for (int i = 0; i < 15; ++i) write_all(fds[1], "line " + std::to_string(i) + "\n");
    write_all(fds[1], "unfinished");
    relay.pump(100);
    auto lines = relay.last_lines(3);
    CATCH_REQUIRE(lines.size() == RankStderrRelay::kTailLines);
    CATCH_CHECK(lines.front() == "line 6");
    CATCH_CHECK(lines[8] == "line 14");
    CATCH_CHECK(lines.back() == "unfinished");  // not yet relayed: no newline so far
    // What the writer wrote before it ended is all there, without waiting for it.
    write_all(fds[1], " now\nlast words\n");
    ::close(fds[1]);
    lines = relay.last_lines(3);
    CATCH_CHECK(lines.back() == "last words");
    CATCH_CHECK(lines[lines.size() - 2] == "unfinished now");
    CATCH_CHECK(relay.last_lines(4).empty());  // not a rank it relays
    relay.finish(1.0);
  }
  const std::string logged = read_text(log_file);
  CATCH_CHECK(logged.find("[rank 3] line 0\n[rank 3] line 1\n") == 0);
  CATCH_CHECK(logged.find("[rank 3] line 14\n[rank 3] unfinished now\n[rank 3] last words\n") != std::string::npos);
  // Not std::filesystem: the wheel's libtorch.so exports its own copy of it, built for another ABI
  // (remove_all crashed there).
  ::unlink(log_file.c_str());
  ::rmdir(dir);
}

CATCH_TEST_CASE("finish passes on an unfinished last line and a very long line is kept cut") {
  int fds[2];
  CATCH_REQUIRE(::pipe(fds) == 0);
  RankStderrRelay relay;
  relay.add(1, fds[0]);
  write_all(fds[1], std::string(2100, 'x') + "\nno newline at the end");
  ::close(fds[1]);
  relay.finish(1.0);
  const auto lines = relay.last_lines(1);
  CATCH_REQUIRE(lines.size() == 2);
  CATCH_CHECK(lines[0].size() < 2100);
  CATCH_CHECK(lines[0].rfind(" [...]") == lines[0].size() - 6);
  CATCH_CHECK(lines[1] == "no newline at the end");
}
