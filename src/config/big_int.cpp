#include "trainer/config/big_int.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>

#include "trainer/config/node.h"

namespace trainer::config {
namespace {

constexpr uint32_t kBase = 1'000'000'000;
constexpr int kBaseDigits = 9;

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

}  // namespace

BigInt::BigInt(int64_t value) {
  negative_ = value < 0;
  uint64_t magnitude = negative_ ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  for (; magnitude != 0; magnitude /= kBase) limbs_.push_back(static_cast<uint32_t>(magnitude % kBase));
}

void BigInt::trim() {
  while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  if (limbs_.empty()) negative_ = false;
}

bool BigInt::parse_digits(std::string_view digits, int base, BigInt& out) {
  out = BigInt();
  if (digits.empty()) return false;
  if (base == 10) {
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
    }
    out.limbs_.reserve(digits.size() / kBaseDigits + 1);
    for (size_t end = digits.size(); end > 0;) {
      size_t begin = end > static_cast<size_t>(kBaseDigits) ? end - kBaseDigits : 0;
      uint32_t limb = 0;
      for (size_t k = begin; k < end; ++k) limb = limb * 10 + static_cast<uint32_t>(digits[k] - '0');
      out.limbs_.push_back(limb);
      end = begin;
    }
    out.trim();
    return true;
  }
  for (char c : digits) {
    int d = digit_value(c);
    if (d >= base) return false;
    out.multiply_add(static_cast<uint32_t>(base), static_cast<uint32_t>(d));
  }
  return true;
}

bool BigInt::parse_decimal(std::string_view text, BigInt& out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (!parse_digits(text, 10, out)) return false;
  if (negative) out.negate();
  return true;
}

BigInt BigInt::from_double(double value) {
  assert(std::isfinite(value));
  const double whole = std::trunc(value);
  if (std::fabs(whole) < 9.2e18) return BigInt(static_cast<int64_t>(whole));
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(whole), &exponent);
  BigInt out(static_cast<int64_t>(std::ldexp(fraction, 53)));
  for (exponent -= 53; exponent > 0; exponent -= 29) {
    out.multiply_add(uint32_t{1} << std::min(exponent, 29), 0);
  }
  if (whole < 0) out.negate();
  return out;
}

BigInt BigInt::of(const Node& int_node) {
  assert(int_node.type() == NodeType::kInt);
  if (!int_node.is_big_int()) return BigInt(int_node.as_int());
  BigInt out;
  parse_decimal(int_node.int_text(), out);
  return out;
}

bool BigInt::fits_int64(int64_t& value) const {
  // int64 has 19 digits, 9223372036854775807: at most three limbs, the top one below 10, so the
  // magnitude fits in uint64 before the range check.
  if (limbs_.size() > 3 || (limbs_.size() == 3 && limbs_[2] >= 10)) return false;
  uint64_t magnitude = 0;
  for (size_t k = limbs_.size(); k-- > 0;) magnitude = magnitude * kBase + limbs_[k];
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > kMax + (negative_ ? 1 : 0)) return false;
  value = negative_ ? static_cast<int64_t>(0 - static_cast<uint64_t>(magnitude)) : static_cast<int64_t>(magnitude);
  return true;
}

std::string BigInt::to_string() const {
  if (limbs_.empty()) return "0";
  std::string out;
  out.reserve(limbs_.size() * kBaseDigits + 1);
  if (negative_) out += '-';
  out += std::to_string(limbs_.back());
  char buffer[kBaseDigits];
  for (size_t k = limbs_.size() - 1; k-- > 0;) {
    uint32_t limb = limbs_[k];
    for (int d = kBaseDigits - 1; d >= 0; --d) {
      buffer[d] = static_cast<char>('0' + limb % 10);
      limb /= 10;
    }
    out.append(buffer, kBaseDigits);
  }
  return out;
}

bool BigInt::to_double(double& value) const {
  // The correctly rounded decimal -> double conversion is exactly Python's int -> float rounding.
  const std::string text = to_string();
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc() && std::isfinite(value);
}

Node BigInt::to_node() const {
  int64_t small = 0;
  if (fits_int64(small)) return Node::integer(small);
  Node node;
  node.type_ = NodeType::kInt;
  node.int_ = negative_ ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  node.string_ = to_string();
  return node;
}

void BigInt::multiply_add(uint32_t factor, uint32_t addend) {
  uint64_t carry = addend;
  for (uint32_t& limb : limbs_) {
    const uint64_t x = static_cast<uint64_t>(limb) * factor + carry;
    limb = static_cast<uint32_t>(x % kBase);
    carry = x / kBase;
  }
  for (; carry != 0; carry /= kBase) limbs_.push_back(static_cast<uint32_t>(carry % kBase));
  trim();
}

int BigInt::compare_magnitude(const BigInt& a, const BigInt& b) {
  if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() < b.limbs_.size() ? -1 : 1;
  for (size_t k = a.limbs_.size(); k-- > 0;) {
    if (a.limbs_[k] != b.limbs_[k]) return a.limbs_[k] < b.limbs_[k] ? -1 : 1;
  }
  return 0;
}

std::vector<uint32_t> BigInt::add_magnitudes(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const std::vector<uint32_t>& longer = a.size() >= b.size() ? a : b;
  const std::vector<uint32_t>& shorter = a.size() >= b.size() ? b : a;
  std::vector<uint32_t> out;
  out.reserve(longer.size() + 1);
  uint32_t carry = 0;
  for (size_t k = 0; k < longer.size(); ++k) {
    uint32_t x = longer[k] + (k < shorter.size() ? shorter[k] : 0) + carry;
    carry = x >= kBase;
    out.push_back(carry ? x - kBase : x);
  }
  if (carry) out.push_back(carry);
  return out;
}

std::vector<uint32_t> BigInt::subtract_magnitudes(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<uint32_t> out;
  out.reserve(a.size());
  int64_t borrow = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    int64_t x = static_cast<int64_t>(a[k]) - (k < b.size() ? b[k] : 0) - borrow;
    borrow = x < 0;
    out.push_back(static_cast<uint32_t>(x < 0 ? x + kBase : x));
  }
  return out;
}

BigInt operator+(const BigInt& a, const BigInt& b) {
  BigInt out;
  if (a.negative_ == b.negative_) {
    out.limbs_ = BigInt::add_magnitudes(a.limbs_, b.limbs_);
    out.negative_ = a.negative_;
  } else if (BigInt::compare_magnitude(a, b) >= 0) {
    out.limbs_ = BigInt::subtract_magnitudes(a.limbs_, b.limbs_);
    out.negative_ = a.negative_;
  } else {
    out.limbs_ = BigInt::subtract_magnitudes(b.limbs_, a.limbs_);
    out.negative_ = b.negative_;
  }
  out.trim();
  return out;
}

BigInt operator-(const BigInt& a, const BigInt& b) {
  BigInt negated = b;
  negated.negate();
  return a + negated;
}

int BigInt::compare(const BigInt& a, const BigInt& b) {
  if (a.negative_ != b.negative_) return a.negative_ ? -1 : 1;
  const int magnitude = compare_magnitude(a, b);
  return a.negative_ ? -magnitude : magnitude;
}

int BigInt::compare(const BigInt& a, double b) {
  if (std::isnan(b)) return 2;
  if (std::isinf(b)) return b > 0 ? -1 : 1;
  const int whole = compare(a, from_double(b));
  if (whole != 0) return whole;
  const double fraction = b - std::trunc(b);
  return fraction > 0 ? -1 : fraction < 0 ? 1 : 0;
}

int compare_int_float(int64_t a, double b) {
  if (std::isnan(b)) return 2;
  constexpr int64_t kExact = int64_t{1} << 53;  // every int up to 2^53 is a double
  if (a >= -kExact && a <= kExact) {
    const double x = static_cast<double>(a);
    return x < b ? -1 : x > b ? 1 : 0;
  }
  return BigInt::compare(BigInt(a), b);
}

int compare_int_float(const Node& int_node, double b) {
  if (!int_node.is_big_int()) return compare_int_float(int_node.as_int(), b);
  return BigInt::compare(BigInt::of(int_node), b);
}

bool int_to_double(const Node& int_node, double& value) {
  if (!int_node.is_big_int()) {
    value = static_cast<double>(int_node.as_int());
    return true;
  }
  return BigInt::of(int_node).to_double(value);
}

}  // namespace trainer::config
