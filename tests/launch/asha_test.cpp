// ASHA's rung decisions, worked by hand from Ray Tune's definition (numpy linear percentiles).
#include "trainer/launch/asha.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/builtin_hydra_configs.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::Node;
using trainer::launch::AshaOptions;
using trainer::launch::AshaScheduler;
using Decision = AshaScheduler::Decision;

AshaOptions options(std::string mode, int64_t max_t, int64_t grace, double rf) {
  AshaOptions o;
  o.metric = "val/acc";
  o.mode = std::move(mode);
  o.max_t = max_t;
  o.grace_period = grace;
  o.reduction_factor = rf;
  return o;
}

Node builtin_asha() {
  for (const auto& [name, text] : trainer::config::builtin_hydra_configs()) {
    if (name == "hydra/sweeper/asha") return trainer::config::load_yaml_string(text, std::string(name)).root;
  }
  FAIL("no built-in hydra/sweeper/asha");
  return Node();
}

Node job_config(const std::string& monitor, const std::string& mode) {
  return trainer::config::load_yaml_string(
             "callbacks:\n  model_checkpoint:\n    monitor: " + monitor + "\n    mode: " + mode + "\n", "job")
      .root;
}

template <typename F>
void expect_error(F&& f, const std::string& where) {
  try {
    f();
    FAIL("accepted; expected an error at " << where);
  } catch (const trainer::Error& e) {
    CHECK(e.where() == where);
    CHECK_FALSE(e.fix().empty());
  }
}

}  // namespace

TEST_CASE("rungs sit at grace_period * reduction_factor^k up to max_t") {
  CHECK(AshaScheduler(options("max", 16, 1, 4)).milestones() == std::vector<double>{1, 4, 16});
  CHECK(AshaScheduler(options("max", 15, 1, 4)).milestones() == std::vector<double>{1, 4});
  CHECK(AshaScheduler(options("max", 20, 2, 3)).milestones() == std::vector<double>{2, 6, 18});
  CHECK(AshaScheduler(options("max", 8, 1, 2)).milestones() == std::vector<double>{1, 2, 4, 8});
  CHECK(AshaScheduler(options("max", 3, 3, 2)).milestones() == std::vector<double>{3});
}

TEST_CASE("a job is cut at a rung when it is not in the top 1/reduction_factor recorded there") {
  // reduction_factor 2: the cut is the median of what the rung has recorded so far.
  AshaScheduler asha(options("max", 8, 1, 2));
  CHECK(asha.on_result(0, 1, 0.5) == Decision::kContinue);  // first at the rung: nothing to beat
  CHECK(asha.on_result(1, 1, 0.3) == Decision::kStop);      // below 0.5
  CHECK(asha.on_result(2, 1, 0.7) == Decision::kContinue);  // above median(0.5, 0.3) = 0.4
  CHECK(asha.on_result(3, 1, 0.45) == Decision::kStop);     // below median(0.3, 0.5, 0.7) = 0.5
  CHECK(asha.recorded_at(0) == 4);                          // stopped jobs are recorded too
  // Between rungs nothing is judged or recorded.
  CHECK(asha.on_result(0, 2 - 1, 0.1) == Decision::kContinue);  // already recorded at rung 1
  CHECK(asha.recorded_at(0) == 4);
  // Rung 2: job 0 first (goes on), job 2 better, then a worse one is cut.
  CHECK(asha.on_result(0, 2, 0.6) == Decision::kContinue);
  CHECK(asha.on_result(2, 2, 0.8) == Decision::kContinue);  // above 0.6
  CHECK(asha.on_result(2, 3, 0.1) == Decision::kContinue);  // epoch 3 is no rung
  CHECK(asha.recorded_at(1) == 2);
  CHECK(asha.recorded_at(2) == 0);
}

TEST_CASE("reduction_factor 4 keeps the top quarter: the cut is the 75th percentile, interpolated") {
  AshaScheduler asha(options("max", 100, 1, 4));
  for (int job = 0; job < 4; ++job) asha.on_result(job, 1, job + 1.0);  // 1, 2, 3, 4 recorded
  // numpy.percentile([1, 2, 3, 4], 75) = 3.25
  CHECK(asha.on_result(10, 1, 3.2) == Decision::kStop);
  // now [1, 2, 3, 4, 3.2]: sorted 1, 2, 3, 3.2, 4 -> rank 3 -> 3.2
  CHECK(asha.on_result(11, 1, 3.19) == Decision::kStop);
  // [1, 2, 3, 3.19, 3.2, 4]: rank 3.75 -> 3.19 + 0.75 * 0.01 = 3.1975
  CHECK(asha.on_result(12, 1, 3.197) == Decision::kStop);
  // [1, 2, 3, 3.19, 3.197, 3.2, 4]: rank 4.5 -> 3.197 + 0.5 * 0.003 = 3.1985
  CHECK(asha.on_result(13, 1, 3.199) == Decision::kContinue);
}

TEST_CASE("mode min keeps the lowest values") {
  AshaScheduler asha(options("min", 16, 1, 2));
  CHECK(asha.on_result(0, 1, 0.9) == Decision::kContinue);
  CHECK(asha.on_result(1, 1, 0.2) == Decision::kContinue);  // lower loss: better
  CHECK(asha.on_result(2, 1, 2.5) == Decision::kStop);      // loss above the median 0.55
  CHECK(asha.on_result(3, 1, 0.5) == Decision::kContinue);  // below median(0.9, 0.2, 2.5) = 0.9
}

TEST_CASE("a job that skips rungs is judged at the highest one it passed") {
  AshaScheduler asha(options("max", 16, 1, 4));  // rungs 1, 4, 16
  CHECK(asha.on_result(0, 5, 0.9) == Decision::kContinue);
  CHECK(asha.recorded_at(0) == 0);
  CHECK(asha.recorded_at(1) == 1);
  CHECK(asha.on_result(1, 4, 0.1) == Decision::kStop);
  CHECK(asha.recorded_at(1) == 2);
}

TEST_CASE("max_t completes a job; a NaN metric stops it") {
  AshaScheduler asha(options("max", 4, 1, 4));  // rungs 1, 4
  CHECK(asha.on_result(0, 1, 0.5) == Decision::kContinue);
  CHECK(asha.on_result(0, 3, 0.6) == Decision::kContinue);
  CHECK(asha.on_result(0, 4, 0.7) == Decision::kComplete);  // first at rung 4, and at max_t
  CHECK(asha.on_result(1, 1, 0.6) == Decision::kContinue);
  CHECK(asha.on_result(1, 4, 0.1) == Decision::kStop);  // cut beats complete
  CHECK(asha.on_result(2, 1, std::numeric_limits<double>::quiet_NaN()) == Decision::kStop);
  CHECK(asha.recorded_at(0) == 2);  // NaN not recorded
  CHECK(std::string(trainer::launch::decision_name(Decision::kComplete)) == "complete");
}

TEST_CASE("ASHA halves the epochs spent on a population where half the jobs are clearly worse") {
  // 8 jobs, 8 epochs each in a grid: 64 epochs. Jobs 0-3 learn (metric rises), 4-7 do not.
  // They run two at a time in job order, so later rungs see earlier results.
  AshaScheduler asha(options("max", 8, 1, 2));
  auto metric = [](int job, int epoch) { return job < 4 ? 0.5 + 0.05 * epoch + 0.01 * job : 0.1; };
  int spent = 0;
  std::vector<bool> stopped(8, false);
  for (int job = 0; job < 8; ++job) {
    for (int epoch = 1; epoch <= 8; ++epoch) {
      ++spent;
      const Decision d = asha.on_result(job, epoch, metric(job, epoch));
      if (d == Decision::kStop) {
        stopped[job] = true;
        break;
      }
      if (d == Decision::kComplete) break;
    }
  }
  for (int job = 4; job < 8; ++job) CHECK(stopped[job]);
  CHECK_FALSE(stopped[3]);  // the best job runs to the end
  CHECK(spent < 64);
}

TEST_CASE("hydra/sweeper=asha settings: metric and mode default to the monitored metric") {
  Node sweeper = builtin_asha();
  AshaOptions o = trainer::launch::asha_options(sweeper, job_config("val/acc", "max"));
  CHECK(o.metric == "val/acc");
  CHECK(o.mode == "max");
  CHECK(o.max_t == 100);
  CHECK(o.grace_period == 1);
  CHECK(o.reduction_factor == 4);

  sweeper.set("metric", Node::string("val/loss"));
  o = trainer::launch::asha_options(sweeper, job_config("val/acc", "max"));
  CHECK(o.metric == "val/loss");
  CHECK(o.mode == "min");  // a metric of one's own does not take the monitor's mode
  sweeper.set("mode", Node::string("max"));
  sweeper.set("max_t", Node::integer(9));
  sweeper.set("grace_period", Node::integer(3));
  sweeper.set("reduction_factor", Node::integer(3));
  o = trainer::launch::asha_options(sweeper, Node::map());
  CHECK(o.mode == "max");
  CHECK(AshaScheduler(o).milestones() == std::vector<double>{3, 9});
}

TEST_CASE("bad ASHA settings are refused naming the setting") {
  const Node job = job_config("val/acc", "max");
  auto with = [](const char* key, Node value) {
    Node sweeper = builtin_asha();
    sweeper.set(key, std::move(value));
    return sweeper;
  };
  expect_error([&] { trainer::launch::asha_options(with("reduction_factor", Node::integer(1)), job); },
               "hydra.sweeper.reduction_factor");
  expect_error([&] { trainer::launch::asha_options(with("mode", Node::string("up")), job); }, "hydra.sweeper.mode");
  expect_error([&] { trainer::launch::asha_options(with("max_t", Node::integer(0)), job); }, "hydra.sweeper.max_t");
  expect_error([&] { trainer::launch::asha_options(with("grace_period", Node::floating(1.5)), job); },
               "hydra.sweeper.grace_period");
  expect_error(
      [&] {
        Node sweeper = with("grace_period", Node::integer(8));
        sweeper.set("max_t", Node::integer(4));
        trainer::launch::asha_options(sweeper, job);
      },
      "hydra.sweeper.max_t");
  expect_error([&] { trainer::launch::asha_options(builtin_asha(), Node::map()); }, "hydra.sweeper.metric");
}
