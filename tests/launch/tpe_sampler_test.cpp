// The TPE sampler: its truncated-normal arithmetic (expected values from Python's math.erfc), its
// draws (on the grid, in range, reproducible, resumable), the trials it learns from, and that it
// concentrates where the objective is good. Its quality against Optuna: tpe_quality_test.cpp.
#include "trainer/launch/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

#include "../../src/launch/truncated_normal.h"

using namespace trainer::launch;
namespace tn = trainer::launch::truncated_normal;
using Catch::Matchers::Contains;

namespace {

SearchTrial complete(int64_t number, std::vector<double> params, double value) {
  SearchTrial t;
  t.number = number;
  t.state = TrialState::kComplete;
  t.params = std::move(params);
  t.value = value;
  return t;
}

// Runs `count` trials of a one-parameter objective, sequentially; returns the points asked.
template <typename F>
std::vector<double> run_1d(TpeSampler& sampler, int count, F objective) {
  std::vector<SearchTrial> trials;
  std::vector<double> asked;
  for (int i = 0; i < count; ++i) {
    const auto point = sampler.ask(trials);
    asked.push_back(point[0]);
    trials.push_back(complete(i, point, objective(point[0])));
  }
  return asked;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

TEST_CASE("log Φ matches math.erfc and keeps its precision in both tails", "[tpe]") {
  CHECK(tn::log_ndtr(0) == Approx(-0.6931471805599453).epsilon(1e-14));
  CHECK(tn::log_ndtr(-1) == Approx(-1.8410216450092634).epsilon(1e-14));
  CHECK(tn::log_ndtr(-5) == Approx(-15.064998393988724).epsilon(1e-13));
  CHECK(tn::log_ndtr(-19.9) == Approx(-201.9171677073326).epsilon(1e-12));
  CHECK(tn::log_ndtr(-20.1) == Approx(-205.92711840194823).epsilon(1e-12));  // the series side
  CHECK(tn::log_ndtr(-30) == Approx(-454.3212439563431).epsilon(1e-12));
  CHECK(tn::log_ndtr(3) == Approx(-0.0013508099647482027).epsilon(1e-12));
  CHECK(tn::log_ndtr(6.5) == Approx(-4.016000583939766e-11).epsilon(1e-9));  // math.log1p(-Φ(-6.5))
  CHECK(tn::log_ndtr(10) == Approx(-7.619853024160593e-24).epsilon(1e-9));
  CHECK(std::isfinite(tn::log_ndtr(-300)));
}

TEST_CASE("the inverse of log Φ and the truncated quantile", "[tpe]") {
  CHECK(tn::ndtri_exp(std::log(0.975)) == Approx(1.959963984540054).epsilon(1e-12));
  CHECK(tn::ndtri_exp(std::log(0.5)) == Approx(0).margin(1e-14));
  for (double x : {-250.0, -40.0, -20.0, -3.0, 0.5, 4.0, 8.0}) {
    CHECK(tn::ndtri_exp(tn::log_ndtr(x)) == Approx(x).epsilon(1e-10));
  }
  CHECK(tn::quantile(0.5, -1, 1) == Approx(0).margin(1e-12));
  CHECK(tn::quantile(0, -1, 1) == Approx(-1));
  // Far in a tail the draw stays inside and its median is near a + ln 2 / a (the exponential limit).
  const double far = tn::quantile(0.5, 50, 51);
  CHECK(far >= 50);
  CHECK(far <= 51);
  CHECK(far == Approx(50 + std::log(2.0) / 50).epsilon(1e-3));
  const double left = tn::quantile(0.5, -51, -50);
  CHECK(left == Approx(-far).epsilon(1e-9));
  // The mass of [−1.96, 1.96] and a density that integrates to 1 (midpoint rule).
  CHECK(std::exp(tn::log_mass(-1.959963984540054, 1.959963984540054)) == Approx(0.95).epsilon(1e-12));
  double integral = 0;
  const int steps = 20000;
  for (int i = 0; i < steps; ++i)
    integral += std::exp(tn::log_pdf(-0.5 + (i + 0.5) * 3.5 / steps, -0.5, 3.0)) * 3.5 / steps;
  CHECK(integral == Approx(1).epsilon(1e-6));
  CHECK(tn::log_pdf(3.5, -0.5, 3.0) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("every draw lies in its range, on its grid, and the same seed draws the same", "[tpe]") {
  const std::vector<SearchParam> space = {float_param("lr", 1e-5, 1, 0, true), int_param("width", 16, 250, 16),
                                          int_param("depth", 1, 64, 1, true), categorical_param("act", 3),
                                          float_param("dropout", 0, 0.5, 0.1)};
  CHECK(space[1].high == 240);  // moved down onto the grid, as Optuna does
  CHECK(space[4].high == Approx(0.5));
  for (bool multivariate : {true, false}) {
    TpeOptions options;
    options.seed = 7;
    options.multivariate = multivariate;
    TpeSampler a(space, options), b(space, options);
    std::vector<SearchTrial> trials;
    for (int i = 0; i < 60; ++i) {
      const auto p = a.ask(trials);
      CHECK(p == b.ask(trials));
      REQUIRE(p.size() == 5);
      CHECK(p[0] >= 1e-5);
      CHECK(p[0] <= 1);
      CHECK(p[1] >= 16);
      CHECK(p[1] <= 240);
      CHECK(std::fmod(p[1] - 16, 16) == 0);
      CHECK(p[2] >= 1);
      CHECK(p[2] <= 64);
      CHECK(p[2] == std::round(p[2]));
      CHECK((p[3] == 0 || p[3] == 1 || p[3] == 2));
      CHECK(p[4] >= 0);
      CHECK(p[4] <= 0.5 + 1e-12);
      CHECK(std::abs(p[4] * 10 - std::round(p[4] * 10)) < 1e-9);
      trials.push_back(complete(i, p, std::abs(std::log10(p[0]) + 3) + p[1] / 100 + p[3]));
    }
  }
}

TEST_CASE("a restored generator state continues the same search", "[tpe]") {
  TpeOptions options;
  options.seed = 3;
  options.n_startup_trials = 4;
  const std::vector<SearchParam> space = {float_param("x", -5, 5), int_param("n", 0, 9)};
  TpeSampler first(space, options);
  std::vector<SearchTrial> trials;
  for (int i = 0; i < 8; ++i) {
    const auto p = first.ask(trials);
    trials.push_back(complete(i, p, p[0] * p[0] + p[1]));
  }
  const std::string state = first.rng_state();
  const auto next = first.ask(trials);
  TpeOptions other = options;
  other.seed = 99;
  TpeSampler resumed(space, other);
  resumed.set_rng_state(state);
  CHECK(resumed.ask(trials) == next);
  CHECK_THROWS_WITH(resumed.set_rng_state("not a state"), Contains("malformed"));
}

TEST_CASE("start-up trials are random; after them TPE concentrates on the good region", "[tpe]") {
  TpeOptions options;
  options.seed = 11;
  TpeSampler sampler({float_param("x", -10, 10)}, options);
  TpeSampler reference({float_param("x", -10, 10)}, options);
  const auto asked = run_1d(sampler, 80, [](double x) { return (x - 3.7) * (x - 3.7); });
  for (int i = 0; i < 10; ++i) CHECK(asked[static_cast<size_t>(i)] == reference.random_point()[0]);
  std::vector<double> late;
  for (size_t i = 40; i < asked.size(); ++i) late.push_back(std::abs(asked[i] - 3.7));
  // Uniform draws on [−10, 10] are a median 5.2 away from 3.7; Optuna 5's late draws are 1.0-1.3
  // away (seeds 0-9), this seed's 1.08.
  CHECK(median(late) < 2);
}

TEST_CASE("direction maximize looks for the largest value", "[tpe]") {
  TpeOptions options;
  options.seed = 5;
  options.maximize = true;
  TpeSampler sampler({float_param("x", 0, 100)}, options);
  const auto asked = run_1d(sampler, 60, [](double x) { return -std::abs(x - 80); });
  std::vector<double> late(asked.begin() + 30, asked.end());
  for (double& x : late) x = std::abs(x - 80);
  CHECK(median(late) < 10);  // uniform draws: 22 away; Optuna 5's late ones 6.5-8.0 (seeds 0-9)
}

TEST_CASE("categorical and integer parameters converge too", "[tpe]") {
  TpeOptions options;
  options.seed = 2;
  TpeSampler sampler({categorical_param("c", 5), int_param("n", 1, 100, 1, true)}, options);
  std::vector<SearchTrial> trials;
  int good = 0;
  for (int i = 0; i < 70; ++i) {
    const auto p = sampler.ask(trials);
    if (i >= 35 && p[0] == 3 && std::abs(p[1] - 40) <= 8) ++good;
    trials.push_back(complete(i, p, (p[0] == 3 ? 0 : 1) + std::abs(std::log(p[1] / 40))));
  }
  CHECK(good >= 5);  // of 35: random search hits this cell 0.6 times; Optuna 5 6-9 times (seeds 0-9)
}

TEST_CASE("pruned trials rank by the step they reached, then by their value there", "[tpe]") {
  // No complete trials: the pruned ones that got furthest are "below", so the search goes there.
  TpeOptions options;
  options.seed = 4;
  options.n_startup_trials = 0;
  TpeSampler sampler({float_param("x", 0, 10)}, options);
  std::vector<SearchTrial> trials;
  for (int i = 0; i < 40; ++i) {
    SearchTrial t;
    t.number = i;
    t.state = TrialState::kPruned;
    t.params = {i < 4 ? 8.0 + 0.1 * i : 0.25 * (i - 4) * (i % 2 ? 0.5 : 0.55)};
    t.intermediate[1] = 0.5;
    if (i < 4) t.intermediate[5] = 0.9;  // these reached step 5
    trials.push_back(t);
  }
  std::vector<double> asked;
  for (int i = 0; i < 20; ++i) asked.push_back(sampler.ask(trials)[0]);
  CHECK(median(asked) > 7);
}

TEST_CASE("failed trials are not learnt from; running ones only with constant_liar", "[tpe]") {
  const std::vector<SearchParam> space = {float_param("x", -5, 5), float_param("y", -5, 5)};
  std::vector<SearchTrial> finished;
  TpeOptions options;
  options.seed = 9;
  options.constant_liar = false;
  TpeSampler warmup(space, options);
  for (int i = 0; i < 15; ++i) {
    const auto p = warmup.ask(finished);
    finished.push_back(complete(i, p, p[0] * p[0] + p[1] * p[1]));
  }
  TpeSampler probe(space, options);
  const auto chosen = probe.ask(finished);
  // Failed trials, and running ones at the very point TPE would choose next.
  auto with_others = finished;
  for (int i = 0; i < 10; ++i) {
    SearchTrial other = complete(15 + i, i % 2 ? chosen : std::vector<double>{1, 1}, 0);
    other.state = i % 2 ? TrialState::kRunning : TrialState::kFailed;
    with_others.push_back(other);
  }
  TpeSampler a(space, options), b(space, options);
  CHECK(a.ask(finished) == chosen);
  CHECK(b.ask(with_others) == chosen);
  options.constant_liar = true;
  TpeSampler c(space, options), d(space, options);
  CHECK(c.ask(finished) == chosen);
  CHECK(d.ask(with_others) != chosen);  // the running trials join "above" and make that point poor
}

TEST_CASE("a single-valued parameter is returned as is", "[tpe]") {
  TpeOptions options;
  options.n_startup_trials = 1;
  TpeSampler sampler({float_param("fixed", 2.5, 2.5), categorical_param("only", 1), float_param("x", 0, 1)}, options);
  std::vector<SearchTrial> trials;
  for (int i = 0; i < 5; ++i) {
    const auto p = sampler.ask(trials);
    CHECK(p[0] == 2.5);
    CHECK(p[1] == 0);
    trials.push_back(complete(i, p, p[2]));
  }
}

TEST_CASE("a space or options out of range are errors that name the key", "[tpe]") {
  CHECK_THROWS_WITH(float_param("lr", 1, 0.5), Contains("'lr'") && Contains("empty"));
  CHECK_THROWS_WITH(float_param("lr", 0, 1, 0, true), Contains("above 0"));
  CHECK_THROWS_WITH(float_param("lr", 0.1, 1, 0.1, true), Contains("cannot also have a step"));
  CHECK_THROWS_WITH(int_param("n", 1, 8, 0), Contains("'n'") && Contains("step"));
  CHECK_THROWS_WITH(int_param("n", 1, 8, 2, true), Contains("step 1"));
  CHECK_THROWS_WITH(categorical_param("c", 0), Contains("no choices"));
  CHECK_THROWS_WITH(TpeSampler({}, TpeOptions{}), Contains("empty"));
  TpeOptions bad;
  bad.n_ei_candidates = 0;
  CHECK_THROWS_WITH(TpeSampler({float_param("x", 0, 1)}, bad), Contains("n_ei_candidates"));
  bad = TpeOptions{};
  bad.prior_weight = -1;
  CHECK_THROWS_WITH(TpeSampler({float_param("x", 0, 1)}, bad), Contains("prior_weight"));
}
