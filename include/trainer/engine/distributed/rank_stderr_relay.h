// The stderr of the ranks trainer starts itself (local_ranks.h) reaches the terminal through the
// job process: each rank writes into a pipe, and the job process passes every line on, marked
// "[rank N] ", to its own stderr and log file (log::write_verbatim). It keeps each rank's last
// lines, so that the job's error can quote what a rank that died or hangs wrote last. The rank
// writes as it always did (no extra work in its training loop); what it wrote before dying stays
// in the pipe for the job process to read. No LibTorch here.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace trainer::engine {

class RankStderrRelay {
 public:
  static constexpr size_t kTailLines = 10;        // lines kept per rank for the job's error
  static constexpr size_t kTailLineChars = 2000;  // a longer kept line is cut (relayed whole)

  RankStderrRelay() = default;
  ~RankStderrRelay();  // closes the pipes still open (call finish() first to pass their rest on)
  RankStderrRelay(const RankStderrRelay&) = delete;
  RankStderrRelay& operator=(const RankStderrRelay&) = delete;

  // Relays `fd` (the read end of the pipe `rank` writes its stderr into) from now on; owns it.
  void add(int rank, int fd);
  // Passes on what the pipes hold, waiting up to `wait_ms` for something to arrive (the caller's
  // polling interval).
  void pump(int wait_ms);
  // Passes on what `rank`'s pipe holds now, then returns its last lines, oldest first (an
  // unfinished last line included). For a rank that has ended this is everything it wrote.
  std::vector<std::string> last_lines(int rank);
  // Passes on everything until every pipe ends (the ranks have ended) or `seconds` passed, then
  // closes the pipes.
  void finish(double seconds);

  // The prefix of each relayed line ("[rank 1] ").
  static std::string prefix(int rank);

 private:
  struct Pipe {
    int rank = 0;
    int fd = -1;                   // -1 once it ended
    std::string partial;           // bytes after the last newline
    std::deque<std::string> tail;  // the last kTailLines lines
  };
  // Reads what `pipe` holds (without waiting) and passes its complete lines on; `at_end` passes
  // an unfinished last line on too. Needs mutex_.
  void drain(Pipe& pipe, bool at_end);

  std::mutex mutex_;
  std::vector<Pipe> pipes_;
};

}  // namespace trainer::engine
