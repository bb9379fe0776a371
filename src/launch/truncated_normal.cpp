#include "truncated_normal.h"

#include <cmath>
#include <limits>

namespace trainer::launch::truncated_normal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

double ndtr(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// log(exp(p) - exp(q)) for p >= q.
double log_diff(double p, double q) { return p + std::log1p(-std::exp(q - p)); }

double log_add(double p, double q) {
  if (p == -kInf) return q;
  if (q == -kInf) return p;
  const double hi = p > q ? p : q, lo = p > q ? q : p;
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace

double log_ndtr(double x) {
  if (x > 6) return std::log1p(-ndtr(-x));  // Φ(x) near 1: log(1 − Φ(−x))
  if (x > -20) return std::log(ndtr(x));
  // Below −20 erfc nears the bottom of the double range: the asymptotic series of Mills' ratio,
  // whose next term (945/x^10) is below 1e-10 of the sum there.
  const double r = 1 / (x * x);
  const double series = 1 - r * (1 - r * (3 - r * (15 - r * 105)));
  return -0.5 * x * x - std::log(-x) - kLogSqrt2Pi + std::log(series);
}

double log_mass(double a, double b) {
  if (!(a < b)) return -kInf;
  if (b <= 0) return log_diff(log_ndtr(b), log_ndtr(a));
  if (a >= 0) return log_diff(log_ndtr(-a), log_ndtr(-b));
  return std::log1p(-ndtr(a) - ndtr(-b));  // a < 0 < b: both tails are at most 1/2
}

double ndtri_exp(double y) {
  if (std::isnan(y)) return y;
  if (y == -kInf) return -kInf;
  if (y >= 0) return kInf;
  // log Φ is increasing and concave: from any start, Newton's first step lands at or left of the
  // root and the next ones climb to it monotonically, quadratically once near.
  double x = y < -0.7 ? -std::sqrt(-2 * y) : std::sqrt(-2 * std::log(-std::expm1(y)));
  for (int i = 0; i < 200; ++i) {
    const double lp = log_ndtr(x);
    const double slope = std::exp(-0.5 * x * x - kLogSqrt2Pi - lp);  // φ(x) / Φ(x)
    if (!(slope > 0) || !std::isfinite(slope)) break;
    const double step = (lp - y) / slope;
    x -= step;
    if (std::abs(step) <= 1e-15 * (1 + std::abs(x))) break;
  }
  return x;
}

double quantile(double u, double a, double b) {
  if (a >= 0) return -quantile(1 - u, -b, -a);  // the right tail, mirrored, keeps its precision
  const double lu = u > 0 ? std::log(u) : -kInf;
  const double x = ndtri_exp(log_add(log_ndtr(a), lu + log_mass(a, b)));
  return x < a ? a : (x > b ? b : x);
}

double log_pdf(double z, double a, double b) {
  if (z < a || z > b) return -kInf;
  return -0.5 * z * z - kLogSqrt2Pi - log_mass(a, b);
}

}  // namespace trainer::launch::truncated_normal
