// Random search: `num_samples` jobs, each override drawn independently from its search space.
//   a,b,c / choice(...) / range(...) / glob(...)  one of the listed values, uniformly;
//   interval(a,b)                                  a float in [a, b), uniformly;
//   tag(log, interval(a,b))                        log-uniform in [a, b) (0 < a <= b);
//   int(interval(a,b))                             an integer in [a, b], uniformly (as Hydra's
//                                                  Optuna sweeper reads it); with tag(log, ...)
//                                                  log-uniform over [a, b+1), rounded down (a >= 1).
// Non-sweep overrides are kept in every job. Slots are formed as in expand_sweep (params first,
// then the command line, a later override of the same key replacing the earlier one in place).
//
// Reproducible on every platform: the generator is std::mt19937_64 seeded with `seed`, and the
// draws use explicit arithmetic (a uniform double is the top 53 bits of one output times 2^-53; an
// index in [0, n) is taken by rejection from one output), not the <random> distributions, whose
// output differs between standard libraries. For each job in turn, the slots draw in order, each
// sweep slot taking exactly the outputs it needs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"

namespace trainer::config {

std::vector<SweepJob> sample_sweep(const std::vector<Override>& overrides,
                                   const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                                   const GroupOptionsLookup& group_options, int64_t num_samples, uint64_t seed);

// The draws sample_sweep makes, for tests and for other samplers.
class SweepRandom {
 public:
  explicit SweepRandom(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1), 53 random bits.
  double uniform01();
  // Uniform in [0, n), n >= 1, without modulo bias.
  uint64_t index(uint64_t n);
  // The generator's state as the standard's text form, and back (trainer::Error if malformed):
  // a resumed search continues the same draws.
  std::string state() const;
  void set_state(const std::string& state);

 private:
  std::mt19937_64 engine_;
};

}  // namespace trainer::config
