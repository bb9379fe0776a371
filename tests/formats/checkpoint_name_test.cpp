// Checkpoint file names from Lightning's filename patterns, and the check the launcher runs first.
#include "trainer/formats/checkpoint_name.h"

#include <catch2/catch.hpp>

using Catch::Contains;
using trainer::formats::check_checkpoint_name;
using trainer::formats::format_checkpoint_name;

TEST_CASE("names fill {epoch} and {step} with their widths and metrics with their float formats") {
  CHECK(format_checkpoint_name("epoch_{epoch:03d}", 7, 120, {}) == "epoch_007");
  CHECK(format_checkpoint_name("e{epoch}-s{step:06d}", 12, 345, {}) == "e12-s000345");
  CHECK(format_checkpoint_name("{epoch}-{val/acc:.4f}", 3, 9, {{"val/acc", 0.91234}}) == "3-0.9123");
  CHECK(format_checkpoint_name("{val/loss:.2e}", 0, 0, {{"val/loss", 0.00123}}) == "1.23e-03");
  CHECK(format_checkpoint_name("{val/loss}", 0, 0, {{"val/loss", 0.25}}) == "0.25");
  CHECK(format_checkpoint_name("{train/loss:.3f}", 0, 0, {}) == "0.000");  // not logged yet: 0, as Lightning
}

TEST_CASE("a pattern is checked before any job: fields, formats, braces and slashes") {
  const std::vector<std::string> metrics = {"val/acc", "val/loss"};
  CHECK(check_checkpoint_name("epoch_{epoch:03d}", metrics) == "");
  CHECK(check_checkpoint_name("{epoch}-{step}-{val/acc:.4f}", metrics) == "");
  CHECK_THAT(check_checkpoint_name("{bogus}", metrics), Contains("{bogus} is not a field"));
  CHECK_THAT(check_checkpoint_name("{epoch", metrics), Contains("without its '}'"));
  CHECK_THAT(check_checkpoint_name("{epoch:.2f}", metrics), Contains("is an int"));
  CHECK_THAT(check_checkpoint_name("{val/acc:03d}", metrics), Contains("is a float"));
  CHECK_THAT(check_checkpoint_name("{val/acc:x}", metrics), Contains("has a format trainer does not read"));
  CHECK_THAT(check_checkpoint_name("runs/{epoch}", metrics), Contains("subdirectory"));
  CHECK_THAT(check_checkpoint_name("", metrics), Contains("empty"));
}
