// run_process's timeout (subprocess.h): a run past it fails the test, naming the command, the
// timeout and the tail of its output, and its whole process group is killed.
#include "subprocess.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

using namespace trainer::testing;

TEST_CASE("a run that ends before its timeout is left alone") {
  auto result = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, "", {}, std::chrono::seconds(30));
  CHECK(result.exit_code == 3);
  CHECK(result.out == "out\n");
  CHECK(result.err == "err\n");
}

// Fails by design: run by the case below, in a process of its own.
// The shell writes the pid of what it starts in the background to the file TIMEOUT_PID_FILE names.
TEST_CASE("a run past its timeout (fails by design)", "[.timeout]") {
  const char* pid_file = std::getenv("TIMEOUT_PID_FILE");
  REQUIRE(pid_file != nullptr);
  run_process({"/bin/sh", "-c", "sleep 60 & echo $! > " + std::string(pid_file) + "; echo started; exec sleep 60"}, "",
              {}, std::chrono::seconds(1));
}

TEST_CASE("a run past its timeout fails the test, saying why, and its whole process group is killed") {
  TempDir dir;
  const std::string pid_file = dir.path() + "/grandchild.pid";
  auto demo = run_process({"/proc/self/exe", "[.timeout]"}, "", {"TIMEOUT_PID_FILE=" + pid_file});
  INFO(demo.out);
  CHECK(demo.exit_code == 1);
  CHECK(demo.out.find("timed out after 1 s (its process group was killed): /bin/sh -c sleep 60 &") !=
        std::string::npos);
  CHECK(demo.out.find("--- stdout (tail) ---\n  started\n") != std::string::npos);

  std::ifstream in(pid_file);
  pid_t pid = 0;
  REQUIRE(in >> pid);
  // The shell's background process was killed too (then reaped by init, its parent being gone).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(pid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(gone);
}
