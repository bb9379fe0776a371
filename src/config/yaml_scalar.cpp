// PyYAML's YAML 1.1 implicit resolver and scalar constructors, as hand-written matchers (no regex:
// every scalar of every loaded file goes through here).
#include "yaml_scalar.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "trainer/config/big_int.h"
#include "trainer/config/python_str.h"
#include "trainer/config/python_value.h"

namespace trainer::config::yaml_detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_digit_(char c) { return is_digit(c) || c == '_'; }

// A cursor over the scalar; each matcher consumes what it accepts and reports success.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i == s.size(); }
  char peek(size_t ahead = 0) const { return i + ahead < s.size() ? s[i + ahead] : '\0'; }
  bool eat(char c) {
    if (peek() != c || done()) return false;
    ++i;
    return true;
  }
  void sign() {
    if (peek() == '-' || peek() == '+') ++i;
  }
  // [0-9_]*
  void digits_() {
    while (!done() && is_digit_(s[i])) ++i;
  }
  // [0-9][0-9_]*
  bool digit_then_digits_() {
    if (!is_digit(peek()) || done()) return false;
    ++i;
    digits_();
    return true;
  }
  // [0-9]+
  bool digits() {
    size_t start = i;
    while (!done() && is_digit(s[i])) ++i;
    return i > start;
  }
  // [0-9]+(?:_[0-9]+)*
  bool digit_groups() {
    if (!digits()) return false;
    while (peek() == '_' && is_digit(peek(1))) {
      ++i;
      digits();
    }
    return true;
  }
  // (?::[0-5]?[0-9])+ ; what follows is never a digit, so taking two digits when possible is
  // what the backtracking regex ends up doing.
  bool sexagesimal_parts() {
    bool any = false;
    while (peek() == ':') {
      char a = peek(1);
      char b = peek(2);
      if (a >= '0' && a <= '5' && is_digit(b)) {
        i += 3;
      } else if (is_digit(a)) {
        i += 2;
      } else {
        return false;
      }
      any = true;
    }
    return any;
  }
  // [eE][-+][0-9]+ (sign required) or [eE][-+]?[0-9]+
  bool exponent(bool sign_required) {
    if (peek() != 'e' && peek() != 'E') return false;
    ++i;
    if (peek() == '-' || peek() == '+') {
      ++i;
    } else if (sign_required) {
      return false;
    }
    return digits();
  }
};

bool is_bool_word(std::string_view t) {
  switch (t.size()) {
    case 2:
      return t == "no" || t == "No" || t == "NO" || t == "on" || t == "On" || t == "ON";
    case 3:
      return t == "yes" || t == "Yes" || t == "YES" || t == "off" || t == "Off" || t == "OFF";
    case 4:
      return t == "true" || t == "True" || t == "TRUE";
    case 5:
      return t == "false" || t == "False" || t == "FALSE";
    default:
      return false;
  }
}

bool is_special_float(std::string_view t) {
  // [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
  std::string_view rest = t;
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) rest.remove_prefix(1);
  if (rest == ".inf" || rest == ".Inf" || rest == ".INF") return true;
  return t == ".nan" || t == ".NaN" || t == ".NAN";
}

// Each function tries one alternative of a resolver regex over the whole text.
template <typename F>
bool whole(std::string_view t, F&& f) {
  Cursor c{t};
  return f(c) && c.done();
}

bool is_yaml11_float(std::string_view t) {
  // [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?
  if (whole(t, [](Cursor& c) {
        c.sign();
        if (!c.digit_then_digits_() || !c.eat('.')) return false;
        c.digits_();
        if (c.done()) return true;
        return c.exponent(true);
      }))
    return true;
  // \.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
  if (whole(t, [](Cursor& c) {
        if (!c.eat('.') || !c.digit_then_digits_()) return false;
        if (c.done()) return true;
        return c.exponent(true);
      }))
    return true;
  // [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
  if (whole(t, [](Cursor& c) {
        c.sign();
        if (!c.digit_then_digits_() || !c.sexagesimal_parts() || !c.eat('.')) return false;
        c.digits_();
        return true;
      }))
    return true;
  return is_special_float(t);
}

bool is_omegaconf_float(std::string_view t) {
  // [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
  if (whole(t, [](Cursor& c) {
        c.sign();
        if (!c.digit_groups() || !c.eat('.')) return false;
        c.digits_();
        if (c.done()) return true;
        return c.exponent(false);
      }))
    return true;
  // [-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
  if (whole(t, [](Cursor& c) {
        c.sign();
        return c.digit_groups() && c.exponent(false);
      }))
    return true;
  // \.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
  if (whole(t, [](Cursor& c) {
        if (!c.eat('.') || !c.digit_groups()) return false;
        if (c.done()) return true;
        return c.exponent(true);
      }))
    return true;
  // [-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
  if (whole(t, [](Cursor& c) {
        c.sign();
        if (!c.digit_groups() || !c.sexagesimal_parts() || !c.eat('.')) return false;
        c.digits_();
        return true;
      }))
    return true;
  return is_special_float(t);
}

bool is_yaml11_int(std::string_view t) {
  Cursor c{t};
  c.sign();
  size_t body = c.i;
  if (c.peek() == '0' && !c.done()) {
    char next = c.peek(1);
    if (c.i + 1 == t.size()) return true;  // 0
    if (next == 'b') {                     // 0b[0-1_]+
      c.i += 2;
      if (c.done()) return false;
      while (!c.done() && (c.peek() == '0' || c.peek() == '1' || c.peek() == '_')) ++c.i;
      return c.done();
    }
    if (next == 'x') {  // 0x[0-9a-fA-F_]+
      c.i += 2;
      if (c.done()) return false;
      while (!c.done() && (std::isxdigit(static_cast<unsigned char>(c.peek())) || c.peek() == '_')) ++c.i;
      return c.done();
    }
    // 0[0-7_]+
    ++c.i;
    while (!c.done() && ((c.peek() >= '0' && c.peek() <= '7') || c.peek() == '_')) ++c.i;
    return c.done() && c.i > body + 1;
  }
  // [1-9][0-9_]* then optionally (:[0-5]?[0-9])+
  if (c.peek() < '1' || c.peek() > '9') return false;
  c.digit_then_digits_();
  if (c.done()) return true;
  return c.sexagesimal_parts() && c.done();
}

bool is_timestamp(std::string_view t) {
  // [0-9]{4}-[0-9]{2}-[0-9]{2}
  auto digits_at = [&](size_t pos, size_t n) {
    if (pos + n > t.size()) return false;
    for (size_t k = 0; k < n; ++k)
      if (!is_digit(t[pos + k])) return false;
    return true;
  };
  if (t.size() == 10 && digits_at(0, 4) && t[4] == '-' && digits_at(5, 2) && t[7] == '-' && digits_at(8, 2))
    return true;
  // [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
  //   (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?
  Cursor c{t};
  auto one_or_two = [&]() {
    if (!is_digit(c.peek()) || c.done()) return false;
    ++c.i;
    if (is_digit(c.peek()) && !c.done()) ++c.i;
    return true;
  };
  auto exactly = [&](size_t n) {
    if (!digits_at(c.i, n)) return false;
    c.i += n;
    return true;
  };
  if (!exactly(4) || !c.eat('-') || !one_or_two() || !c.eat('-') || !one_or_two()) return false;
  if (c.peek() == 'T' || c.peek() == 't') {
    ++c.i;
  } else {
    size_t start = c.i;
    while (!c.done() && (c.peek() == ' ' || c.peek() == '\t')) ++c.i;
    if (c.i == start) return false;
  }
  if (!one_or_two() || !c.eat(':') || !exactly(2) || !c.eat(':') || !exactly(2)) return false;
  if (c.eat('.')) {
    while (!c.done() && is_digit(c.peek())) ++c.i;
  }
  if (c.done()) return true;
  while (!c.done() && (c.peek() == ' ' || c.peek() == '\t')) ++c.i;
  if (c.eat('Z')) return c.done();
  if (c.peek() != '-' && c.peek() != '+') return false;
  ++c.i;
  if (!one_or_two()) return false;
  if (c.eat(':') && !exactly(2)) return false;
  return c.done();
}

std::string strip_underscores(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text)
    if (ch != '_') out.push_back(ch);
  return out;
}

bool parse_unsigned(std::string_view digits, int base, uint64_t& value) {
  if (digits.empty()) return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

PlainKind resolve_plain(std::string_view t, ResolverRules rules) {
  if (t.empty()) return PlainKind::kNull;
  char first = t[0];
  if (is_bool_word(t)) return PlainKind::kBool;
  bool numeric_start = is_digit(first) || first == '-' || first == '+' || first == '.';
  if (numeric_start && is_yaml11_float(t)) return PlainKind::kFloat;
  if (numeric_start && first != '.' && is_yaml11_int(t)) return PlainKind::kInt;
  if (t == "<<") return PlainKind::kMerge;
  if (t == "~" || t == "null" || t == "Null" || t == "NULL") return PlainKind::kNull;
  if (rules.timestamps && is_digit(first) && is_timestamp(t)) return PlainKind::kTimestamp;
  if (t == "=") return PlainKind::kValue;
  if (rules.timestamps && (t == "!" || t == "&" || t == "*")) return PlainKind::kYaml;
  if (rules.omegaconf_floats && numeric_start && is_omegaconf_float(t)) return PlainKind::kFloat;
  return PlainKind::kString;
}

bool construct_int(std::string_view text, int64_t& value) {
  std::string s = strip_underscores(text);
  bool negative = false;
  size_t pos = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    pos = 1;
  }
  std::string_view body = std::string_view(s).substr(pos);
  if (body.empty()) return false;
  uint64_t magnitude = 0;
  if (body == "0") {
    magnitude = 0;
  } else if (body.substr(0, 2) == "0b") {
    if (!parse_unsigned(body.substr(2), 2, magnitude)) return false;
  } else if (body.substr(0, 2) == "0x") {
    if (!parse_unsigned(body.substr(2), 16, magnitude)) return false;
  } else if (body[0] == '0') {
    if (!parse_unsigned(body, 8, magnitude)) return false;
  } else if (body.find(':') != std::string_view::npos) {
    // Sexagesimal: the last part counts units, the one before sixties, and so on.
    uint64_t base = 1;
    size_t end = body.size();
    while (true) {
      // end == 0: the text starts with ':' and the first part is empty (Python's int('') and
      // float('') fail); rfind(':', end - 1) would wrap around and loop forever.
      size_t colon = end == 0 ? std::string_view::npos : body.rfind(':', end - 1);
      size_t begin = colon == std::string_view::npos ? 0 : colon + 1;
      uint64_t part = 0;
      if (!parse_unsigned(body.substr(begin, end - begin), 10, part)) return false;
      uint64_t scaled = 0;
      if (__builtin_mul_overflow(part, base, &scaled) || __builtin_add_overflow(magnitude, scaled, &magnitude))
        return false;
      if (colon == std::string_view::npos) break;
      if (__builtin_mul_overflow(base, uint64_t{60}, &base)) return false;
      end = colon;
    }
  } else {
    if (!parse_unsigned(body, 10, magnitude)) return false;
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMax + 1) return false;
    value = magnitude == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(magnitude);
  } else {
    if (magnitude > kMax) return false;
    value = static_cast<int64_t>(magnitude);
  }
  return true;
}

namespace {

// PyYAML's construct_yaml_int with Python's unbounded ints.
bool construct_int_any_size(std::string_view text, BigInt& value) {
  std::string s = strip_underscores(text);
  bool negative = false;
  std::string_view body(s);
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return false;
  bool ok = false;
  if (body == "0") {
    value = BigInt();
    ok = true;
  } else if (body.substr(0, 2) == "0b") {
    ok = BigInt::parse_digits(body.substr(2), 2, value);
  } else if (body.substr(0, 2) == "0x") {
    ok = BigInt::parse_digits(body.substr(2), 16, value);
  } else if (body[0] == '0') {
    ok = BigInt::parse_digits(body, 8, value);
  } else if (body.find(':') != std::string_view::npos) {
    // Sexagesimal, most significant part first: value = value * 60 + part.
    value = BigInt();
    ok = true;
    size_t begin = 0;
    while (ok) {
      size_t colon = body.find(':', begin);
      size_t end = colon == std::string_view::npos ? body.size() : colon;
      BigInt part;
      ok = BigInt::parse_digits(body.substr(begin, end - begin), 10, part);
      value.multiply_add(60, 0);
      value = value + part;
      if (colon == std::string_view::npos) break;
      begin = colon + 1;
    }
  } else {
    ok = BigInt::parse_digits(body, 10, value);
  }
  if (ok && negative) value.negate();
  return ok;
}

}  // namespace

bool construct_big_int(std::string_view text, Node& value) {
  BigInt big;
  if (!construct_int_any_size(text, big)) return false;
  value = big.to_node();
  return true;
}

bool construct_float(std::string_view text, double& value) {
  std::string s = strip_underscores(text);
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  double sign = 1.0;
  size_t pos = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    sign = s[0] == '-' ? -1.0 : 1.0;
    pos = 1;
  }
  std::string_view body = std::string_view(s).substr(pos);
  if (body.empty()) return false;
  if (body == ".inf") {
    value = sign * std::numeric_limits<double>::infinity();
    return true;
  }
  if (body == ".nan") {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (body.find(':') != std::string_view::npos) {
    double total = 0.0;
    double base = 1.0;
    size_t end = body.size();
    while (true) {
      // end == 0: the text starts with ':' and the first part is empty (Python's int('') and
      // float('') fail); rfind(':', end - 1) would wrap around and loop forever.
      size_t colon = end == 0 ? std::string_view::npos : body.rfind(':', end - 1);
      size_t begin = colon == std::string_view::npos ? 0 : colon + 1;
      double part = 0.0;
      if (!python_float_from_text(body.substr(begin, end - begin), part)) return false;
      total += part * base;
      if (colon == std::string_view::npos) break;
      base *= 60.0;
      end = colon;
    }
    value = sign * total;
    return true;
  }
  // Python's float() also reads inf/nan words (an explicit `!!float inf`) and surrounding spaces.
  double magnitude = 0.0;
  if (!python_float_from_text(body, magnitude)) return false;
  value = sign * magnitude;
  return true;
}

bool construct_bool(std::string_view text, bool& value) {
  std::string lower(text);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "yes" || lower == "true" || lower == "on") {
    value = true;
    return true;
  }
  if (lower == "no" || lower == "false" || lower == "off") {
    value = false;
    return true;
  }
  return false;
}

std::string yaml_float_text(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value < 0 ? "-.inf" : ".inf";
  std::string text = ::trainer::config::python_float_repr(value);
  if (text.find('.') == std::string::npos) {
    size_t e = text.find('e');
    if (e != std::string::npos) text.insert(e, ".0");
  }
  return text;
}

}  // namespace trainer::config::yaml_detail
