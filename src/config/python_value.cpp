#include "trainer/config/python_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "trainer/config/big_int.h"

namespace trainer::config {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string strip_python_ws(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::strchr(" \t\n\r\f\v", s[b])) ++b;
  while (e > b && std::strchr(" \t\n\r\f\v", s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// [0-9]+ with single underscores between digits; advances i.
bool digits_with_underscores(std::string_view s, size_t& i) {
  if (i >= s.size() || !is_digit(s[i])) return false;
  while (i < s.size()) {
    const bool separator = s[i] == '_' && i + 1 < s.size() && is_digit(s[i + 1]);
    if (!is_digit(s[i]) && !separator) break;
    ++i;
  }
  return true;
}

bool equals_ignore_case(std::string_view a, std::string_view lowercase) {
  if (a.size() != lowercase.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (lower(a[k]) != lowercase[k]) return false;
  }
  return true;
}

// A decimal text (digits, an optional point, an optional exponent; no sign) that from_chars found
// outside the double range: true when it is too large, false when too small. The value is at
// least 10^(p-1) and below 10^p, with p from where its first significant digit sits plus the
// exponent, and out of range means p > 308 or p < -322.
bool beyond_largest_double(std::string_view body) {
  const size_t e = body.find_first_of("eE");
  const std::string_view mantissa = body.substr(0, e);
  int64_t exponent = 0;
  if (e != std::string_view::npos) {
    size_t k = e + 1;
    const bool negative = k < body.size() && body[k] == '-';
    if (k < body.size() && (body[k] == '-' || body[k] == '+')) ++k;
    for (; k < body.size() && is_digit(body[k]); ++k) {
      exponent = std::min<int64_t>(exponent * 10 + (body[k] - '0'), int64_t{1} << 40);
    }
    if (negative) exponent = -exponent;
  }
  const size_t point = std::min(mantissa.find('.'), mantissa.size());
  const size_t first = mantissa.find_first_not_of("0.");
  if (first == std::string_view::npos) return false;
  const int64_t position =
      first < point ? static_cast<int64_t>(point - first) : -static_cast<int64_t>(first - point - 1);
  return position + exponent > 0;
}

BigInt big_of(const Node& number) {
  return number.type() == NodeType::kBool ? BigInt(number.as_bool() ? 1 : 0) : BigInt::of(number);
}

}  // namespace

bool python_int_syntax(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  return digits_with_underscores(text, i) && i == text.size();
}

bool python_float_syntax(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const std::string_view rest = text.substr(i);
  if (equals_ignore_case(rest, "inf") || equals_ignore_case(rest, "infinity") || equals_ignore_case(rest, "nan")) {
    return true;
  }
  const bool int_part = digits_with_underscores(text, i);
  bool frac_part = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    frac_part = digits_with_underscores(text, i);
  }
  if (!int_part && !frac_part) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits_with_underscores(text, i)) return false;
  }
  return i == text.size();
}

bool python_int_from_text(std::string_view text, Node& value) {
  std::string s = strip_python_ws(text);
  if (!python_int_syntax(s)) return false;
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
  int64_t small = 0;
  auto result = std::from_chars(begin, s.data() + s.size(), small);
  if (result.ec == std::errc() && result.ptr == s.data() + s.size()) {
    value = Node::integer(small);
    return true;
  }
  BigInt big;
  if (!BigInt::parse_decimal(s, big)) return false;
  value = big.to_node();
  return true;
}

bool python_float_from_text(std::string_view text, double& value) {
  std::string s = strip_python_ws(text);
  if (!python_float_syntax(s)) return false;
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  bool negative = s[0] == '-';
  size_t k = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  std::string body = s.substr(k);
  std::string lowered;
  for (char c : body) lowered += lower(c);
  if (lowered == "inf" || lowered == "infinity") {
    value = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (lowered == "nan") {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (body.empty() || !(is_digit(body[0]) || body[0] == '.')) return false;
  double magnitude = 0;
  auto result = std::from_chars(body.data(), body.data() + body.size(), magnitude);
  if (result.ptr != body.data() + body.size()) return false;
  if (result.ec == std::errc::result_out_of_range) {
    magnitude = beyond_largest_double(body) ? std::numeric_limits<double>::infinity() : 0.0;
  } else if (result.ec != std::errc()) {
    return false;
  }
  value = negative ? -magnitude : magnitude;
  return true;
}

bool is_python_number(const Node& value) {
  return value.type() == NodeType::kInt || value.type() == NodeType::kFloat || value.type() == NodeType::kBool;
}

int python_compare_numbers(const Node& a, const Node& b) {
  const bool a_float = a.type() == NodeType::kFloat, b_float = b.type() == NodeType::kFloat;
  if (a_float && b_float) {
    const double x = a.as_float(), y = b.as_float();
    if (std::isnan(x) || std::isnan(y)) return 2;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  auto int_vs_float = [](const Node& x, double y) {
    return x.type() == NodeType::kBool ? compare_int_float(x.as_bool() ? 1 : 0, y) : compare_int_float(x, y);
  };
  if (b_float) return int_vs_float(a, b.as_float());
  if (a_float) {
    const int c = int_vs_float(b, a.as_float());
    return c == 2 ? 2 : -c;
  }
  if (a.is_big_int() || b.is_big_int()) return BigInt::compare(big_of(a), big_of(b));
  const int64_t x = a.type() == NodeType::kBool ? a.as_bool() : a.as_int();
  const int64_t y = b.type() == NodeType::kBool ? b.as_bool() : b.as_int();
  return x < y ? -1 : x > y ? 1 : 0;
}

bool python_equal(const Node& a, const Node& b) {
  if (is_python_number(a) && is_python_number(b)) return python_compare_numbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  if (a.is_list()) {
    if (a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i) {
      if (!python_equal(a.items()[i], b.items()[i])) return false;
    }
    return true;
  }
  if (a.is_map()) {
    if (a.entries().size() != b.entries().size()) return false;
    for (const Node::Entry& entry : a.entries()) {
      const Node* other = b.find(entry.key);
      if (other == nullptr || !python_equal(entry.value, *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace trainer::config
