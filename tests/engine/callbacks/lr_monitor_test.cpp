// Lightning's LearningRateMonitor: the rates logged at each epoch's start, at each logging step,
// or (logging_interval null) at the interval the scheduler steps at.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/callbacks/lr_monitor.h"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using trainer::engine::LearningRateMonitor;

namespace {

// Counts the rows the monitor logs; the scheduler's interval is `per_step`.
class CountingContext final : public trainer::engine::FitContext {
 public:
  explicit CountingContext(bool per_step) : per_step_(per_step) {}
  int64_t epoch() const override { return 0; }
  int64_t global_step() const override { return 0; }
  int64_t min_epochs() const override { return 0; }
  std::vector<std::pair<std::string, double>> learning_rates() const override {
    return {{"lr-Adam", 0.001}, {"lr-Adam/pg1", 0.01}};
  }
  bool lr_changes_per_step() const override { return per_step_; }
  void log(const trainer::engine::MetricRow& metrics) override { rows.push_back(metrics); }
  void request_stop(const std::string&) override {}

  std::vector<trainer::engine::MetricRow> rows;

 private:
  bool per_step_;
};

// Logged rows after fit start, 2 epochs of 3 logging steps each.
size_t rows_logged(const std::string& interval, bool scheduler_per_step) {
  CountingContext context(scheduler_per_step);
  LearningRateMonitor monitor(interval, "callbacks.lr_monitor.logging_interval");
  monitor.on_fit_start(context);
  for (int epoch = 0; epoch < 2; ++epoch) {
    monitor.on_train_epoch_start(context);
    for (int step = 0; step < 3; ++step) monitor.on_log_step(context);
  }
  for (const auto& row : context.rows) CATCH_CHECK(row == context.learning_rates());
  return context.rows.size();
}

}  // namespace

CATCH_TEST_CASE("epoch logs at each epoch's start, step at each logging step, whatever the scheduler does") {
  CATCH_CHECK(rows_logged("epoch", true) == 2);
  CATCH_CHECK(rows_logged("epoch", false) == 2);
  CATCH_CHECK(rows_logged("step", false) == 6);
  CATCH_CHECK(rows_logged("step", true) == 6);
}

CATCH_TEST_CASE("logging_interval null follows the scheduler's interval") {
  CATCH_CHECK(rows_logged("", false) == 2);
  CATCH_CHECK(rows_logged("", true) == 6);
}

CATCH_TEST_CASE("another interval is an error naming where it came from") {
  try {
    LearningRateMonitor monitor("batch", "callbacks.lr_monitor.logging_interval");
    CATCH_FAIL("no error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK(error.where() == "callbacks.lr_monitor.logging_interval");
    CATCH_CHECK_THAT(error.problem(), Catch::Contains("not 'batch'"));
  }
}
