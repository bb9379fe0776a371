// Detects a data-parallel rank that stops without dying (SIGSTOP, a deadlock, a collective that
// never completes), which Gloo and NCCL would otherwise wait out for trainer.dist_timeout (30 min).
// Every rank's thread publishes a heartbeat to the store (progress_beacon.h: batches, step, phase)
// a few times per trainer.hang_timeout and reads the others'. A rank whose heartbeat stops, or a
// rank whose own training thread makes no progress, for hang_timeout ends the job: it prints every
// rank's last phase and step as one paragraph, then what is known of the silent ranks' output
// (their last lines on stderr, or where it went), and exits 1 (the other ranks die with the job).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace trainer::engine {

class HangWatchdog {
 public:
  // What is known of rank r's output, as a block for the error ("" when nothing).
  using OutputOf = std::function<std::string(int rank)>;

  HangWatchdog(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size, double timeout_seconds,
               OutputOf output_of = {});
  ~HangWatchdog();  // stops the thread
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;

  // The paragraph a stalled job ends with, from each rank's last heartbeat ("" when unknown) and
  // which ranks are silent; exposed for tests.
  static std::string describe(int reporter, const std::vector<std::string>& heartbeats,
                              const std::vector<double>& silent_seconds, double own_stall_seconds,
                              double timeout_seconds);

 private:
  void run();

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int world_size_;
  double timeout_seconds_;
  OutputOf output_of_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace trainer::engine
