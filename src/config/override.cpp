// Hydra's override grammar (hydra/grammar/OverrideLexer.g4 + OverrideParser.g4, Hydra 1.3) as a
// hand-written two-mode lexer and a recursive-descent parser. The lexer reproduces ANTLR's rule:
// at each position the longest token wins, ties go to the rule listed first in the grammar. That
// rule alone decides the typing quirks (`007` is three INT tokens, hence a string; `inf` is a
// FLOAT, `Infinity` an ID), so following it is what keeps us identical to Hydra.
#include "trainer/config/override.h"
#include "trainer/config/big_int.h"
#include "trainer/config/python_str.h"
#include "trainer/config/python_value.h"
#include "override_functions.h"
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
  Value call(const std::string& name, std::vector<Value>& args, KeywordArguments& kwargs,
             size_t begin, size_t end);

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
  KeywordArguments kwargs;
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

Value Parser::call(const std::string& name, std::vector<Value>& args, KeywordArguments& kwargs,
                   size_t begin, size_t end) {
  std::optional<Value> result;
  try {
    result = call_function(name, args, kwargs);
  } catch (FunctionFailure& failure) {
    std::string call_text(text_.substr(begin, end - begin));
    fail("in '" + call_text + "': " + failure.problem,
         failure.fix.empty() ? "see the function's arguments in the override grammar "
                               "(choice, range, interval, glob, sort, shuffle, tag, int, float, "
                               "str, bool)"
                             : failure.fix);
  }
  if (result) return std::move(*result);
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
