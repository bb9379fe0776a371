// Hydra's override grammar (hydra/grammar/OverrideLexer.g4 + OverrideParser.g4, Hydra 1.3) as a
// hand-written two-mode lexer and a recursive-descent parser. The lexer reproduces ANTLR's rule:
// at each position the longest token wins, ties go to the rule listed first in the grammar. That
// rule alone decides the typing quirks (`007` is three INT tokens, hence a string; `inf` is a
// FLOAT, `Infinity` an ID), so following it is what keeps us identical to Hydra.
#include "trainer/config/override.h"
#include "trainer/config/big_int.h"
#include "trainer/config/python_str.h"
#include "trainer/config/python_value.h"
#include "override_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "trainer/util/error.h"

namespace trainer::config {
namespace {

using namespace override_detail;

// ---------------------------------------------------------------------------------------------
// Character classes and token lengths, straight from the lexer grammar.

inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_ws(char c) { return c == ' ' || c == '\t'; }
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  char at(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }

  size_t ws_len(size_t p) const {
    size_t q = p;
    while (is_ws(at(q))) ++q;
    return q - p;
  }
  // DIGIT (('_')? DIGIT)*
  size_t digits_len(size_t p) const {
    if (!is_digit(at(p))) return 0;
    size_t q = p + 1;
    for (;;) {
      if (at(q) == '_' && is_digit(at(q + 1))) q += 2;
      else if (is_digit(at(q))) ++q;
      else break;
    }
    return q - p;
  }
  // '0' | [1-9] (('_')? DIGIT)*
  size_t int_unsigned_len(size_t p) const {
    if (at(p) == '0') return 1;
    if (at(p) >= '1' && at(p) <= '9') return digits_len(p);
    return 0;
  }
  bool ci_match(size_t p, const char* word) const {
    for (size_t k = 0; word[k]; ++k) {
      if (lower(at(p + k)) != word[k]) return false;
    }
    return true;
  }
  // [+-]? (POINT_FLOAT | EXPONENT_FLOAT | inf | nan)
  size_t float_len(size_t p) const {
    size_t q = p;
    if (at(q) == '+' || at(q) == '-') ++q;
    size_t best = 0;
    if (ci_match(q, "inf") || ci_match(q, "nan")) best = 3;
    size_t a = int_unsigned_len(q);
    size_t point = 0;
    if (a > 0 && at(q + a) == '.') {
      point = a + 1;
      point += digits_len(q + a + 1);
    } else if (a == 0 && at(q) == '.') {
      size_t d = digits_len(q + 1);
      if (d > 0) point = 1 + d;
    }
    best = std::max(best, point);
    for (size_t base : {point, a}) {
      if (base == 0 || (at(q + base) != 'e' && at(q + base) != 'E')) continue;
      size_t e = q + base + 1;
      if (at(e) == '+' || at(e) == '-') ++e;
      size_t d = digits_len(e);
      if (d > 0) best = std::max(best, e + d - q);
    }
    return best > 0 ? (q - p) + best : 0;
  }
  size_t int_len(size_t p) const {
    size_t q = p;
    if (at(q) == '+' || at(q) == '-') ++q;
    size_t a = int_unsigned_len(q);
    return a > 0 ? (q - p) + a : 0;
  }
  // (CHAR|'_') (CHAR|DIGIT|'_'|'-')*, and with `dollar` the key mode's KEY_SPECIAL.
  size_t id_len(size_t p, bool dollar = false) const {
    char c = at(p);
    if (!is_alpha(c) && c != '_' && !(dollar && c == '$')) return 0;
    size_t q = p + 1;
    for (;;) {
      c = at(q);
      if (is_alpha(c) || is_digit(c) || c == '_' || c == '-' || (dollar && c == '$')) ++q;
      else break;
    }
    return q - p;
  }
  size_t esc_len(size_t p) const {
    size_t q = p;
    while (at(q) == '\\' && at(q + 1) != '\0' && std::strchr("\\()[]{}:=, \t", at(q + 1))) q += 2;
    return q - p;
  }
  // A quoted value ends at the first matching quote preceded by an even number of backslashes.
  size_t quoted_len(size_t p) const {
    char qc = at(p);
    if (qc != '\'' && qc != '"') return 0;
    size_t backslashes = 0;
    for (size_t q = p + 1; q < s_.size(); ++q) {
      char c = s_[q];
      if (c == qc && backslashes % 2 == 0) return q + 1 - p;
      backslashes = (c == '\\') ? backslashes + 1 : 0;
    }
    return 0;
  }
  size_t interpolation_len(size_t p) const {
    if (at(p) != '$' || at(p + 1) != '{' || at(p + 2) == '}' || at(p + 2) == '\0') return 0;
    size_t close = s_.find('}', p + 2);
    return close == std::string_view::npos ? 0 : close + 1 - p;
  }
  // KEY mode: (KEY_SPECIAL | INT_UNSIGNED) ('.' (KEY_SPECIAL | INT_UNSIGNED))+
  size_t dot_path_len(size_t p) const {
    auto segment = [&](size_t q) { return std::max(id_len(q, true), int_unsigned_len(q)); };
    size_t first = segment(p);
    if (first == 0) return 0;
    size_t q = p + first;
    size_t segments = 0;
    while (at(q) == '.') {
      size_t next = segment(q + 1);
      if (next == 0) break;
      q += 1 + next;
      ++segments;
    }
    return segments > 0 ? q - p : 0;
  }

 private:
  std::string_view s_;
};

// Token types in the grammar's rule order (ties between equally long matches go to the first).
enum class Tok : uint8_t {
  kPopen, kComma, kPclose, kBracketOpen, kBracketClose, kBraceOpen, kBraceClose, kColon, kEqual,
  kFloat, kInt, kBool, kNull, kUnquotedChar, kId, kEsc, kWs, kQuoted, kInterpolation, kEof
};

struct Token {
  Tok type;
  uint32_t begin, end;
};

// Python's repr() of a str, used in messages that quote a value back.
std::string quote_for_message(std::string_view s) { return "'" + std::string(s) + "'"; }

// ---------------------------------------------------------------------------------------------
// Casts: int(), float(), str(), bool() with Python's conversions.

enum class Cast { kInt, kFloat, kStr, kBool };

const char* cast_name(Cast c) {
  switch (c) {
    case Cast::kInt: return "int";
    case Cast::kFloat: return "float";
    case Cast::kStr: return "str";
    case Cast::kBool: return "bool";
  }
  return "?";
}

struct FunctionFailure {
  std::string problem;
  std::string fix;
};

[[noreturn]] void function_fail(std::string problem, std::string fix = {}) {
  throw FunctionFailure{std::move(problem), std::move(fix)};
}

Value cast_value(const Value& v, Cast c);

Value cast_scalar(const Value& v, Cast c) {
  switch (c) {
    case Cast::kInt:
      switch (v.kind) {
        case Value::kBool: return Value::integer(v.b ? 1 : 0);
        case Value::kInt: return v;
        case Value::kFloat:
          if (std::isinf(v.f)) function_fail("cannot convert float infinity to integer");
          if (std::isnan(v.f)) function_fail("cannot convert float NaN to integer");
          if (std::fabs(v.f) >= 9.2e18) return Value::integer(BigInt::from_double(v.f));
          return Value::integer(static_cast<int64_t>(std::trunc(v.f)));
        case Value::kStr: {
          Node out;
          if (!python_int_from_text(v.s, out)) {
            function_fail("invalid literal for int() with base 10: " + quote_for_message(v.s));
          }
          return Value::integer(out);
        }
        default: break;
      }
      break;
    case Cast::kFloat:
      switch (v.kind) {
        case Value::kBool: return Value::floating(v.b ? 1.0 : 0.0);
        case Value::kInt: {
          double out = 0;
          if (v.is_big() && !v.big().to_double(out)) {
            function_fail("int too large to convert to float");
          }
          return Value::floating(v.is_big() ? out : static_cast<double>(v.i));
        }
        case Value::kFloat: return v;
        case Value::kStr: {
          double out = 0;
          if (!python_float_from_text(v.s, out)) {
            function_fail("could not convert string to float: " + quote_for_message(v.s));
          }
          return Value::floating(out);
        }
        default: break;
      }
      break;
    case Cast::kStr:
      switch (v.kind) {
        case Value::kBool: return Value::str(v.b ? "true" : "false");
        case Value::kInt: return Value::str(v.int_text());
        case Value::kFloat: return Value::str(python_float_repr(v.f));
        case Value::kStr: return v;
        default: break;
      }
      break;
    case Cast::kBool:
      switch (v.kind) {
        case Value::kBool: return v;
        case Value::kInt: return Value::boolean(v.i != 0);  // a big int is never 0
        case Value::kFloat: return Value::boolean(v.f != 0.0);
        case Value::kStr: {
          std::string lowered;
          for (char ch : v.s) lowered += lower(ch);
          if (lowered == "true") return Value::boolean(true);
          if (lowered == "false") return Value::boolean(false);
          function_fail("Cannot cast " + quote_for_message(v.s) + " to bool",
                        "only true and false (any case) convert to bool");
        }
        default: break;
      }
      break;
  }
  function_fail(std::string("cannot cast ") + (v.kind == Value::kNull ? "null" : python_type_name(v)) + " with " +
                cast_name(c) + "()");
}

Value cast_value(const Value& v, Cast c) {
  switch (v.kind) {
    case Value::kQuoted: return cast_value(Value::str(v.s), c);
    case Value::kList: {
      Value out = v;
      for (Value& item : out.items) item = cast_value(item, c);
      return out;
    }
    case Value::kDict: {
      Value out = v;
      for (size_t k = 1; k < out.items.size(); k += 2) out.items[k] = cast_value(out.items[k], c);
      return out;
    }
    case Value::kChoice: {
      // Hydra builds a fresh sweep: tags and shuffle are dropped, the form is kept.
      Value out;
      out.kind = Value::kChoice;
      out.simple_form = v.simple_form;
      for (const Value& item : v.items) out.items.push_back(cast_value(item, c));
      return out;
    }
    case Value::kRange: {
      if (c != Cast::kInt && c != Cast::kFloat) {
        function_fail("Range can only be cast to int or float");
      }
      Value out;
      out.kind = Value::kRange;
      for (const Value& item : v.items) out.items.push_back(cast_scalar(item, c));
      return out;
    }
    case Value::kInterval: {
      if (c == Cast::kStr) function_fail("Intervals cannot be cast to str");
      if (c == Cast::kBool) function_fail("Intervals cannot be cast to bool");
      Value out = v;
      for (Value& item : out.items) item = Value::floating(cast_scalar(item, c).number());
      out.int_interval = c == Cast::kInt;
      return out;
    }
    case Value::kGlob: function_fail(std::string("glob() cannot be cast with ") + cast_name(c) + "()");
    default: return cast_scalar(v, c);
  }
}

// ---------------------------------------------------------------------------------------------
// The parser.

[[noreturn]] void throw_override_error(std::string_view text, std::string problem, std::string fix) {
  if (!fix.empty() && fix[0] >= 'a' && fix[0] <= 'z') fix[0] = static_cast<char>(fix[0] - 'a' + 'A');
  throw Error("override '" + std::string(text) + "'", std::move(problem), std::move(fix));
}

class Parser {
 public:
  // `tokens` is scratch space reused across calls, so a plain override allocates nothing for it.
  Parser(std::string_view text, std::vector<Token>& tokens)
      : text_(text), scan_(text), tokens_(tokens) {}

  Override parse();

 private:
  // Key mode.
  void parse_key(Override& out);
  size_t key_token_len(size_t p, int& kind) const;
  // Value mode.
  void lex_value(size_t p);
  Value parse_value();
  Value parse_element();
  Value parse_primitive();
  Value parse_dict_key();
  Value parse_list();
  Value parse_dict();
  Value parse_function();
  Value make_primitive(size_t first, size_t last);
  Value call(const std::string& name, std::vector<Value>& args,
           std::vector<std::pair<std::string, Value>>& kwargs, size_t begin, size_t end);

  const Token& peek(size_t ahead = 0) const {
    size_t k = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[k];
  }
  std::string_view token_text(const Token& t) const {
    return text_.substr(t.begin, t.end - t.begin);
  }
  bool is_primitive_token(Tok t, bool dict_key) const {
    switch (t) {
      case Tok::kId: case Tok::kNull: case Tok::kInt: case Tok::kFloat: case Tok::kBool:
      case Tok::kUnquotedChar: case Tok::kEsc: case Tok::kWs:
        return true;
      case Tok::kColon: case Tok::kInterpolation:
        return !dict_key;
      default:
        return false;
    }
  }

  [[noreturn]] void fail(std::string problem, std::string fix) const {
    throw_override_error(text_, std::move(problem), std::move(fix));
  }
  [[noreturn]] void unexpected(const Token& t, const char* expected) const;
  std::string quoted_suggestion() const;
  std::string column(size_t offset) const { return "column " + std::to_string(offset + 1); }

  std::string_view text_;
  Scanner scan_;
  std::vector<Token>& tokens_;
  size_t pos_ = 0;
  size_t value_begin_ = 0;
};

// The override with its value in single quotes (or double quotes when it holds a single quote):
// the usual way out of a value the grammar rejects.
std::string Parser::quoted_suggestion() const {
  std::string_view key = text_.substr(0, value_begin_);
  std::string_view value = text_.substr(value_begin_);
  while (!value.empty() && is_ws(value.back())) value.remove_suffix(1);
  char qc = value.find('\'') == std::string_view::npos ? '\'' : '"';
  std::string out(key);
  std::string raw(value);
  append_with_quotes(out, raw, qc);
  return out;
}

void Parser::unexpected(const Token& t, const char* expected) const {
  if (t.type == Tok::kEof) {
    fail(std::string("the value ends too early (expected ") + expected + ")",
         "complete the value, or quote it if it is meant as text: " + quoted_suggestion());
  }
  std::string_view what = token_text(t);
  while (!what.empty() && is_ws(what.front())) what.remove_prefix(1);
  while (!what.empty() && is_ws(what.back())) what.remove_suffix(1);
  size_t col = t.begin;
  while (col < t.end && is_ws(text_[col])) ++col;
  if (t.type == Tok::kEqual) {
    fail("unexpected '=' in the value at " + column(col),
         "quote it, " + quoted_suggestion() + ", or escape it as \\=");
  }
  if (t.type == Tok::kQuoted) {
    fail("a quoted string at " + column(col) +
             " must be the whole value or a whole list/dict element",
         "quote the entire value: " + quoted_suggestion());
  }
  std::string shown = what.empty() ? std::string("whitespace") : "'" + std::string(what) + "'";
  std::string fix = "quote the value if it is meant as text: " + quoted_suggestion();
  if (what == "[" || what == "]" || what == "{" || what == "}" || what == "(" || what == ")" ||
      what == "," || what == ":") {
    fix = "balance the brackets, or quote the value (" + quoted_suggestion() +
          ") or escape the character with a backslash (\\" + std::string(what) +
          ") if it is meant as text";
  }
  fail("unexpected " + shown + " at " + column(col) + " (expected " + expected + ")", fix);
}

// KEY mode tokens: 0 EQUAL, 1 TILDE, 2 PLUS, 3 AT, 4 COLON, 5 SLASH, 6 ID, 7 KEY_SPECIAL,
// 8 DOT_PATH; returns the length, 0 when no rule matches.
size_t Parser::key_token_len(size_t p, int& kind) const {
  char c = scan_.at(p);
  switch (c) {
    case '=': kind = 0; return 1;
    case '~': kind = 1; return 1;
    case '+': kind = 2; return 1;
    case '@': kind = 3; return 1;
    case ':': kind = 4; return 1;
    case '/': kind = 5; return 1;
    default: break;
  }
  size_t id = scan_.id_len(p);
  size_t special = scan_.id_len(p, true);
  size_t dot = scan_.dot_path_len(p);
  size_t best = 0;
  if (id > best) { best = id; kind = 6; }
  if (special > best) { best = special; kind = 7; }
  if (dot > best) { best = dot; kind = 8; }
  return best;
}

void Parser::parse_key(Override& out) {
  struct KeyToken {
    int kind;
    size_t begin, end;
  };
  // Lex the key part: it ends at the first '=' (which starts the value mode).
  static thread_local std::vector<KeyToken> tokens;
  tokens.clear();
  size_t p = 0;
  bool saw_equal = false;
  while (p < text_.size()) {
    int kind = -1;
    size_t len = key_token_len(p, kind);
    if (len == 0) {
      std::string ch(1, text_[p]);
      if (static_cast<unsigned char>(text_[p]) >= 0x80) {
        size_t n = 1;
        while (p + n < text_.size() && (static_cast<unsigned char>(text_[p + n]) & 0xC0) == 0x80) ++n;
        ch = std::string(text_.substr(p, n));
      }
      std::string shown = is_ws(text_[p]) ? std::string("whitespace") : "'" + ch + "'";
      fail(shown + " is not allowed in the key at " + column(p),
           "keys are names made of letters, digits, '_', '-' and '$', joined by '.' "
           "(model.hidden_size, list.0) or '/' for config groups (hydra/launcher); "
           "no spaces around '='");
    }
    tokens.push_back({kind, p, p + len});
    p += len;
    if (kind == 0) {
      saw_equal = true;
      break;
    }
  }
  size_t k = 0;
  auto kind_at = [&](size_t j) { return j < tokens.size() ? tokens[j].kind : -1; };
  if (kind_at(0) == 1) {
    out.kind = OverrideKind::kDelete;
    k = 1;
  } else if (kind_at(0) == 2) {
    out.kind = OverrideKind::kAdd;
    k = 1;
    if (kind_at(1) == 2) {
      out.kind = OverrideKind::kForceAdd;
      k = 2;
    }
  }
  // packageOrGroup: package | ID (SLASH ID)+
  size_t key_begin = k < tokens.size() ? tokens[k].begin : text_.size();
  int first = kind_at(k);
  if (first == 6 || first == 7 || first == 8) {
    ++k;
    if (first == 6) {
      while (kind_at(k) == 5 && kind_at(k + 1) == 6) k += 2;
    }
  }
  size_t key_end = k < tokens.size() ? tokens[k].begin : (saw_equal ? tokens.back().begin : p);
  out.key = std::string(text_.substr(key_begin, key_end - key_begin));
  if (kind_at(k) == 3) {  // AT package (which may be empty)
    size_t pkg_begin = tokens[k].end;
    ++k;
    int pkg = kind_at(k);
    if (pkg == 6 || pkg == 7 || pkg == 8) ++k;
    size_t pkg_end = k < tokens.size() ? tokens[k].begin : p;
    out.package = std::string(text_.substr(pkg_begin, pkg_end - pkg_begin));
  }
  if (out.key.empty()) {
    size_t at = k < tokens.size() ? tokens[k].begin : p;
    fail("the key is missing at " + column(at),
         "write key=value, +key=value, ++key=value or ~key, e.g. model.hidden_size=32");
  }
  if (k < tokens.size() && tokens[k].kind != 0) {
    const KeyToken& t = tokens[k];
    std::string shown(text_.substr(t.begin, t.end - t.begin));
    std::string fix = "a key is a dotted path (a.b.0), a config group path (server/db) or "
                      "GROUP@PACKAGE; write it as key=value";
    if (t.kind == 5) fix = "group paths use plain names (hydra/launcher); dotted keys cannot contain '/'";
    if (t.kind == 4) fix = "a package is one dotted path: db@src.pkg=mysql";
    if (t.kind == 2) fix = "use + to add or ++ to add-or-change, in front of the key only";
    fail("unexpected '" + shown + "' in the key at " + column(t.begin), fix);
  }
  if (!saw_equal) {
    if (out.kind == OverrideKind::kDelete) {
      out.has_value = false;
      value_begin_ = text_.size();
      return;
    }
    fail("missing '=' after the key",
         "write " + std::string(out.prefix()) + out.key_with_package() + "=VALUE (or " +
             out.key_with_package() + "= for an empty string; ~" + out.key_with_package() +
             " deletes it)");
  }
  out.has_value = true;
  // EQUAL: '=' WS?
  value_begin_ = tokens.back().end + scan_.ws_len(tokens.back().end);
}

void Parser::lex_value(size_t p) {
  tokens_.clear();
  while (p < text_.size()) {
    size_t best = 0;
    Tok type = Tok::kEof;
    auto consider = [&](Tok t, size_t len) {
      if (len > best) {
        best = len;
        type = t;
      }
    };
    size_t w = scan_.ws_len(p);
    char c = scan_.at(p + w);
    char c0 = scan_.at(p);
    if (c == '(') consider(Tok::kPopen, w + 1 + scan_.ws_len(p + w + 1));
    if (c == ',') consider(Tok::kComma, w + 1 + scan_.ws_len(p + w + 1));
    if (c == ')') consider(Tok::kPclose, w + 1);
    if (c0 == '[') consider(Tok::kBracketOpen, 1 + scan_.ws_len(p + 1));
    if (c == ']') consider(Tok::kBracketClose, w + 1);
    if (c0 == '{') consider(Tok::kBraceOpen, 1 + scan_.ws_len(p + 1));
    if (c == '}') consider(Tok::kBraceClose, w + 1);
    if (c == ':') consider(Tok::kColon, w + 1 + scan_.ws_len(p + w + 1));
    if (c == '=') consider(Tok::kEqual, w + 1 + scan_.ws_len(p + w + 1));
    consider(Tok::kFloat, scan_.float_len(p));
    consider(Tok::kInt, scan_.int_len(p));
    if (scan_.ci_match(p, "true")) consider(Tok::kBool, 4);
    if (scan_.ci_match(p, "false")) consider(Tok::kBool, 5);
    if (scan_.ci_match(p, "null")) consider(Tok::kNull, 4);
    if (c0 != '\0' && std::strchr("/-\\+.$%*@?|", c0)) consider(Tok::kUnquotedChar, 1);
    consider(Tok::kId, scan_.id_len(p));
    consider(Tok::kEsc, scan_.esc_len(p));
    consider(Tok::kWs, w);
    consider(Tok::kQuoted, scan_.quoted_len(p));
    consider(Tok::kInterpolation, scan_.interpolation_len(p));
    if (best == 0) {
      value_begin_ = std::min(value_begin_, text_.size());
      if (c0 == '\'' || c0 == '"') {
        fail(std::string("the quote at ") + column(p) + " is never closed",
             std::string("close it with ") + c0 +
                 "; inside quotes a backslash right before the closing quote escapes it, "
                 "so write a trailing backslash as \\\\");
      }
      size_t n = 1;
      if (static_cast<unsigned char>(c0) >= 0x80) {
        while (p + n < text_.size() && (static_cast<unsigned char>(text_[p + n]) & 0xC0) == 0x80) ++n;
      }
      std::string ch(text_.substr(p, n));
      if (c0 == '\n' || c0 == '\r') ch = c0 == '\n' ? "\\n" : "\\r";
      fail("'" + ch + "' is not allowed in an unquoted value (" + column(p) + ")",
           "quote it: " + quoted_suggestion());
    }
    tokens_.push_back({type, static_cast<uint32_t>(p), static_cast<uint32_t>(p + best)});
    p += best;
  }
  tokens_.push_back({Tok::kEof, static_cast<uint32_t>(text_.size()),
                     static_cast<uint32_t>(text_.size())});
  pos_ = 0;
}

Value Parser::parse_value() {
  Value first = parse_element();
  if (peek().type != Tok::kComma) return first;
  // simpleChoiceSweep: element (COMMA element)+
  Value choice;
  choice.kind = Value::kChoice;
  choice.simple_form = true;
  choice.items.push_back(std::move(first));
  while (peek().type == Tok::kComma) {
    ++pos_;
    choice.items.push_back(parse_element());
  }
  for (const Value& item : choice.items) {
    if (item.is_sweep()) {
      fail("a sweep cannot be one of the values of an a,b,c sweep",
           "write the values of the inner sweep into the list: key=a,b,c");
    }
  }
  return choice;
}

Value Parser::parse_element() {
  const Token& t = peek();
  switch (t.type) {
    case Tok::kBracketOpen: return parse_list();
    case Tok::kBraceOpen: return parse_dict();
    case Tok::kQuoted: {
      ++pos_;
      // Unescape: runs of backslashes before the quote character are halved; others are kept.
      std::string_view raw = token_text(t);
      char qc = raw.front();
      std::string_view body = raw.substr(1, raw.size() - 2);
      Value v;
      v.kind = Value::kQuoted;
      v.quote = qc;
      v.s.reserve(body.size());
      size_t k = 0;
      while (k < body.size()) {
        if (body[k] == '\\') {
          size_t run = k;
          while (run < body.size() && body[run] == '\\') ++run;
          size_t n = run - k;
          if (run == body.size()) {
            v.s.append(n / 2, '\\');
          } else if (body[run] == qc) {
            v.s.append(n / 2, '\\');
            v.s += qc;
            ++run;
          } else {
            v.s.append(n, '\\');
          }
          k = run;
          continue;
        }
        v.s += body[k++];
      }
      return v;
    }
    case Tok::kId:
      if (peek(1).type == Tok::kPopen) return parse_function();
      return parse_primitive();
    default:
      if (is_primitive_token(t.type, false)) return parse_primitive();
      unexpected(t, "a value");
  }
}

Value Parser::parse_primitive() {
  size_t first = pos_;
  // Greedy, like ANTLR: in `a b(x)` the text `a b` ends at '(' and the '(' is then an error.
  while (is_primitive_token(peek().type, false)) ++pos_;
  return make_primitive(first, pos_);
}

Value Parser::make_primitive(size_t first, size_t last) {
  size_t b = first, e = last;
  if (tokens_[b].type == Tok::kWs) {
    if (e - b == 1) {
      fail("a value made only of whitespace at " + column(tokens_[b].begin),
           "quote it to keep the spaces: key=' '");
    }
    ++b;
  }
  if (tokens_[e - 1].type == Tok::kWs) --e;
  if (e - b == 1) {
    const Token& t = tokens_[b];
    std::string_view s = token_text(t);
    switch (t.type) {
      case Tok::kInt: {
        std::string digits;
        digits.reserve(s.size());
        for (char c : s) {
          if (c != '_' && c != '+') digits += c;
        }
        int64_t value = 0;
        auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (result.ec == std::errc()) return Value::integer(value);
        BigInt big;  // Python ints are unbounded
        BigInt::parse_decimal(digits, big);
        return Value::integer(big);
      }
      case Tok::kFloat: {
        double value = 0;
        python_float_from_text(s, value);
        return Value::floating(value);
      }
      case Tok::kBool: return Value::boolean(lower(s[0]) == 't');
      case Tok::kNull: return Value();
      case Tok::kEsc: {
        std::string out;
        for (size_t k = 1; k < s.size(); k += 2) out += s[k];
        return Value::str(std::move(out));
      }
      default: return Value::str(std::string(s));
    }
  }
  std::string out;
  for (size_t k = b; k < e; ++k) {
    const Token& t = tokens_[k];
    std::string_view s = token_text(t);
    if (t.type == Tok::kEsc) {
      for (size_t j = 1; j < s.size(); j += 2) out += s[j];
    } else {
      out += s;
    }
  }
  return Value::str(std::move(out));
}

Value Parser::parse_dict_key() {
  size_t first = pos_;
  while (is_primitive_token(peek().type, true)) ++pos_;
  if (first == pos_) unexpected(peek(), "a dict key");
  return make_primitive(first, pos_);
}

Value Parser::parse_list() {
  size_t open = peek().begin;
  ++pos_;
  Value list;
  list.kind = Value::kList;
  if (peek().type != Tok::kBracketClose) {
    for (;;) {
      if (peek().type == Tok::kEof) {
        fail("the '[' at " + column(open) + " is never closed",
             "close the list with ']', or escape the bracket as \\[ if it is text");
      }
      list.items.push_back(parse_element());
      if (list.items.back().is_sweep()) {
        fail("a sweep cannot be nested inside a list", "sweep over whole lists instead: key=[1,2],[3,4]");
      }
      if (peek().type == Tok::kComma) {
        ++pos_;
        continue;
      }
      break;
    }
  }
  if (peek().type != Tok::kBracketClose) {
    if (peek().type == Tok::kEof) {
      fail("the '[' at " + column(open) + " is never closed",
           "close the list with ']', or escape the bracket as \\[ if it is text");
    }
    unexpected(peek(), "',' or ']'");
  }
  ++pos_;
  return list;
}

Value Parser::parse_dict() {
  size_t open = peek().begin;
  ++pos_;
  Value dict;
  dict.kind = Value::kDict;
  auto unclosed = [&]() {
    fail("the '{' at " + column(open) + " is never closed",
         "close the dict with '}', or escape the brace as \\{ if it is text");
  };
  if (peek().type != Tok::kBraceClose) {
    for (;;) {
      if (peek().type == Tok::kEof) unclosed();
      if (peek().type == Tok::kQuoted || peek().type == Tok::kInterpolation) {
        fail("dict keys cannot be quoted or interpolated (" + column(peek().begin) + ")",
             "write the key as plain text, escaping special characters: {my\\ key: 1}");
      }
      Value key = parse_dict_key();
      if (peek().type != Tok::kColon) {
        if (peek().type == Tok::kEof) unclosed();
        unexpected(peek(), "':' after the dict key");
      }
      ++pos_;
      if (peek().type == Tok::kEof) unclosed();
      Value value = parse_element();
      if (value.is_sweep()) {
        fail("a sweep cannot be nested inside a dict",
             "sweep over whole dicts instead: key={a:1},{a:2}");
      }
      // Python's dict: a repeated key keeps its first position and takes the last value.
      bool replaced = false;
      for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
        if (values_equal(dict.items[k], key) && dict.items[k].kind == key.kind) {
          dict.items[k + 1] = std::move(value);
          replaced = true;
          break;
        }
      }
      if (!replaced) {
        dict.items.push_back(std::move(key));
        dict.items.push_back(std::move(value));
      }
      if (peek().type == Tok::kComma) {
        ++pos_;
        continue;
      }
      break;
    }
  }
  if (peek().type != Tok::kBraceClose) {
    if (peek().type == Tok::kEof) unclosed();
    unexpected(peek(), "',' or '}'");
  }
  ++pos_;
  return dict;
}

Value Parser::parse_function() {
  const Token& name_token = peek();
  std::string name(token_text(name_token));
  size_t begin = name_token.begin;
  pos_ += 2;  // ID POPEN
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  auto unclosed = [&]() {
    fail("the '(' of " + name + "() at " + column(begin) + " is never closed",
         "close it with ')', or escape the parentheses as \\( \\) if the value is text");
  };
  if (peek().type != Tok::kPclose) {
    for (;;) {
      if (peek().type == Tok::kEof) unclosed();
      if (peek().type == Tok::kId && peek(1).type == Tok::kEqual) {
        std::string arg_name(token_text(peek()));
        pos_ += 2;
        if (peek().type == Tok::kEof) unclosed();
        kwargs.emplace_back(std::move(arg_name), parse_element());
      } else {
        size_t arg_begin = peek().begin;
        Value arg = parse_element();
        if (!kwargs.empty()) {
          fail("positional argument follows keyword argument in " + name + "() at " +
                   column(arg_begin),
               "put positional arguments first: range(1,10,step=2)");
        }
        args.push_back(std::move(arg));
      }
      if (peek().type == Tok::kComma) {
        ++pos_;
        continue;
      }
      break;
    }
  }
  if (peek().type != Tok::kPclose) {
    if (peek().type == Tok::kEof) unclosed();
    unexpected(peek(), "',' or ')'");
  }
  size_t end = peek().end;
  ++pos_;
  return call(name, args, kwargs, begin, end);
}

// ---------------------------------------------------------------------------------------------
// Grammar functions.

struct Arguments {
  std::vector<Value>& args;
  std::vector<std::pair<std::string, Value>>& kwargs;
  const std::string& function;

  // Takes a keyword argument out; nullptr when absent.
  std::optional<Value> take(const char* name) {
    for (size_t k = 0; k < kwargs.size(); ++k) {
      if (kwargs[k].first == name) {
        Value v = std::move(kwargs[k].second);
        kwargs.erase(kwargs.begin() + static_cast<std::ptrdiff_t>(k));
        return v;
      }
    }
    return std::nullopt;
  }
  void no_more_kwargs() const {
    if (!kwargs.empty()) {
      function_fail(function + "() got an unexpected keyword argument '" + kwargs.front().first + "'");
    }
  }
};

Value as_element_list(std::vector<Value>& args, bool simple_form, const std::string& function) {
  Value choice;
  choice.kind = Value::kChoice;
  choice.simple_form = simple_form;
  for (Value& arg : args) {
    if (arg.is_sweep()) {
      function_fail(std::string("a ") + python_type_name(arg) + " cannot be one of several values of " +
                    function + "()");
    }
    choice.items.push_back(std::move(arg));
  }
  return choice;
}

Value do_cast(Arguments a, Cast c) {
  std::optional<Value> value = a.take("value");
  a.no_more_kwargs();
  if (value && !a.args.empty()) function_fail("cannot use both position and named arguments");
  if (value) return cast_value(*value, c);
  if (a.args.empty()) function_fail(a.function + "() needs a value", "e.g. int(3.7)");
  if (a.args.size() == 1) return cast_value(a.args[0], c);
  return cast_value(as_element_list(a.args, true, a.function), c);
}

Value do_choice(Arguments a) {
  a.no_more_kwargs();
  if (a.args.empty()) {
    function_fail("empty choice is not legal", "give choice() at least one value: choice(a,b)");
  }
  if (a.args.size() == 1 && a.args[0].kind == Value::kChoice) {
    if (!a.args[0].simple_form) function_fail("nesting choices is not supported");
    Value out = std::move(a.args[0]);
    out.simple_form = false;
    return out;
  }
  for (size_t k = 0; k < a.args.size(); ++k) {
    const Value& arg = a.args[k];
    if (arg.kind == Value::kChoice) function_fail("nesting choices is not supported");
    if (arg.kind == Value::kNull || arg.is_sweep()) {
      function_fail("mismatch type argument args[" + std::to_string(k) + "]: " + python_type_name(arg) +
                        " is not a value choice() can hold",
                    "choice() takes strings, numbers, booleans, lists and dicts");
    }
  }
  return as_element_list(a.args, false, "choice");
}

void check_number(const Value& v, const char* name, const std::string& function) {
  if (!v.is_number()) {
    function_fail("mismatch type argument " + std::string(name) + ": " + python_type_name(v) +
                      " is incompatible with Union[int, float]",
                  function + "() takes numbers, e.g. " +
                      (function == "range" ? "range(1,10,2)" : "interval(0.1,1.0)"));
  }
}

// Binds positional and keyword arguments to named parameters, like Python's Signature.bind.
void bind(Arguments& a, const std::vector<const char*>& names, std::vector<std::optional<Value>>& out) {
  out.assign(names.size(), std::nullopt);
  if (a.args.size() > names.size()) function_fail("too many positional arguments");
  for (size_t k = 0; k < a.args.size(); ++k) out[k] = std::move(a.args[k]);
  for (auto& [name, value] : a.kwargs) {
    size_t k = 0;
    while (k < names.size() && name != names[k]) ++k;
    if (k == names.size()) {
      function_fail(a.function + "() got an unexpected keyword argument '" + name + "'");
    }
    if (out[k]) function_fail("multiple values for argument '" + name + "'");
    out[k] = std::move(value);
  }
}

Value int_if_bool(const Value& v) { return v.kind == Value::kBool ? Value::integer(v.b) : v; }

Value do_range(Arguments a) {
  std::vector<std::optional<Value>> p;
  bind(a, {"start", "stop", "step"}, p);
  if (!p[0]) function_fail("missing a required argument: 'start'", "e.g. range(1,10) or range(10)");
  Value start = *p[0];
  std::optional<Value> stop = p[1];
  if (stop && stop->kind == Value::kNull) stop.reset();
  Value step = p[2] ? *p[2] : Value::integer(1);
  check_number(start, "start", "range");
  if (stop) check_number(*stop, "stop", "range");
  check_number(step, "step", "range");
  Value out;
  out.kind = Value::kRange;
  if (!stop) {
    out.items = {Value::integer(0), int_if_bool(start), int_if_bool(step)};
  } else {
    out.items = {int_if_bool(start), int_if_bool(*stop), int_if_bool(step)};
  }
  return out;
}

Value do_interval(Arguments a) {
  std::vector<std::optional<Value>> p;
  bind(a, {"start", "end"}, p);
  if (!p[0] || !p[1]) {
    function_fail(std::string("missing a required argument: '") + (p[0] ? "end" : "start") + "'",
                  "e.g. interval(0.1,1.0)");
  }
  check_number(*p[0], "start", "interval");
  check_number(*p[1], "end", "interval");
  Value out;
  out.kind = Value::kInterval;
  out.items = {Value::floating(p[0]->number()), Value::floating(p[1]->number())};
  return out;
}

Value do_tag(Arguments a) {
  std::optional<Value> sweep = a.take("sweep");
  a.no_more_kwargs();
  if (sweep) a.args.push_back(std::move(*sweep));
  if (a.args.empty()) function_fail("Not enough arguments to tag, must take at least a sweep");
  for (size_t k = 0; k + 1 < a.args.size(); ++k) {
    if (a.args[k].kind != Value::kStr) {
      function_fail("mismatch type argument args[" + std::to_string(k) + "]: " +
                        python_type_name(a.args[k]) + " is incompatible with Union[str, Sweep]",
                    "tags are strings: tag(log,lr,interval(0,1))");
    }
  }
  Value out = std::move(a.args.back());
  if (out.kind != Value::kChoice && out.kind != Value::kRange && out.kind != Value::kInterval) {
    function_fail("Last argument to tag() must be a choice(), range() or interval()",
                  "e.g. tag(log,choice(1,2))");
  }
  std::vector<std::string> tags;
  for (size_t k = 0; k + 1 < a.args.size(); ++k) tags.push_back(a.args[k].s);
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  out.tags = std::move(tags);
  return out;
}

std::mt19937_64& parse_time_rng() {
  // shuffle() of a plain list happens at parse time; Hydra uses the global `random` there too.
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

Value do_shuffle(Arguments a) {
  std::optional<Value> list = a.take("list");
  std::optional<Value> sweep = a.take("sweep");
  a.no_more_kwargs();
  if (list) {
    if (list->kind != Value::kList) function_fail("shuffle(list=...) needs a list");
    std::shuffle(list->items.begin(), list->items.end(), parse_time_rng());
    return std::move(*list);
  }
  if (sweep) {
    if (sweep->kind != Value::kChoice && sweep->kind != Value::kRange) {
      function_fail("shuffle(sweep=...) needs a choice() or range()");
    }
    sweep->shuffle = true;
    return std::move(*sweep);
  }
  if (a.args.size() == 1) {
    Value& arg = a.args[0];
    if (arg.kind == Value::kChoice || arg.kind == Value::kRange) {
      arg.shuffle = true;
      return std::move(arg);
    }
    if (arg.is_sweep() || arg.kind == Value::kNull) {
      function_fail(std::string("mismatch type argument args[0]: ") + python_type_name(arg) +
                    " cannot be shuffled");
    }
    if (arg.kind == Value::kList) {
      std::shuffle(arg.items.begin(), arg.items.end(), parse_time_rng());
      return std::move(arg);
    }
    Value out;
    out.kind = Value::kList;
    out.items.push_back(std::move(arg));
    return out;
  }
  if (a.args.empty()) function_fail("shuffle() needs values", "e.g. shuffle(a,b,c)");
  Value out = as_element_list(a.args, true, "shuffle");
  out.shuffle = true;
  return out;
}

void sort_items(std::vector<Value>& items, bool reverse) {
  try {
    if (reverse) {
      std::stable_sort(items.begin(), items.end(),
                       [](const Value& x, const Value& y) { return value_less(y, x); });
    } else {
      std::stable_sort(items.begin(), items.end(), value_less);
    }
  } catch (const NotOrderable& e) {
    function_fail(e.message, "sort values of one kind: all numbers or all strings");
  }
}

// x + y (sign 1) or x - y (sign -1) on ints of any size or floats.
Value add_numbers(const Value& x, const Value& y, int sign) {
  if (x.kind == Value::kInt && y.kind == Value::kInt) {
    int64_t out = 0;
    const bool overflow = sign > 0 ? __builtin_add_overflow(x.i, y.i, &out)
                                   : __builtin_sub_overflow(x.i, y.i, &out);
    if (!overflow && !x.is_big() && !y.is_big()) return Value::integer(out);
    return Value::integer(sign > 0 ? x.big() + y.big() : x.big() - y.big());
  }
  return Value::floating(x.number() + sign * y.number());
}

Value negate(const Value& v) {
  if (v.kind != Value::kInt) return Value::floating(-v.f);
  if (v.is_big() || v.i == std::numeric_limits<int64_t>::min()) {
    BigInt out = v.big();
    out.negate();
    return Value::integer(out);
  }
  return Value::integer(-v.i);
}

Value abs_number(const Value& v) {
  if (v.kind != Value::kInt) return Value::floating(std::fabs(v.f));
  return (v.is_big() ? v.s[0] == '-' : v.i < 0) ? negate(v) : v;
}

Value sort_sweep(Value sweep, bool reverse) {
  if (sweep.kind == Value::kChoice) {
    sort_items(sweep.items, reverse);
    return sweep;
  }
  // A range is sorted by flipping its direction when it runs the wrong way.
  Value start = sweep.items[0], stop = sweep.items[1], step = sweep.items[2];
  bool flip = compare_numbers(start, stop) == (reverse ? -1 : 1);
  if (flip) {
    Value magnitude = abs_number(step);
    int sign = reverse ? -1 : 1;
    sweep.items[0] = add_numbers(stop, magnitude, sign);
    sweep.items[1] = add_numbers(start, magnitude, sign);
    sweep.items[2] = negate(step);
  }
  return sweep;
}

Value do_sort(Arguments a) {
  std::optional<Value> list = a.take("list");
  std::optional<Value> sweep = a.take("sweep");
  std::optional<Value> reverse_arg = a.take("reverse");
  a.no_more_kwargs();
  bool reverse = false;
  if (reverse_arg) {
    if (reverse_arg->kind != Value::kBool) {
      function_fail(std::string("mismatch type argument reverse: ") + python_type_name(*reverse_arg) +
                        " is incompatible with bool",
                    "write reverse=true or reverse=false");
    }
    reverse = reverse_arg->b;
  }
  if (list) {
    if (list->kind != Value::kList) function_fail("sort(list=...) needs a list");
    sort_items(list->items, reverse);
    return std::move(*list);
  }
  if (sweep) {
    if (sweep->kind != Value::kChoice && sweep->kind != Value::kRange) {
      function_fail("sort(sweep=...) needs a choice() or range()");
    }
    return sort_sweep(std::move(*sweep), reverse);
  }
  if (a.args.size() == 1) {
    Value& arg = a.args[0];
    if (arg.kind == Value::kChoice || arg.kind == Value::kRange) return sort_sweep(std::move(arg), reverse);
    if (arg.kind == Value::kList) {
      sort_items(arg.items, reverse);
      return std::move(arg);
    }
    if (arg.is_sweep() || arg.kind == Value::kNull) {
      function_fail(std::string("mismatch type argument args[0]: ") + python_type_name(arg) +
                        " is incompatible with Union[str, int, bool, float, list, dict, "
                        "ChoiceSweep, RangeSweep]",
                    "sort() takes values, a list, a choice() or a range()");
    }
    return std::move(arg);
  }
  for (const Value& arg : a.args) {
    if (!arg.is_number() && arg.kind != Value::kStr) {
      function_fail(std::string("Invalid arguments: sort() of several values takes strings and "
                                "numbers, not ") + python_type_name(arg));
    }
  }
  if (a.args.empty()) function_fail("empty sort input", "e.g. sort(3,1,2)");
  return sort_sweep(as_element_list(a.args, true, "sort"), reverse);
}

std::vector<std::string> glob_patterns(const Value& v, const char* name) {
  std::vector<std::string> out;
  if (v.kind == Value::kStr) {
    out.push_back(v.s);
    return out;
  }
  if (v.kind == Value::kList) {
    for (const Value& item : v.items) {
      if (item.kind != Value::kStr && item.kind != Value::kQuoted) {
        function_fail(std::string("glob ") + name + " patterns must be strings, got " + python_type_name(item));
      }
      out.push_back(item.s);
    }
    return out;
  }
  function_fail(std::string("mismatch type argument ") + name + ": " + python_type_name(v) +
                    " is incompatible with Union[List[str], str]",
                "e.g. glob(*) or glob([a*,b*],exclude=c*)");
}

Value do_glob(Arguments a) {
  std::vector<std::optional<Value>> p;
  bind(a, {"include", "exclude"}, p);
  if (!p[0]) function_fail("missing a required argument: 'include'", "e.g. glob(*)");
  Value out;
  out.kind = Value::kGlob;
  out.include = glob_patterns(*p[0], "include");
  if (p[1] && p[1]->kind != Value::kNull) out.exclude = glob_patterns(*p[1], "exclude");
  return out;
}

Value Parser::call(const std::string& name, std::vector<Value>& args,
                 std::vector<std::pair<std::string, Value>>& kwargs, size_t begin, size_t end) {
  // Hydra unquotes quoted strings passed directly as arguments (not those inside lists).
  for (Value& arg : args) {
    if (arg.kind == Value::kQuoted) arg.kind = Value::kStr;
  }
  for (auto& kv : kwargs) {
    if (kv.second.kind == Value::kQuoted) kv.second.kind = Value::kStr;
  }
  Arguments a{args, kwargs, name};
  try {
    if (name == "int") return do_cast(a, Cast::kInt);
    if (name == "float") return do_cast(a, Cast::kFloat);
    if (name == "str") return do_cast(a, Cast::kStr);
    if (name == "bool") return do_cast(a, Cast::kBool);
    if (name == "choice") return do_choice(a);
    if (name == "range") return do_range(a);
    if (name == "interval") return do_interval(a);
    if (name == "tag") return do_tag(a);
    if (name == "sort") return do_sort(a);
    if (name == "shuffle") return do_shuffle(a);
    if (name == "glob") return do_glob(a);
  } catch (FunctionFailure& failure) {
    std::string call_text(text_.substr(begin, end - begin));
    fail("in '" + call_text + "': " + failure.problem,
         failure.fix.empty() ? "see the function's arguments in the override grammar "
                               "(choice, range, interval, glob, sort, shuffle, tag, int, float, "
                               "str, bool)"
                             : failure.fix);
  }
  std::string call_text(text_.substr(begin, end - begin));
  fail("unknown function '" + name + "' at " + column(begin),
       "the functions are choice, range, interval, glob, sort, shuffle, tag, int, float, str and "
       "bool; if the value is text, quote it (" + quoted_suggestion() +
           ") or escape the parentheses with \\( \\)");
}

Override Parser::parse() {
  Override out;
  out.text = std::string(text_);
  parse_key(out);
  if (!out.has_value) {
    out.value_text = "null";
    return out;
  }
  lex_value(value_begin_);
  Value value;
  if (peek().type == Tok::kEof) {
    value = Value::str("");  // `key=`: the empty string
  } else {
    value = parse_value();
    if (peek().type != Tok::kEof) unexpected(peek(), "the end of the value");
  }
  switch (value.kind) {
    case Value::kChoice:
      out.sweep.kind = value.simple_form ? SweepKind::kSimpleChoice : SweepKind::kChoice;
      out.sweep.choices.reserve(value.items.size());
      for (const Value& item : value.items) out.sweep.choices.push_back({to_node(item), render(item)});
      break;
    case Value::kRange:
      out.sweep.kind = SweepKind::kRange;
      out.sweep.range_start = to_node(value.items[0]);
      out.sweep.range_stop = to_node(value.items[1]);
      out.sweep.range_step = to_node(value.items[2]);
      break;
    case Value::kInterval:
      out.sweep.kind = SweepKind::kInterval;
      out.sweep.interval_start = value.items[0].number();
      out.sweep.interval_end = value.items[1].number();
      out.sweep.interval_int = value.int_interval;
      break;
    case Value::kGlob:
      out.sweep.kind = SweepKind::kGlob;
      out.sweep.glob_include = std::move(value.include);
      out.sweep.glob_exclude = std::move(value.exclude);
      break;
    default:
      out.value = to_node(value);
      render(out.value_text, value);
      return out;
  }
  out.sweep.tags = std::move(value.tags);
  out.sweep.shuffle = value.shuffle;
  return out;
}

}  // namespace

const char* Override::prefix() const {
  switch (kind) {
    case OverrideKind::kAdd: return "+";
    case OverrideKind::kForceAdd: return "++";
    case OverrideKind::kDelete: return "~";
    case OverrideKind::kChange: return "";
  }
  return "";
}

std::string Override::key_with_package() const {
  return package ? key + "@" + *package : key;
}

Override parse_override(std::string_view text) {
  static thread_local std::vector<Token> tokens;
  return Parser(text, tokens).parse();
}

}  // namespace trainer::config
