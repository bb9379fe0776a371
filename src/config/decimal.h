// Internal to the sweep expansion: Python's decimal arithmetic, as far as Hydra's float range()
// uses it. Hydra steps a float range in Python's decimal module: Decimal(start) and Decimal(step)
// are the exact values of the doubles, and every `start += step` rounds to 28 significant digits
// (half even). Exact arithmetic is not enough: 3 * 3.3 lands exactly between two doubles, and
// only the 28-digit rounding decides that range(0,10,3.3) ends with 9.9.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainer::config::detail {

struct Decimal {
  bool negative = false;
  std::vector<uint8_t> digits;  // little-endian decimal digits; empty means zero
  int exponent = 0;             // value = digits * 10^exponent

  // Decimal(float): the exact value of the double.
  static Decimal exact(double value);
  // Decimal(int) from an int's decimal text ("-123"), exact at any size.
  static Decimal of_int(const std::string& text);

  // -1, 0 or 1, by magnitude only and by value.
  static int compare_abs(const Decimal& a, const Decimal& b);
  static int compare(const Decimal& a, const Decimal& b);

  // a + b rounded to 28 significant digits, half even (Python's default decimal context).
  static Decimal add(const Decimal& a, const Decimal& b);

  // float(Decimal): the nearest double; beyond the double range +-inf or +-0.
  double to_double() const;

  // The steps the above are made of: |digits| *= factor; zero digits dropped from both ends
  // (into the exponent); rounded to 28 significant digits, half even.
  void multiply(uint64_t factor);
  void trim();
  void round_to_precision();
};

}  // namespace trainer::config::detail
