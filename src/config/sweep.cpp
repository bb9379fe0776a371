// STUB: replaced by the sweep expansion.
#include "trainer/config/sweep.h"

#include "trainer/util/error.h"

namespace trainer::config {

std::vector<SweepJob> expand_sweep(const std::vector<Override>&,
                                   const std::vector<std::pair<std::string, std::string>>&,
                                   const GroupOptionsLookup&, uint64_t) {
  throw Error("", "sweep expansion not implemented yet");
}

}  // namespace trainer::config
