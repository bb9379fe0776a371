// The data-bound warning: when it fires (over a quarter of an epoch waited for batches, enough
// batches timed) and what it names (the share, the rate, data.num_workers and what auto gives).
#include "trainer/data/loader_timing.h"

#include <catch2/catch.hpp>

TEST_CASE("the data-bound warning: over a quarter of the epoch waited, naming num_workers and the rate") {
  using trainer::data::data_bound_warning;
  trainer::data::LoaderTiming timing;
  timing.waited_seconds = 3;
  timing.batches_timed = 20;
  timing.making_seconds = 4;
  timing.samples_made = 2000;
  const auto warning = data_bound_warning(timing, 10, 0, 2, 4);
  REQUIRE(warning.has_value());
  CHECK(warning->find("waited for batches 30% of epoch 2 (3.00 of 10.00 s)") != std::string::npos);
  CHECK(warning->find("on the training thread (data.num_workers=0), making 500 samples/s per thread") !=
        std::string::npos);
  CHECK(warning->find("Raise data.num_workers (0 now; data.num_workers=auto gives 4 here") != std::string::npos);
  const auto saturated = data_bound_warning(timing, 10, 4, 2, 4);
  REQUIRE(saturated.has_value());
  CHECK(saturated->find("The loader has 4 worker thread(s)") != std::string::npos);
  CHECK(saturated->find("more threads would not help") != std::string::npos);
  CHECK(saturated->find("Raise") == std::string::npos);
  // A quarter or less, a short epoch, or nothing timed: no warning.
  CHECK_FALSE(data_bound_warning(timing, 12, 0, 2, 4).has_value());
  timing.batches_timed = trainer::data::kDataBoundMinBatches - 1;
  CHECK_FALSE(data_bound_warning(timing, 10, 0, 2, 4).has_value());
  CHECK_FALSE(data_bound_warning(trainer::data::LoaderTiming{}, 0, 0, 0, 4).has_value());
}
