// Python's decimal arithmetic for Hydra's float range() (see decimal.h).
#include "decimal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

namespace trainer::config::detail {

void Decimal::multiply(uint64_t factor) {
  uint64_t carry = 0;
  for (uint8_t& d : digits) {
    uint64_t x = d * factor + carry;
    d = static_cast<uint8_t>(x % 10);
    carry = x / 10;
  }
  while (carry) {
    digits.push_back(static_cast<uint8_t>(carry % 10));
    carry /= 10;
  }
}

void Decimal::trim() {
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  size_t zeros = 0;
  while (zeros < digits.size() && digits[zeros] == 0) ++zeros;
  digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(zeros));
  exponent += static_cast<int>(zeros);
  if (digits.empty()) exponent = 0;
}

Decimal Decimal::exact(double value) {
  Decimal out;
  out.negative = std::signbit(value);
  value = std::fabs(value);
  if (value == 0) return out;
  int e = 0;
  double fraction = std::frexp(value, &e);
  uint64_t m = static_cast<uint64_t>(std::ldexp(fraction, 53));
  e -= 53;
  while (m % 2 == 0 && e < 0) {
    m /= 2;
    ++e;
  }
  for (; m; m /= 10) out.digits.push_back(static_cast<uint8_t>(m % 10));
  for (; e > 0; e -= std::min(e, 30)) out.multiply(uint64_t{1} << std::min(e, 30));
  for (int k = -e; k > 0; k -= std::min(k, 13)) {
    uint64_t power = 1;
    for (int j = 0; j < std::min(k, 13); ++j) power *= 5;
    out.multiply(power);
  }
  out.exponent = e < 0 ? e : 0;
  out.trim();
  return out;
}

Decimal Decimal::of_int(const std::string& text) {
  Decimal out;
  out.negative = text[0] == '-';
  for (size_t k = text.size(); k-- > (out.negative ? 1 : 0);) {
    out.digits.push_back(static_cast<uint8_t>(text[k] - '0'));
  }
  out.trim();
  return out;
}

int Decimal::compare_abs(const Decimal& a, const Decimal& b) {
  if (a.digits.empty() || b.digits.empty()) {
    return a.digits.empty() ? (b.digits.empty() ? 0 : -1) : 1;
  }
  int top_a = static_cast<int>(a.digits.size()) + a.exponent;
  int top_b = static_cast<int>(b.digits.size()) + b.exponent;
  if (top_a != top_b) return top_a < top_b ? -1 : 1;
  // Same leading position: walk down digit positions.
  int low = std::min(a.exponent, b.exponent);
  for (int pos = top_a - 1; pos >= low; --pos) {
    int da = (pos >= a.exponent && pos - a.exponent < static_cast<int>(a.digits.size()))
                 ? a.digits[static_cast<size_t>(pos - a.exponent)]
                 : 0;
    int db = (pos >= b.exponent && pos - b.exponent < static_cast<int>(b.digits.size()))
                 ? b.digits[static_cast<size_t>(pos - b.exponent)]
                 : 0;
    if (da != db) return da < db ? -1 : 1;
  }
  return 0;
}
int Decimal::compare(const Decimal& a, const Decimal& b) {
  int sa = a.digits.empty() ? 0 : (a.negative ? -1 : 1);
  int sb = b.digits.empty() ? 0 : (b.negative ? -1 : 1);
  if (sa != sb) return sa < sb ? -1 : 1;
  int c = compare_abs(a, b);
  return sa < 0 ? -c : c;
}

void Decimal::round_to_precision() {
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  constexpr size_t kPrecision = 28;
  if (digits.size() > kPrecision) {
    size_t drop = digits.size() - kPrecision;
    int first = digits[drop - 1];
    bool rest = false;
    for (size_t k = 0; k + 1 < drop; ++k) rest = rest || digits[k] != 0;
    digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(drop));
    exponent += static_cast<int>(drop);
    if (first > 5 || (first == 5 && (rest || digits[0] % 2 == 1))) {
      size_t k = 0;
      while (k < digits.size() && digits[k] == 9) digits[k++] = 0;
      if (k == digits.size())
        digits.push_back(1);
      else
        ++digits[k];
    }
  }
  trim();
}

Decimal Decimal::add(const Decimal& a, const Decimal& b) {
  if (a.digits.empty() || b.digits.empty()) {
    Decimal out = a.digits.empty() ? b : a;
    if (a.digits.empty() && b.digits.empty()) out.negative = a.negative && b.negative;  // -0 + 0 is 0
    out.round_to_precision();
    return out;
  }
  int low = std::min(a.exponent, b.exponent);
  auto aligned = [low](const Decimal& x) {
    std::vector<uint8_t> d(static_cast<size_t>(x.exponent - low), 0);
    d.insert(d.end(), x.digits.begin(), x.digits.end());
    return d;
  };
  std::vector<uint8_t> da = aligned(a), db = aligned(b);
  Decimal out;
  out.exponent = low;
  if (a.negative == b.negative) {
    out.negative = a.negative;
    if (da.size() < db.size()) std::swap(da, db);
    int carry = 0;
    for (size_t k = 0; k < da.size(); ++k) {
      int x = da[k] + (k < db.size() ? db[k] : 0) + carry;
      out.digits.push_back(static_cast<uint8_t>(x % 10));
      carry = x / 10;
    }
    if (carry) out.digits.push_back(static_cast<uint8_t>(carry));
  } else {
    bool a_bigger = compare_abs(a, b) >= 0;
    if (!a_bigger) std::swap(da, db);
    out.negative = a_bigger ? a.negative : b.negative;
    int borrow = 0;
    for (size_t k = 0; k < da.size(); ++k) {
      int x = da[k] - (k < db.size() ? db[k] : 0) - borrow;
      borrow = x < 0;
      out.digits.push_back(static_cast<uint8_t>(x < 0 ? x + 10 : x));
    }
  }
  out.round_to_precision();
  // x + -x is 0, not -0 (Python's Decimal, rounding half even): range(-1,1,0.5) passes 0.0.
  if (out.digits.empty()) out.negative = false;
  return out;
}

double Decimal::to_double() const {
  if (digits.empty()) return negative ? -0.0 : 0.0;
  std::string text;
  text.reserve(digits.size() + 8);
  for (size_t k = digits.size(); k-- > 0;) text += static_cast<char>('0' + digits[k]);
  text += 'e';
  text += std::to_string(exponent);
  double value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    value = exponent > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return negative ? -value : value;
}

}  // namespace trainer::config::detail
