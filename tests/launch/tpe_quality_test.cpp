// TPE's quality against real Optuna (tests/python/tpe_reference.py, Optuna pinned by
// scripts/setup.sh): on sphere (5-d), Branin, Hartmann-6 and a mix of a categorical, a float, an
// integer and a log-scaled float, run as objectives without training, the median over 20 seeds of
// the best value after 60 trials. Regret is the distance of that best to the known minimum.
// trainer's median regret must be at most kTolerance times Optuna's plus kSlack of the function's
// random-search regret, for the multivariate TPE (Optuna 5's default) and the independent one
// (Hydra's Optuna sweeper's default); and TPE must beat trainer's own random search.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/launch/tpe_sampler.h"

#include "skip_test.h"
#include "test_process.h"

using namespace trainer::launch;
using trainer::testing::command_output;
using trainer::testing::shell_quote;
using trainer::testing::test_python;

namespace {

constexpr int kTrials = 60;
constexpr int kSeeds = 20;
constexpr double kTolerance = 1.5;  // trainer's median regret <= 1.5 x Optuna's ...
constexpr double kSlack = 0.05;     // ... + 5% of random search's median regret

struct Function {
  std::string name;
  std::vector<SearchParam> space;
  std::function<double(const std::vector<double>&)> f;
  double minimum;
};

const double kHartmannA[4][6] = {
    {10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14}, {3, 3.5, 1.7, 10, 17, 8}, {17, 8, 0.05, 10, 0.1, 14}};
const double kHartmannP[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                 {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                 {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                 {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
const double kHartmannAlpha[4] = {1.0, 1.2, 3.0, 3.2};

std::vector<Function> functions() {
  std::vector<Function> out;
  std::vector<SearchParam> sphere_space;
  for (int i = 0; i < 5; ++i) sphere_space.push_back(float_param("x" + std::to_string(i), -5.12, 5.12));
  out.push_back({"sphere", sphere_space,
                 [](const std::vector<double>& x) {
                   double s = 0;
                   for (double v : x) s += v * v;
                   return s;
                 },
                 0.0});
  out.push_back({"branin",
                 {float_param("x1", -5, 10), float_param("x2", 0, 15)},
                 [](const std::vector<double>& x) {
                   const double pi = 3.14159265358979323846, b = 5.1 / (4 * pi * pi), c = 5 / pi;
                   const double t = x[1] - b * x[0] * x[0] + c * x[0] - 6;
                   return t * t + 10 * (1 - 1 / (8 * pi)) * std::cos(x[0]) + 10;
                 },
                 0.397887357729738});
  std::vector<SearchParam> unit;
  for (int i = 0; i < 6; ++i) unit.push_back(float_param("x" + std::to_string(i), 0, 1));
  out.push_back({"hartmann6", unit,
                 [](const std::vector<double>& x) {
                   double total = 0;
                   for (int i = 0; i < 4; ++i) {
                     double s = 0;
                     for (int j = 0; j < 6; ++j) {
                       const double d = x[static_cast<size_t>(j)] - kHartmannP[i][j];
                       s += kHartmannA[i][j] * d * d;
                     }
                     total += kHartmannAlpha[i] * std::exp(-s);
                   }
                   return -total;
                 },
                 -3.32236801141551});
  out.push_back(
      {"mixed",
       {categorical_param("c", 4), float_param("x", -5, 5), int_param("n", 1, 20), float_param("lr", 1e-5, 1, 0, true)},
       [](const std::vector<double>& x) {
         const double offsets[4] = {1.0, 0.0, 2.0, 0.5};
         const double n = (x[2] - 7) / 5, lr = std::log10(x[3]) + 3;
         return offsets[static_cast<size_t>(x[0])] + (x[1] - 1) * (x[1] - 1) + n * n + lr * lr;
       },
       0.0});
  return out;
}

double best_after(const Function& fn, TpeOptions options) {
  TpeSampler sampler(fn.space, options);
  std::vector<SearchTrial> trials;
  double best = INFINITY;
  for (int i = 0; i < kTrials; ++i) {
    SearchTrial t;
    t.number = i;
    t.params = sampler.ask(trials);
    t.value = fn.f(t.params);
    t.state = TrialState::kComplete;
    best = std::min(best, t.value);
    trials.push_back(std::move(t));
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

TEST_CASE("TPE reaches Optuna's median best value on the standard test functions", "[tpe][python]") {
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  if (!trainer::testing::python_has(python, "optuna")) {
    return trainer::testing::skip_test("TPE against Optuna: no TRAINER_TEST_PYTHON with optuna",
                                       trainer::testing::Skip::unexpected_in_ci);
  }
  const auto fns = functions();
  for (bool multivariate : {true, false}) {
    std::string names;
    for (const auto& fn : fns) names += " " + fn.name;
    int status = -1;
    const std::string command =
        shell_quote(python) + " " + shell_quote(TRAINER_SOURCE_DIR "/tests/python/tpe_reference.py") + " " +
        std::to_string(kTrials) + " " + std::to_string(kSeeds) + " " + (multivariate ? "1" : "0") + names + " 2>&1";
    const std::string output = command_output(command, status);
    INFO(output);
    REQUIRE(status == 0);
    std::map<std::string, std::vector<double>> optuna;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string name;
      words >> name;
      double v = 0;
      while (words >> v) optuna[name].push_back(v);
    }
    for (const auto& fn : fns) {
      REQUIRE(optuna[fn.name].size() == static_cast<size_t>(kSeeds));
      std::vector<double> ours, random, theirs;
      for (int seed = 0; seed < kSeeds; ++seed) {
        TpeOptions options;
        options.seed = static_cast<uint64_t>(seed);
        options.multivariate = multivariate;
        ours.push_back(best_after(fn, options) - fn.minimum);
        options.n_startup_trials = kTrials;
        random.push_back(best_after(fn, options) - fn.minimum);
        theirs.push_back(optuna[fn.name][static_cast<size_t>(seed)] - fn.minimum);
      }
      const double ours_median = median(ours), theirs_median = median(theirs), random_median = median(random);
      std::ostringstream report;
      report << (multivariate ? "multivariate" : "independent") << " " << fn.name << ": median regret after " << kTrials
             << " trials over " << kSeeds << " seeds: trainer " << ours_median << ", Optuna " << theirs_median
             << ", random search " << random_median;
      WARN(report.str());
      CHECK(ours_median <= kTolerance * theirs_median + kSlack * random_median);
      CHECK(ours_median < random_median);
    }
  }
}
