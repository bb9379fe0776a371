// `trainer.devices=N` on one machine without torchrun: the job process becomes rank 0 and starts
// ranks 1..N-1 as copies of itself (/proc/self/exe with the same command line and the run
// directory fixed), with torchrun's variables set. It supervises them: the first rank that ends
// with an error is recorded (rank, pid, exit code or signal) so the job's error names it, and the
// ranks still running are stopped when the job ends. A rank dies with the job process
// (PR_SET_PDEATHSIG). Each rank's stderr reaches the terminal and the job's log through the job
// process (rank_stderr_relay.h), which keeps its last lines for the job's error. No LibTorch here.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "trainer/engine/distributed/rank_stderr_relay.h"

namespace trainer::engine {

// How a rank started by LocalRanks ended with an error.
struct RankFailure {
  int rank = 0;
  std::string what;  // "rank 1 (pid 123) exited with code 1", "... was killed by signal 9 (Killed)"
  std::string why;   // for a signal, its likely cause ("killed from outside (...)"); else ""
};

class LocalRanks {
 public:
  // Starts ranks 1..world_size-1 running `args` (argv[0] first), each with RANK, LOCAL_RANK,
  // WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK=0, MASTER_ADDR, MASTER_PORT and TRAINER_DDP_LAUNCHER
  // set, and sets the same variables for this process as rank 0. The ranks meet through a store
  // in a fresh private file (TRAINER_STORE_FILE), not a TCP port: LibTorch's TCPStore listens on
  // every interface, unauthenticated. NCCL_SOCKET_IFNAME=lo keeps NCCL's bootstrap on loopback
  // unless the environment sets it. Throws trainer::Error when a process cannot be started.
  LocalRanks(int world_size, const std::vector<std::string>& args, const std::string& master_addr, int master_port);
  // Stops (SIGTERM, then SIGKILL after 5 s) and reaps every rank still running.
  ~LocalRanks();
  LocalRanks(const LocalRanks&) = delete;
  LocalRanks& operator=(const LocalRanks&) = delete;

  // The first rank that ended with an error, or nullopt. Waits up to `seconds` for one to appear.
  std::optional<RankFailure> failure(double seconds = 0) const;
  // Waits until every rank has ended (up to `seconds`, then stops the rest); returns the first
  // failure, if any.
  std::optional<RankFailure> wait_all(double seconds);
  // What `rank` last wrote to stderr, as a labelled block for the job's error: a line saying so,
  // then its last lines (RankStderrRelay::kTailLines), each as relayed ("[rank 1] ..."); or a
  // line saying it wrote nothing. For a rank that has ended this is the end of all it wrote.
  std::string last_output(int rank);
  // SIGTERM to the ranks still running, SIGKILL to those left after `grace_seconds`.
  void stop(double grace_seconds = 5);

  // The command line of this process (from /proc/self/cmdline).
  static std::vector<std::string> own_command_line();
  // A TCP port free on 127.0.0.1 right now (the kernel picks it).
  static int free_port();

 private:
  struct Rank {
    int rank = 0;
    pid_t pid = -1;
    bool running = true;
  };
  void supervise();
  bool all_ended() const;

  mutable std::mutex mutex_;
  std::vector<Rank> ranks_;
  std::optional<RankFailure> failure_;
  bool stopping_ = false;  // ranks that end after stop() was called are not failures
  std::atomic<bool> quit_{false};
  std::thread supervisor_;
  std::string store_file_;  // the ranks' rendezvous store (TRAINER_STORE_FILE), removed at the end
  RankStderrRelay relay_;   // the ranks' stderr, passed on by the supervisor's thread
};

}  // namespace trainer::engine
