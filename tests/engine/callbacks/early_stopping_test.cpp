// Lightning's EarlyStopping: patience counted in checks without an improvement by more than
// min_delta, the finite check, the stopping and divergence thresholds, val/* metrics checked only
// where validation ran, and the state a checkpoint carries.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/callbacks/early_stopping.h"

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using trainer::engine::EarlyStopping;
using trainer::engine::EarlyStoppingOptions;

namespace {

// Records what the callback asks of the loop.
class RecordingContext final : public trainer::engine::FitContext {
 public:
  int64_t epoch() const override { return 0; }
  int64_t global_step() const override { return 0; }
  int64_t min_epochs() const override { return 0; }
  std::vector<std::pair<std::string, double>> learning_rates() const override { return {}; }
  void log(const trainer::engine::MetricRow&) override {}
  void request_stop(const std::string& reason) override { stops.push_back(reason); }

  std::vector<std::string> stops;
};

EarlyStoppingOptions options(const std::string& monitor, bool mode_max, int64_t patience) {
  EarlyStoppingOptions o;
  o.monitor = monitor;
  o.mode_max = mode_max;
  o.patience = patience;
  return o;
}

// Feeds `values` of `monitor` as epoch ends that validated; the 1-based epoch of the first stop
// request, or 0 when none came.
int stop_epoch(EarlyStopping& stopping, const std::string& monitor, const std::vector<double>& values,
               RecordingContext& context) {
  for (size_t i = 0; i < values.size(); ++i) {
    stopping.on_epoch_end(context, {{monitor, values[i]}}, true);
    if (!context.stops.empty()) return static_cast<int>(i + 1);
  }
  return 0;
}

}  // namespace

CATCH_TEST_CASE("patience: stop after that many checks without an improvement") {
  RecordingContext context;
  EarlyStopping stopping(options("val/loss", false, 2));
  CATCH_CHECK(stop_epoch(stopping, "val/loss", {1.0, 0.8, 0.9, 0.85, 0.7}, context) == 4);
  CATCH_CHECK(stopping.best() == 0.8);
  CATCH_CHECK(stopping.wait() == 2);
  CATCH_CHECK(context.stops[0] ==
              "Monitored metric val/loss did not improve in the last 2 records. Best score: 0.800. "
              "Signaling "
              "Trainer to stop.");

  RecordingContext max_context;
  EarlyStopping accuracy(options("val/acc", true, 1));
  CATCH_CHECK(stop_epoch(accuracy, "val/acc", {0.5, 0.6, 0.6}, max_context) == 3);  // equal is no improvement
}

CATCH_TEST_CASE("min_delta: an improvement must exceed it, and its sign does not matter") {
  for (double delta : {0.05, -0.05}) {
    CATCH_INFO("min_delta " << delta);
    const std::string yaml =
        "callbacks:\n  early_stopping:\n    monitor: val/acc\n    mode: max\n    patience: 2\n"
        "    min_delta: " +
        std::to_string(delta) + "\n";
    const trainer::config::YamlDocument document = trainer::config::load_yaml_string(yaml, "job.yaml");
    const EarlyStoppingOptions o =
        EarlyStoppingOptions::from_config(trainer::config::ConfigView(document.root).sub("callbacks.early_stopping"));
    CATCH_CHECK(o.min_delta == 0.05);
    RecordingContext context;
    EarlyStopping stopping(o);
    // 0.53 and 0.54 gain less than 0.05 over the best 0.5; 0.6 would, but comes too late.
    CATCH_CHECK(stop_epoch(stopping, "val/acc", {0.5, 0.53, 0.54, 0.6}, context) == 3);
    CATCH_CHECK(stopping.best() == 0.5);
  }
}

CATCH_TEST_CASE("a metric that is not finite stops at once, unless check_finite is off") {
  EarlyStoppingOptions o = options("val/loss", false, 5);
  RecordingContext context;
  EarlyStopping stopping(o);
  CATCH_CHECK(stop_epoch(stopping, "val/loss", {0.9, std::numeric_limits<double>::quiet_NaN()}, context) == 2);
  CATCH_CHECK(
      context.stops[0].rfind("Monitored metric val/loss = nan is not finite. Previous best value was 0.900.", 0) == 0);

  o.check_finite = false;
  RecordingContext lenient;
  EarlyStopping unchecked(o);
  CATCH_CHECK(stop_epoch(unchecked, "val/loss", {0.9, std::numeric_limits<double>::infinity()}, lenient) == 0);
  CATCH_CHECK(unchecked.wait() == 1);
}

CATCH_TEST_CASE(
    "the stopping threshold is reached when passed; the divergence threshold when crossed the "
    "other way") {
  EarlyStoppingOptions o = options("val/acc", true, 100);
  o.stopping_threshold = 0.9;
  RecordingContext reached;
  EarlyStopping good(o);
  CATCH_CHECK(stop_epoch(good, "val/acc", {0.5, 0.9, 0.91}, reached) == 3);  // strictly better than it
  CATCH_CHECK(reached.stops[0].rfind("Stopping threshold reached: val/acc = 0.910000 > 0.900000.", 0) == 0);

  EarlyStoppingOptions d = options("val/loss", false, 100);
  d.divergence_threshold = 5.0;
  RecordingContext diverged;
  EarlyStopping bad(d);
  CATCH_CHECK(stop_epoch(bad, "val/loss", {2.0, 5.0, 6.0}, diverged) == 3);
  CATCH_CHECK(diverged.stops[0].rfind("Divergence threshold reached: val/loss = 6.000000 > 5.000000.", 0) == 0);
}

CATCH_TEST_CASE(
    "a val/* metric is checked where validation ran; a metric never logged is an error naming the "
    "key") {
  RecordingContext context;
  EarlyStopping stopping(options("val/loss", false, 1));
  stopping.on_epoch_end(context, {{"val/loss", 1.0}}, true);
  for (int i = 0; i < 3; ++i) stopping.on_epoch_end(context, {{"train/loss_epoch", 2.0}}, false);
  CATCH_CHECK(context.stops.empty());
  CATCH_CHECK(stopping.wait() == 0);
  // A validation inside an epoch counts as a check too.
  stopping.on_validation_end(context, {{"val/loss", 1.5}});
  CATCH_CHECK(context.stops.size() == 1);

  EarlyStopping watching(options("val/loss", false, 1));
  try {
    watching.on_epoch_end(context, {{"train/loss_epoch", 2.0}, {"val/acc", 0.5}}, true);
    CATCH_FAIL("no error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK(error.where() == "callbacks.early_stopping.monitor");
    CATCH_CHECK_THAT(error.problem(), Catch::Contains("(logged: train/loss_epoch, val/acc)"));
  }
}

CATCH_TEST_CASE("best and wait survive a checkpoint, the untouched best included") {
  EarlyStopping fresh(options("val/acc", true, 3));
  EarlyStopping restored_fresh(options("val/acc", true, 3));
  restored_fresh.load_state(fresh.state());
  CATCH_CHECK(restored_fresh.best() == -std::numeric_limits<double>::infinity());

  RecordingContext context;
  EarlyStopping stopping(options("val/acc", true, 3));
  stop_epoch(stopping, "val/acc", {0.1 + 0.2, 0.25}, context);
  EarlyStopping restored(options("val/acc", true, 3));
  restored.load_state(stopping.state());
  CATCH_CHECK(restored.best() == 0.1 + 0.2);  // all 17 digits
  CATCH_CHECK(restored.wait() == 1);
  // The count goes on where it was: two more checks without an improvement stop the run.
  CATCH_CHECK(stop_epoch(restored, "val/acc", {0.2, 0.2}, context) == 2);

  restored.load_state("garbage");  // an unreadable state leaves the callback as it was
  CATCH_CHECK(restored.wait() == 3);
}
