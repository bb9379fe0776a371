// The TPE sampler (see tpe_sampler.h).
#include "trainer/launch/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

#include "truncated_normal.h"

namespace trainer::launch {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-12;

std::string show(double v) { return config::python_float_repr(v); }

// Optuna's default_weights: n ones up to 25 trials; beyond, the oldest n − 25 ramp from 1/n to 1.
std::vector<double> default_weights(size_t n) {
  std::vector<double> w(n, 1.0);
  if (n < 25) return w;
  const size_t ramp = n - 25;
  for (size_t i = 0; i < ramp; ++i) {
    w[i] = ramp == 1 ? 1.0 / static_cast<double>(n)
                     : 1.0 / static_cast<double>(n) + (1.0 - 1.0 / static_cast<double>(n)) * static_cast<double>(i) /
                                                          static_cast<double>(ramp - 1);
  }
  return w;
}

int64_t gamma(int64_t n) { return std::min<int64_t>((n + 9) / 10, 25); }

// One parameter's kernels in a Parzen estimator (one per observation, then the prior).
struct Kernels {
  const SearchParam* param = nullptr;
  std::vector<std::vector<double>> probabilities;  // categorical: per kernel, per choice
  std::vector<double> mu, sigma;                   // numerical, in the modelled (maybe log) space
  double low = 0, high = 0;                        // numerical: the modelled range (cells' edges)
};

// The kernels' shared mixture weights and each parameter's kernels.
struct Estimator {
  std::vector<double> log_weights;
  std::vector<Kernels> params;
};

double modelled(const SearchParam& p, double x) { return p.log ? std::log(x) : x; }

Kernels numerical_kernels(const SearchParam& p, const std::vector<double>& observations, const TpeOptions& options) {
  Kernels k;
  k.param = &p;
  double low = p.low, high = p.high;
  if (p.step > 0) {
    low -= p.step / 2;
    high += p.step / 2;
  }
  if (p.log) {
    low = std::log(low);
    high = std::log(high);
  }
  k.low = low;
  k.high = high;
  const size_t n = observations.size();
  k.mu.reserve(n + 1);
  for (double x : observations) k.mu.push_back(modelled(p, x));
  // Each kernel's width: the larger gap to its sorted neighbours (the range's ends count as
  // neighbours); without consider_endpoints, the outermost two use their inner gap instead.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return k.mu[a] < k.mu[b]; });
  std::vector<double> sorted(n + 2);
  sorted[0] = low;
  for (size_t i = 0; i < n; ++i) sorted[i + 1] = k.mu[order[i]];
  sorted[n + 1] = high;
  std::vector<double> sorted_sigma(n);
  for (size_t i = 0; i < n; ++i) {
    sorted_sigma[i] = std::max(sorted[i + 1] - sorted[i], sorted[i + 2] - sorted[i + 1]);
  }
  if (!options.consider_endpoints && n + 2 >= 4) {
    sorted_sigma[0] = sorted[2] - sorted[1];
    sorted_sigma[n - 1] = sorted[n] - sorted[n - 1];
  }
  const double max_sigma = high - low;
  const double min_sigma =
      options.consider_magic_clip ? (high - low) / std::min(100.0, 1.0 + static_cast<double>(n + 1)) : kEps;
  k.sigma.assign(n, 0);
  for (size_t i = 0; i < n; ++i) k.sigma[order[i]] = std::clamp(sorted_sigma[i], min_sigma, max_sigma);
  k.mu.push_back(0.5 * (low + high));  // the prior: the whole range
  k.sigma.push_back(high - low);
  return k;
}

Kernels categorical_kernels(const SearchParam& p, const std::vector<double>& observations, const TpeOptions& options) {
  Kernels k;
  k.param = &p;
  const auto choices = static_cast<size_t>(p.choices);
  if (observations.empty()) {
    k.probabilities.assign(1, std::vector<double>(choices, 1.0 / static_cast<double>(choices)));
    return k;
  }
  const size_t kernels = observations.size() + 1;
  k.probabilities.assign(kernels, std::vector<double>(choices, options.prior_weight / static_cast<double>(kernels)));
  for (size_t i = 0; i < observations.size(); ++i) k.probabilities[i][static_cast<size_t>(observations[i])] += 1;
  for (auto& row : k.probabilities) {
    double sum = 0;
    for (double v : row) sum += v;
    if (sum > 0) {
      for (double& v : row) v /= sum;
    }
  }
  return k;
}

Estimator build_estimator(const std::vector<SearchParam>& space, const std::vector<size_t>& params,
                          const std::vector<const SearchTrial*>& trials, const TpeOptions& options) {
  Estimator e;
  std::vector<double> weights = default_weights(trials.size());
  if (trials.empty()) {
    weights = {1.0};
  } else {
    weights.push_back(options.prior_weight);
  }
  double sum = 0;
  for (double w : weights) sum += w;
  for (double w : weights) e.log_weights.push_back(std::log(w / sum));
  for (size_t index : params) {
    const SearchParam& p = space[index];
    std::vector<double> observations;
    observations.reserve(trials.size());
    for (const SearchTrial* t : trials) observations.push_back(t->params[index]);
    e.params.push_back(p.kind == SearchParam::Kind::kCategorical ? categorical_kernels(p, observations, options)
                                                                 : numerical_kernels(p, observations, options));
  }
  return e;
}

// The value of a draw at modelled point x: back from log space, onto the step grid, into range.
double on_grid(const SearchParam& p, double x) {
  if (p.log) x = std::exp(x);
  if (p.step > 0) x = p.low + std::round((x - p.low) / p.step) * p.step;
  return std::clamp(x, p.low, p.high);
}

size_t draw_index(const std::vector<double>& probabilities, double u) {
  double cumulative = 0;
  for (size_t i = 0; i + 1 < probabilities.size(); ++i) {
    cumulative += probabilities[i];
    if (u < cumulative) return i;
  }
  return probabilities.size() - 1;
}

// candidates[c][j]: candidate c's value of the estimator's j-th parameter.
std::vector<std::vector<double>> draw(const Estimator& e, int64_t count, config::SweepRandom& rng) {
  std::vector<double> weights;
  for (double lw : e.log_weights) weights.push_back(std::exp(lw));
  std::vector<std::vector<double>> candidates(static_cast<size_t>(count), std::vector<double>(e.params.size()));
  for (auto& candidate : candidates) {
    const size_t kernel = draw_index(weights, rng.uniform01());
    for (size_t j = 0; j < e.params.size(); ++j) {
      const Kernels& k = e.params[j];
      const double u = rng.uniform01();
      if (k.param->kind == SearchParam::Kind::kCategorical) {
        candidate[j] = static_cast<double>(draw_index(k.probabilities[kernel], u));
        continue;
      }
      const double mu = k.mu[kernel], sigma = k.sigma[kernel];
      const double z = truncated_normal::quantile(u, (k.low - mu) / sigma, (k.high - mu) / sigma);
      candidate[j] = on_grid(*k.param, mu + sigma * z);
    }
  }
  return candidates;
}

double log_sum_exp(const std::vector<double>& terms) {
  double top = -kInf;
  for (double t : terms) top = std::max(top, t);
  if (top == -kInf) return -kInf;
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

double log_density(const Estimator& e, const std::vector<double>& x) {
  std::vector<double> terms = e.log_weights;
  for (size_t j = 0; j < e.params.size(); ++j) {
    const Kernels& k = e.params[j];
    const SearchParam& p = *k.param;
    for (size_t kernel = 0; kernel < terms.size(); ++kernel) {
      if (p.kind == SearchParam::Kind::kCategorical) {
        terms[kernel] += std::log(k.probabilities[kernel][static_cast<size_t>(x[j])]);
        continue;
      }
      const double mu = k.mu[kernel], sigma = k.sigma[kernel];
      const double a = (k.low - mu) / sigma, b = (k.high - mu) / sigma;
      if (p.step > 0) {  // the mass of x's grid cell
        const double left = modelled(p, x[j] - p.step / 2), right = modelled(p, x[j] + p.step / 2);
        terms[kernel] +=
            truncated_normal::log_mass((left - mu) / sigma, (right - mu) / sigma) - truncated_normal::log_mass(a, b);
      } else {
        terms[kernel] += truncated_normal::log_pdf((modelled(p, x[j]) - mu) / sigma, a, b) - std::log(sigma);
      }
    }
  }
  return log_sum_exp(terms);
}

// Pruned trials rank by the last step they reached (later first), then by their value there.
std::pair<double, double> pruned_score(const SearchTrial& t, bool maximize) {
  if (t.intermediate.empty()) return {1, 0};
  const auto& [step, value] = *t.intermediate.rbegin();
  if (std::isnan(value)) return {-static_cast<double>(step), kInf};
  return {-static_cast<double>(step), maximize ? -value : value};
}

void check_range(const std::string& name, double low, double high, double step, bool log) {
  const std::string where = "the search space's parameter '" + name + "'";
  if (!std::isfinite(low) || !std::isfinite(high) || low > high) {
    throw Error(where, "its range [" + show(low) + ", " + show(high) + "] is empty or not finite",
                "give a lower end at most the upper end");
  }
  if (log && low <= 0) {
    throw Error(where, "a log range must lie above 0, and its lower end is " + show(low),
                "give a lower end above 0, or drop tag(log, ...)");
  }
  if (step < 0 || (step == 0 && !std::isfinite(step))) {
    throw Error(where, "its step " + show(step) + " is not above 0", "give a positive step");
  }
  if (log && step > 0) {
    throw Error(where, "a log range cannot also have a step (as in Optuna)", "drop the step or tag(log, ...)");
  }
}

// SplitMix64's finaliser: the seed the generator starts from. std::mt19937_64 seeded with a small
// number directly can start in a poor stretch (seed 1234, lightning-hydra-template's, gives 0.947,
// 0.052, 0.974, 0.946, 0.186, 0.949, ...: four of its first six draws within 0.03 of each other).
uint64_t mixed_seed(uint64_t seed) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

bool SearchParam::single() const {
  if (kind == Kind::kCategorical) return choices == 1;
  return low == high;
}

namespace {

// The highest value of low + k * step not above high, worked out as Optuna does it: in decimal, on
// the numbers as Python prints them, so range(0, 1, 0.3) ends at 0.9 and not 0.8999999999999999;
// high itself when step divides the range exactly.
double stepped_high(double low, double high, double step) {
  auto decimals = [](double v) -> int {
    const std::string text = config::python_float_repr(v);
    if (text.find_first_of("eEn") != std::string::npos) return -1;  // 1e-05, inf, nan: not plain decimals
    const size_t dot = text.find('.');
    return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  };
  const int d = std::max({decimals(low), decimals(high), decimals(step)});
  const double scale = std::pow(10.0, d);
  const double limit = 9007199254740992.0;  // 2^53: integers a double holds exactly
  if (decimals(low) < 0 || decimals(high) < 0 || decimals(step) < 0 || d > 15 ||
      std::max({std::fabs(low), std::fabs(high), step}) * scale >= limit) {
    return low + std::floor((high - low) / step + 1e-9) * step;
  }
  const auto l = static_cast<int64_t>(std::llround(low * scale));
  const auto h = static_cast<int64_t>(std::llround(high * scale));
  const auto s = static_cast<int64_t>(std::llround(step * scale));
  if (s <= 0 || (h - l) % s == 0) return high;
  const int64_t steps = (h - l) / s;  // whole steps: the division truncates on purpose
  return static_cast<double>(l + steps * s) / scale;
}

}  // namespace

SearchParam float_param(std::string name, double low, double high, double step, bool log) {
  check_range(name, low, high, step, log);
  SearchParam p;
  p.name = std::move(name);
  p.kind = SearchParam::Kind::kFloat;
  p.low = low;
  p.high = step > 0 ? stepped_high(low, high, step) : high;
  p.step = step;
  p.log = log;
  return p;
}

SearchParam int_param(std::string name, int64_t low, int64_t high, int64_t step, bool log) {
  if (step < 1) {
    throw Error("the search space's parameter '" + name + "'", "its step " + std::to_string(step) + " is not above 0",
                "give a positive integer step");
  }
  check_range(name, static_cast<double>(low), static_cast<double>(high), 0, log);
  if (log && step != 1) {
    throw Error("the search space's parameter '" + name + "'",
                "a log range of integers must have step 1 (as in Optuna)", "drop the step or tag(log, ...)");
  }
  SearchParam p;
  p.name = std::move(name);
  p.kind = SearchParam::Kind::kInt;
  p.low = static_cast<double>(low);
  const int64_t cells = (high - low) / step;  // the top of the grid, at most high
  p.high = static_cast<double>(low + cells * step);
  p.step = static_cast<double>(step);
  p.log = log;
  return p;
}

SearchParam categorical_param(std::string name, int64_t choices) {
  if (choices < 1) {
    throw Error("the search space's parameter '" + name + "'", "it has no choices", "list at least one value");
  }
  SearchParam p;
  p.name = std::move(name);
  p.kind = SearchParam::Kind::kCategorical;
  p.choices = choices;
  return p;
}

TpeSampler::TpeSampler(std::vector<SearchParam> space, TpeOptions options)
    : space_(std::move(space)), options_(options), rng_(mixed_seed(options.seed)) {
  if (space_.empty()) throw Error("hydra.sweeper.params", "the search space is empty", "name at least one parameter");
  if (options_.n_ei_candidates < 1) {
    throw Error("hydra.sweeper.sampler.n_ei_candidates", "it is " + std::to_string(options_.n_ei_candidates),
                "give at least 1 (Optuna's default is 24)");
  }
  if (options_.n_startup_trials < 0) {
    throw Error("hydra.sweeper.sampler.n_startup_trials", "it is " + std::to_string(options_.n_startup_trials),
                "give 0 or more (Optuna's default is 10)");
  }
  if (!(options_.prior_weight >= 0) || !std::isfinite(options_.prior_weight)) {
    throw Error("hydra.sweeper.sampler.prior_weight", "it is " + show(options_.prior_weight),
                "give a finite weight of 0 or more (Optuna's default is 1.0)");
  }
}

std::vector<double> TpeSampler::random_point() {
  std::vector<double> point;
  point.reserve(space_.size());
  for (const SearchParam& p : space_) {
    const double u = rng_.uniform01();
    if (p.kind == SearchParam::Kind::kCategorical) {
      point.push_back(std::min(std::floor(u * static_cast<double>(p.choices)), static_cast<double>(p.choices - 1)));
      continue;
    }
    double low = p.low, high = p.high;
    if (p.step > 0) {  // each grid point owns the cell around it
      low -= p.step / 2;
      high += p.step / 2;
    }
    if (p.log) {
      low = std::log(low);
      high = std::log(high);
    }
    point.push_back(on_grid(p, low + u * (high - low)));
  }
  return point;
}

std::vector<double> TpeSampler::ask(const std::vector<SearchTrial>& trials) {
  int64_t finished = 0;
  std::vector<const SearchTrial*> used;
  for (const SearchTrial& t : trials) {
    if (t.params.size() != space_.size()) continue;
    const bool complete = t.state == TrialState::kComplete && !std::isnan(t.value);
    if (complete || t.state == TrialState::kPruned) {
      ++finished;
      used.push_back(&t);
    } else if (t.state == TrialState::kRunning && options_.constant_liar) {
      used.push_back(&t);
    }
  }
  if (finished < options_.n_startup_trials) return random_point();

  std::vector<const SearchTrial*> complete, pruned, running;
  for (const SearchTrial* t : used) {
    if (t->state == TrialState::kRunning) {
      running.push_back(t);
    } else if (t->state == TrialState::kComplete) {
      complete.push_back(t);
    } else {
      pruned.push_back(t);
    }
  }
  const bool maximize = options_.maximize;
  std::stable_sort(complete.begin(), complete.end(), [&](const SearchTrial* a, const SearchTrial* b) {
    return maximize ? a->value > b->value : a->value < b->value;
  });
  std::stable_sort(pruned.begin(), pruned.end(), [&](const SearchTrial* a, const SearchTrial* b) {
    return pruned_score(*a, maximize) < pruned_score(*b, maximize);
  });
  auto n_below = static_cast<size_t>(gamma(finished));
  std::vector<const SearchTrial*> below, above;
  for (const auto* group : {&complete, &pruned}) {
    const size_t take = std::min(n_below, group->size());
    below.insert(below.end(), group->begin(), group->begin() + static_cast<std::ptrdiff_t>(take));
    above.insert(above.end(), group->begin() + static_cast<std::ptrdiff_t>(take), group->end());
    n_below -= take;
  }
  above.insert(above.end(), running.begin(), running.end());
  const auto by_number = [](const SearchTrial* a, const SearchTrial* b) { return a->number < b->number; };
  std::sort(below.begin(), below.end(), by_number);
  std::sort(above.begin(), above.end(), by_number);

  std::vector<double> point(space_.size(), 0.0);
  std::vector<size_t> searched;
  for (size_t i = 0; i < space_.size(); ++i) {
    if (space_[i].single()) {
      point[i] = space_[i].kind == SearchParam::Kind::kCategorical ? 0.0 : space_[i].low;
    } else {
      searched.push_back(i);
    }
  }
  if (searched.empty()) return point;
  if (options_.multivariate) {
    const auto values = sample(searched, below, above);
    for (size_t j = 0; j < searched.size(); ++j) point[searched[j]] = values[j];
  } else {
    for (size_t index : searched) point[index] = sample({index}, below, above)[0];
  }
  return point;
}

std::vector<double> TpeSampler::sample(const std::vector<size_t>& params, const std::vector<const SearchTrial*>& below,
                                       const std::vector<const SearchTrial*>& above) {
  const Estimator l = build_estimator(space_, params, below, options_);
  const Estimator g = build_estimator(space_, params, above, options_);
  const auto candidates = draw(l, options_.n_ei_candidates, rng_);
  size_t best = 0;
  double best_score = -kInf;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const double score = log_density(l, candidates[c]) - log_density(g, candidates[c]);
    if (c == 0 || score > best_score) {
      best = c;
      best_score = score;
    }
  }
  return candidates[best];
}

}  // namespace trainer::launch
