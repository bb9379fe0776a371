// An interactive program on a pseudo-terminal, for the tests that press TAB in a real shell:
// what is typed goes in as keystrokes, what the program draws comes back as one text.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trainer::testing {

class PtySession {
 public:
  // Starts argv[0] (a path or a name on PATH) with exactly `env` as its environment.
  PtySession(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  ~PtySession();
  PtySession(const PtySession&) = delete;
  PtySession& operator=(const PtySession&) = delete;

  void send(const std::string& keys);
  // Reads until `text` occurs in what the program drew after the last forget(), or `seconds`
  // pass. Returns whether it occurred.
  bool wait_for(const std::string& text, double seconds = 10.0);
  // Everything drawn since the last forget().
  const std::string& output() const { return output_; }
  void forget() { output_.clear(); }

 private:
  void read_available(int timeout_ms);

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
};

}  // namespace trainer::testing
