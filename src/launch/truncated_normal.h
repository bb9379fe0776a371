// The standard normal distribution truncated to [a, b], in log space so that tails far from the
// mean (|a| up to a few hundred) keep their precision: what the Parzen estimators of the TPE
// sampler (tpe_sampler.h) sample from and score with.
#pragma once

namespace trainer::launch::truncated_normal {

// log Φ(x), Φ the standard normal CDF; accurate for every finite x.
double log_ndtr(double x);

// log(Φ(b) − Φ(a)) for a <= b; −inf when a == b.
double log_mass(double a, double b);

// The x with log Φ(x) = y, for y <= 0 (−inf for y = −inf, +inf for y = 0).
double ndtri_exp(double y);

// The u-quantile (u in [0, 1)) of the standard normal truncated to [a, b], a < b: a draw when u is
// uniform. The result lies in [a, b].
double quantile(double u, double a, double b);

// log of the density at z of the standard normal truncated to [a, b]: −inf outside.
double log_pdf(double z, double a, double b);

}  // namespace trainer::launch::truncated_normal
