// Hydra's override lexer: character classes and token lengths straight from OverrideLexer.g4, and
// the longest-match loop of each mode (see override_lexer.h).
#include "override_lexer.h"

#include <algorithm>
#include <cstring>

namespace trainer::config::override_detail {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

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
      if (at(q) == '_' && is_digit(at(q + 1)))
        q += 2;
      else if (is_digit(at(q)))
        ++q;
      else
        break;
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
      if (is_alpha(c) || is_digit(c) || c == '_' || c == '-' || (dollar && c == '$'))
        ++q;
      else
        break;
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

// KEY mode: the token at `p` and its length, 0 when no rule matches.
size_t lex_key_token(const Scanner& scan, size_t p, KeyTok& kind) {
  char c = scan.at(p);
  switch (c) {
    case '=':
      kind = KeyTok::kEqual;
      return 1;
    case '~':
      kind = KeyTok::kTilde;
      return 1;
    case '+':
      kind = KeyTok::kPlus;
      return 1;
    case '@':
      kind = KeyTok::kAt;
      return 1;
    case ':':
      kind = KeyTok::kColon;
      return 1;
    case '/':
      kind = KeyTok::kSlash;
      return 1;
    default:
      break;
  }
  size_t id = scan.id_len(p);
  size_t special = scan.id_len(p, true);
  size_t dot = scan.dot_path_len(p);
  size_t best = 0;
  if (id > best) {
    best = id;
    kind = KeyTok::kId;
  }
  if (special > best) {
    best = special;
    kind = KeyTok::kKeySpecial;
  }
  if (dot > best) {
    best = dot;
    kind = KeyTok::kDotPath;
  }
  return best;
}

}  // namespace

size_t whitespace_len(std::string_view text, size_t p) { return Scanner(text).ws_len(p); }

size_t lex_key(std::string_view text, std::vector<KeyToken>& tokens) {
  const Scanner scan(text);
  tokens.clear();
  size_t p = 0;
  while (p < text.size()) {
    KeyTok kind = KeyTok::kEqual;
    const size_t len = lex_key_token(scan, p, kind);
    if (len == 0) return p;
    tokens.push_back({kind, p, p + len});
    p += len;
    if (kind == KeyTok::kEqual) break;
  }
  return p;
}

size_t lex_value(std::string_view text, size_t p, std::vector<Token>& tokens) {
  const Scanner scan(text);
  tokens.clear();
  while (p < text.size()) {
    size_t best = 0;
    Tok type = Tok::kEof;
    auto consider = [&](Tok t, size_t len) {
      if (len > best) {
        best = len;
        type = t;
      }
    };
    size_t w = scan.ws_len(p);
    char c = scan.at(p + w);
    char c0 = scan.at(p);
    if (c == '(') consider(Tok::kPopen, w + 1 + scan.ws_len(p + w + 1));
    if (c == ',') consider(Tok::kComma, w + 1 + scan.ws_len(p + w + 1));
    if (c == ')') consider(Tok::kPclose, w + 1);
    if (c0 == '[') consider(Tok::kBracketOpen, 1 + scan.ws_len(p + 1));
    if (c == ']') consider(Tok::kBracketClose, w + 1);
    if (c0 == '{') consider(Tok::kBraceOpen, 1 + scan.ws_len(p + 1));
    if (c == '}') consider(Tok::kBraceClose, w + 1);
    if (c == ':') consider(Tok::kColon, w + 1 + scan.ws_len(p + w + 1));
    if (c == '=') consider(Tok::kEqual, w + 1 + scan.ws_len(p + w + 1));
    consider(Tok::kFloat, scan.float_len(p));
    consider(Tok::kInt, scan.int_len(p));
    if (scan.ci_match(p, "true")) consider(Tok::kBool, 4);
    if (scan.ci_match(p, "false")) consider(Tok::kBool, 5);
    if (scan.ci_match(p, "null")) consider(Tok::kNull, 4);
    if (c0 != '\0' && std::strchr("/-\\+.$%*@?|", c0)) consider(Tok::kUnquotedChar, 1);
    consider(Tok::kId, scan.id_len(p));
    consider(Tok::kEsc, scan.esc_len(p));
    consider(Tok::kWs, w);
    consider(Tok::kQuoted, scan.quoted_len(p));
    consider(Tok::kInterpolation, scan.interpolation_len(p));
    if (best == 0) return p;
    tokens.push_back({type, static_cast<uint32_t>(p), static_cast<uint32_t>(p + best)});
    p += best;
  }
  tokens.push_back({Tok::kEof, static_cast<uint32_t>(text.size()), static_cast<uint32_t>(text.size())});
  return text.size();
}

}  // namespace trainer::config::override_detail
