// The metric names of each task and the monitor a regression falls back to.
#include "trainer/options/task_metrics.h"

#include <catch2/catch.hpp>

using namespace trainer::options;

TEST_CASE("a regression's metrics are mae, rmse and r2 of any split, per epoch or not") {
  for (const char* name : {"val/mae", "val/rmse", "val/r2", "train/mae", "train/rmse_epoch", "test/r2"}) {
    CHECK(is_regression_metric(name));
  }
  for (const char* name : {"val/acc", "val/loss", "train/acc_epoch", "r2", "val/r2x", "val/rmse_", "val/"}) {
    CHECK_FALSE(is_regression_metric(name));
  }
}

TEST_CASE("under a regression an accuracy monitor becomes the loss of the same split; others stand") {
  CHECK(regression_monitor_for("val/acc") == "val/loss");
  CHECK(regression_monitor_for("train/acc") == "train/loss");
  CHECK(regression_monitor_for("train/acc_epoch") == "train/loss_epoch");
  CHECK(regression_monitor_for("val/loss").empty());
  CHECK(regression_monitor_for("val/rmse").empty());
  CHECK(regression_monitor_for("acc").empty());
}
