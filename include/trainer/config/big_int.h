// Python's unbounded ints, for the values beyond int64 that YAML (`a: 2**80` written out, 0x...,
// sexagesimal), overrides (`x=123456789012345678901234567890`) and casts (`int(1e30)`) give. A Node
// keeps such a value as its canonical decimal text (see Node::integer_text); BigInt is the
// arithmetic behind it: parsing in bases 2/8/10/16, +, -, exact comparison with ints and floats,
// and Python's int -> float / float -> int conversions. Only the rare big values go through it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::config {

class Node;

class BigInt {
 public:
  BigInt() = default;  // zero
  explicit BigInt(int64_t value);

  // Digits in `base` (2, 8, 10 or 16; letters in either case), no sign, no underscores. False on
  // an empty text or any other character.
  static bool parse_digits(std::string_view digits, int base, BigInt& out);
  // An optional '+'/'-' then decimal digits (leading zeros allowed).
  static bool parse_decimal(std::string_view text, BigInt& out);
  // The integer part of a finite double, exactly: Python's int(1e30) == 1000000000000000019884624838656.
  static BigInt from_double(double value);
  // The value of an int node (big or not).
  static BigInt of(const Node& int_node);

  bool negative() const { return negative_; }
  bool is_zero() const { return limbs_.empty(); }
  bool fits_int64(int64_t& value) const;
  // Python's str(): "-123", "0".
  std::string to_string() const;
  // Python's float(int): the nearest double, ties to even. False when it overflows (Python raises
  // OverflowError: int too large to convert to float).
  bool to_double(double& value) const;
  // An ordinary int node when it fits in int64, a big one otherwise.
  Node to_node() const;

  // |x| = |x| * factor + addend.
  void multiply_add(uint32_t factor, uint32_t addend);
  void negate() { negative_ = !negative_ && !limbs_.empty(); }

  friend BigInt operator+(const BigInt& a, const BigInt& b);
  friend BigInt operator-(const BigInt& a, const BigInt& b);
  // -1, 0 or 1.
  static int compare(const BigInt& a, const BigInt& b);
  // Python's exact int/float comparison: -1, 0 or 1; 2 when `b` is NaN (unordered).
  static int compare(const BigInt& a, double b);

 private:
  static int compare_magnitude(const BigInt& a, const BigInt& b);
  static std::vector<uint32_t> add_magnitudes(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
  // a - b with |a| >= |b|.
  static std::vector<uint32_t> subtract_magnitudes(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
  void trim();

  bool negative_ = false;
  std::vector<uint32_t> limbs_;  // magnitude, little-endian base 10^9; empty for zero
};

// Python's exact comparison of an int and a float without allocating for the common case:
// -1, 0 or 1; 2 when `b` is NaN.
int compare_int_float(int64_t a, double b);
// The same for an int node of any size.
int compare_int_float(const Node& int_node, double b);
// float(int) of an int node; false when it overflows.
bool int_to_double(const Node& int_node, double& value);

}  // namespace trainer::config
