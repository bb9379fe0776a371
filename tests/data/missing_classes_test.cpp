// Labels counted as the largest + 1 classes with some never seen: 1-based labels, skipped values.
#include "trainer/data/missing_classes.h"

#include <catch2/catch.hpp>

TEST_CASE("classes without a sample are named, with the count of outputs that never train") {
  using trainer::data::missing_classes_warning;
  CHECK_FALSE(missing_classes_warning("data.targets", "y.npy", {true, true, true}).has_value());
  // Labels 1..3, as R users write them: class 0 has none.
  const auto one_based = missing_classes_warning("data.target", "iris.csv", {false, true, true, true});
  REQUIRE(one_based.has_value());
  CHECK(*one_based ==
        "data.target: the labels of iris.csv run up to 3, but class 0 has no sample, so the model gets 4 outputs "
        "(the largest label + 1) of which 1 never trains. If the labels start at 1 or skip values, map them to 0 .. "
        "K-1 (numpy: numpy.unique(labels, return_inverse=True)[1]); if those classes are meant, set "
        "data.num_classes to say so");
  // A stray 12 among 0..9: three classes missing, listed.
  std::vector<bool> stray(13, true);
  stray[10] = stray[11] = false;
  const auto gaps = missing_classes_warning("data.targets", "y.npy", stray);
  REQUIRE(gaps.has_value());
  CHECK(gaps->find("but classes 10, 11 have no sample, so the model gets 13 outputs") != std::string::npos);
  CHECK(gaps->find("of which 2 never train.") != std::string::npos);
  std::vector<bool> sparse(20, false);
  sparse[19] = true;
  CHECK(missing_classes_warning("k", "p", sparse)->find("0, 1, 2, 3, 4, ... (19 in all)") != std::string::npos);
}
