// EpochSampler: reshuffled every epoch, repeatable, and split across ranks like PyTorch's
// DistributedSampler (disjoint, covering, equal lengths). Also the seeded permutation itself.
#include "trainer/data/sampler.h"

#include <set>
#include <vector>

#include <ATen/ATen.h>

#define CATCH_CONFIG_PREFIX_ALL
#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using trainer::data::EpochSampler;
using trainer::data::random_permutation;

namespace {

std::vector<int64_t> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

CATCH_TEST_CASE("random_permutation is a seeded permutation") {
  const at::Tensor p = random_permutation(1000, 7);
  CATCH_CHECK(p.scalar_type() == at::kLong);
  CATCH_CHECK(at::equal(std::get<0>(p.sort()), at::arange(1000, at::kLong)));
  CATCH_CHECK(at::equal(p, random_permutation(1000, 7)));
  CATCH_CHECK(!at::equal(p, random_permutation(1000, 8)));
  CATCH_CHECK(!at::equal(p, at::arange(1000, at::kLong)));
  // Version-independent: pinned values, so a LibTorch upgrade cannot silently change orders.
  CATCH_CHECK(to_vector(random_permutation(8, 42)) == std::vector<int64_t>{7, 2, 4, 0, 3, 5, 1, 6});
  CATCH_CHECK(random_permutation(0, 1).numel() == 0);
  CATCH_CHECK(to_vector(random_permutation(1, 1)) == std::vector<int64_t>{0});
  // Roughly uniform: each of 10 positions receives element 0 about 1/10 of the time.
  std::vector<int> where_zero(10, 0);
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    const auto v = to_vector(random_permutation(10, seed));
    for (int i = 0; i < 10; ++i) {
      if (v[i] == 0) ++where_zero[i];
    }
  }
  for (int count : where_zero) CATCH_CHECK((count > 140 && count < 260));
}

CATCH_TEST_CASE("EpochSampler reshuffles each epoch and repeats an epoch exactly") {
  EpochSampler sampler(100, /*shuffle=*/true, /*seed=*/3);
  sampler.set_epoch(0);
  const at::Tensor e0 = sampler.indices();
  sampler.set_epoch(1);
  const at::Tensor e1 = sampler.indices();
  sampler.set_epoch(0);
  CATCH_CHECK(at::equal(sampler.indices(), e0));
  CATCH_CHECK(!at::equal(e0, e1));
  CATCH_CHECK(at::equal(std::get<0>(e1.sort()), at::arange(100, at::kLong)));
  CATCH_CHECK(sampler.num_samples() == 100);

  EpochSampler other_seed(100, true, 4);
  CATCH_CHECK(!at::equal(other_seed.indices(), e0));

  EpochSampler ordered(5, /*shuffle=*/false, 3);
  ordered.set_epoch(9);
  CATCH_CHECK(to_vector(ordered.indices()) == std::vector<int64_t>{0, 1, 2, 3, 4});
}

CATCH_TEST_CASE("EpochSampler ranks are disjoint and cover the data") {
  const int world = 3;
  const int64_t n = 100;  // not a multiple of 3: padded to 102 or cut to 99
  for (bool drop_last : {false, true}) {
    std::vector<int64_t> all;
    std::vector<at::Tensor> per_rank;
    for (int rank = 0; rank < world; ++rank) {
      EpochSampler sampler(n, true, 11, rank, world, drop_last);
      sampler.set_epoch(5);
      const at::Tensor idx = sampler.indices();
      CATCH_CHECK(idx.numel() == sampler.num_samples());
      CATCH_CHECK(sampler.num_samples() == (drop_last ? 33 : 34));
      per_rank.push_back(idx);
      for (int64_t i : to_vector(idx)) all.push_back(i);
    }
    const std::set<int64_t> distinct(all.begin(), all.end());
    if (drop_last) {
      CATCH_CHECK(all.size() == 99);
      CATCH_CHECK(distinct.size() == 99);  // disjoint; one sample left out this epoch
    } else {
      CATCH_CHECK(all.size() == 102);
      CATCH_CHECK(distinct.size() == 100);  // covers everything; 2 padded repeats
    }
    // Interleaved from one shared permutation: rank r holds positions r, r+3, ...
    EpochSampler single(n, true, 11);
    single.set_epoch(5);
    const auto order = to_vector(single.indices());
    const auto rank1 = to_vector(per_rank[1]);
    CATCH_CHECK(rank1[0] == order[1]);
    CATCH_CHECK(rank1[5] == order[16]);
    if (!drop_last) {
      // The padding repeats the permutation's start.
      CATCH_CHECK(to_vector(per_rank[1]).back() == order[0]);
      CATCH_CHECK(to_vector(per_rank[2]).back() == order[1]);
    }
  }
}

CATCH_TEST_CASE("EpochSampler pads tiny datasets and rejects bad ranks") {
  EpochSampler sampler(2, false, 0, /*rank=*/4, /*world_size=*/5);
  CATCH_CHECK(to_vector(sampler.indices()) == std::vector<int64_t>{0});
  EpochSampler rank3(2, false, 0, 3, 5);
  CATCH_CHECK(to_vector(rank3.indices()) == std::vector<int64_t>{1});
  CATCH_CHECK_THROWS_AS(EpochSampler(10, true, 0, 2, 2), trainer::Error);
  CATCH_CHECK_THROWS_AS(EpochSampler(10, true, 0, -1, 2), trainer::Error);
  CATCH_CHECK_THROWS_AS(EpochSampler(10, true, 0, 0, 0), trainer::Error);
}
