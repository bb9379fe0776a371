#include "interpolation_grammar.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace trainer::config::grammar {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignoring_case(std::string_view text, std::string_view word) {
  if (text.size() != word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (lower(text[i]) != word[i]) return false;
  }
  return true;
}

// DIGIT ('_'? DIGIT)*
bool match_digits(std::string_view s, size_t& i) {
  if (i >= s.size() || !is_digit(s[i])) return false;
  ++i;
  while (i < s.size()) {
    if (is_digit(s[i])) {
      ++i;
    } else if (s[i] == '_' && i + 1 < s.size() && is_digit(s[i + 1])) {
      i += 2;
    } else {
      break;
    }
  }
  return true;
}

// INT_UNSIGNED: '0' | [1-9] ('_'? DIGIT)*
bool match_unsigned(std::string_view s, size_t& i) {
  if (i < s.size() && s[i] == '0') {
    ++i;
    return true;
  }
  return match_digits(s, i);
}

bool match_exponent(std::string_view s, size_t& i) {
  if (i >= s.size() || (s[i] != 'e' && s[i] != 'E')) return false;
  size_t j = i + 1;
  if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
  if (!match_digits(s, j)) return false;
  i = j;
  return true;
}

bool is_float_text(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::string_view body = s.substr(i);
  if (equals_ignoring_case(body, "inf") || equals_ignoring_case(body, "nan")) return true;
  const bool has_int = match_unsigned(s, i);
  bool has_point = false;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    const bool has_fraction = match_digits(s, j);
    if (!has_int && !has_fraction) return false;
    has_point = true;
    i = j;
  } else if (!has_int) {
    return false;
  }
  const bool has_exponent = match_exponent(s, i);
  return i == s.size() && (has_point || has_exponent);
}

bool is_int_text(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  return match_unsigned(s, i) && i == s.size();
}

std::string without_underscores(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '_') out += c;
  }
  return out;
}

// Characters that may appear in an unquoted resolver argument besides letters and digits
// (OmegaConf's ID and UNQUOTED_CHAR tokens).
bool is_unquoted_char(char c) { return is_alpha(c) || is_digit(c) || std::strchr("_-/+.$%*@?|\\", c) != nullptr; }

// Characters that a backslash escapes in an unquoted argument.
bool is_escapable(char c) { return c != '\0' && std::strchr("\\()[]{}:=, \t", c) != nullptr; }

// Characters that end a key inside `${...}`.
bool is_key_stop(char c) { return std::strchr("\\{}()[]:. \t'\"", c) != nullptr; }

std::string describe_char(char c) {
  if (c == ' ') return "' '";
  if (c == '\t') return "a tab";
  return std::string("'") + c + "'";
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Template top_level() {
    Template result;
    std::string text;
    while (!at_end()) {
      const char c = s_[pos_];
      if (c == '\\') {
        // Backslashes only mean something right before `${`: an odd run escapes the
        // interpolation, and either way each pair stands for one backslash.
        if (!take_escape(text, "${")) take_backslashes(text);
        continue;
      }
      if (c == '$' && peek(1) == '{') {
        flush(text, result.pieces);
        result.pieces.push_back(Piece{{}, interpolation()});
        continue;
      }
      text += c;
      ++pos_;
    }
    flush(text, result.pieces);
    return result;
  }

  Element single_element() {
    if (at_end()) fail("expected a value");
    Element result = element(false);
    if (!at_end()) fail("unexpected " + describe_char(peek()) + " after the value");
    return result;
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool starts_with_at(size_t at, std::string_view prefix) const {
    return s_.size() >= at + prefix.size() && s_.substr(at, prefix.size()) == prefix;
  }
  size_t count_backslashes() const {
    size_t end = pos_;
    while (end < s_.size() && s_[end] == '\\') ++end;
    return end - pos_;
  }
  // The run of backslashes at pos_ when `escaped` (`${`, or a closing quote) follows it: an odd run
  // escapes it, and each pair stands for one backslash. False, taking nothing, when it does not.
  bool take_escape(std::string& text, std::string_view escaped) {
    const size_t run = count_backslashes();
    const size_t after = pos_ + run;
    if (!starts_with_at(after, escaped)) return false;
    text.append(run / 2, '\\');
    if (run % 2 == 1) {
      text += escaped;
      pos_ = after + escaped.size();
    } else {
      pos_ = after;
    }
    return true;
  }
  // Backslashes anywhere else stand for themselves.
  void take_backslashes(std::string& text) {
    const size_t run = count_backslashes();
    text.append(run, '\\');
    pos_ += run;
  }
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  [[noreturn]] void fail(const std::string& message) const { throw SyntaxError(message, pos_); }
  void expect(char c, const char* what) {
    if (peek() != c || at_end()) {
      fail(std::string("expected '") + c + "' " + what +
           (at_end() ? " but the text ended" : " but found " + describe_char(peek())));
    }
    ++pos_;
  }
  static void flush(std::string& text, std::vector<Piece>& pieces) {
    if (text.empty()) return;
    pieces.push_back(Piece{std::move(text), nullptr});
    text.clear();
  }

  // At "${": a node path or a resolver call.
  std::unique_ptr<Interpolation> interpolation() {
    const size_t start = pos_;
    pos_ += 2;
    skip_ws();
    auto result = std::make_unique<Interpolation>();
    while (peek() == '.') {
      ++result->dots;
      ++pos_;
    }
    bool used_brackets = false;
    if (peek() == '[') {
      bracket_key(result->keys);
      used_brackets = true;
    } else {
      result->keys.push_back(config_key());
    }
    while (!at_end()) {
      if (peek() == '.') {
        ++pos_;
        result->keys.push_back(config_key());
      } else if (peek() == '[') {
        bracket_key(result->keys);
        used_brackets = true;
      } else {
        break;
      }
    }
    skip_ws();
    if (peek() == '}' && !at_end()) {
      ++pos_;
    } else if (peek() == ':') {
      if (result->dots > 0 || used_brackets) fail("a resolver name cannot start with '.' or use []");
      for (const Piece& part : result->keys) {
        if (!part.interpolation && !is_identifier(part.text)) {
          fail("'" + part.text + "' is not a valid resolver name part");
        }
      }
      result->is_resolver = true;
      result->name = std::move(result->keys);
      result->keys.clear();
      ++pos_;
      skip_ws();
      if (peek() != '}' || at_end()) {
        result->args = sequence('}');
      }
      expect('}', "to close the interpolation");
    } else if (at_end()) {
      fail("'${' is not closed by '}'");
    } else {
      fail("unexpected " + describe_char(peek()) + " in an interpolation");
    }
    result->text = std::string(s_.substr(start, pos_ - start));
    return result;
  }

  void bracket_key(std::vector<Piece>& keys) {
    ++pos_;
    keys.push_back(config_key());
    expect(']', "after the key");
  }

  Piece config_key() {
    if (peek() == '$' && peek(1) == '{') return Piece{{}, interpolation()};
    const size_t start = pos_;
    while (!at_end() && !is_key_stop(s_[pos_])) ++pos_;
    if (pos_ == start) {
      fail(at_end() ? "expected a key but the text ended" : "expected a key but found " + describe_char(peek()));
    }
    return Piece{std::string(s_.substr(start, pos_ - start)), nullptr};
  }

  // Comma-separated elements up to `close` (not consumed). Missing elements are "".
  std::vector<Element> sequence(char close) {
    std::vector<Element> items;
    skip_ws();
    if (peek() == close && !at_end()) return items;
    while (true) {
      skip_ws();
      if (at_end()) fail(std::string("expected '") + close + "' but the text ended");
      if (peek() == ',' || peek() == close) {
        Element empty;
        empty.constant = Node::string("");
        items.push_back(std::move(empty));
      } else {
        items.push_back(element(true));
      }
      skip_ws();
      if (peek() == ',' && !at_end()) {
        ++pos_;
        continue;
      }
      if (peek() == close && !at_end()) break;
      if (at_end()) fail(std::string("expected '") + close + "' but the text ended");
      fail("unexpected " + describe_char(peek()) + "; quote the value or escape it with '\\'");
    }
    return items;
  }

  Element element(bool trim_trailing) {
    const char c = peek();
    if (c == '[') {
      ++pos_;
      Element result;
      result.kind = Element::Kind::kList;
      result.items = sequence(']');
      expect(']', "to close the list");
      return result;
    }
    if (c == '{') return dict();
    if (c == '\'' || c == '"') return quoted();
    return primitive(false, trim_trailing);
  }

  Element dict() {
    ++pos_;
    Element result;
    result.kind = Element::Kind::kDict;
    skip_ws();
    if (peek() == '}' && !at_end()) {
      ++pos_;
      return result;
    }
    while (true) {
      Element key = primitive(true, true);
      result.keys.push_back(std::move(key.constant));
      skip_ws();
      expect(':', "after a dict key");
      skip_ws();
      if (at_end() || peek() == ',' || peek() == '}') fail("a dict key needs a value");
      result.items.push_back(element(true));
      skip_ws();
      if (peek() == ',' && !at_end()) {
        ++pos_;
        skip_ws();
        continue;
      }
      expect('}', "to close the dict");
      break;
    }
    return result;
  }

  Element quoted() {
    const char quote = s_[pos_++];
    Element result;
    std::vector<Piece> pieces;
    std::string text;
    while (true) {
      if (at_end()) fail(std::string("the quoted string is not closed by ") + quote);
      const char c = s_[pos_];
      if (c == '\\') {
        if (!take_escape(text, std::string_view(&quote, 1)) && !take_escape(text, "${")) take_backslashes(text);
        continue;
      }
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c == '$' && peek(1) == '{') {
        flush(text, pieces);
        pieces.push_back(Piece{{}, interpolation()});
        continue;
      }
      text += c;
      ++pos_;
    }
    flush(text, pieces);
    bool has_interpolation = false;
    for (const Piece& piece : pieces) has_interpolation |= piece.interpolation != nullptr;
    if (!has_interpolation) {
      result.constant = Node::string(pieces.empty() ? std::string() : std::move(pieces[0].text));
    } else {
      // Quoted values are always strings, even `'${x}'`.
      result.kind = Element::Kind::kConcat;
      result.pieces = std::move(pieces);
    }
    return result;
  }

  // Unquoted tokens: typed when the whole (trimmed) text is one int/float/bool/null token.
  Element primitive(bool dict_key, bool trim_trailing) {
    Element result;
    std::vector<Piece> pieces;
    std::string text;
    size_t trailing_ws = 0;
    bool escaped = false;
    const size_t start = pos_;
    while (!at_end()) {
      const char c = s_[pos_];
      if (c == '\\') {
        if (is_escapable(peek(1))) {
          text += peek(1);
          pos_ += 2;
          escaped = true;
        } else {
          text += c;
          ++pos_;
        }
        trailing_ws = 0;
        continue;
      }
      if (c == '$' && peek(1) == '{') {
        if (dict_key) fail("a dict key cannot contain an interpolation");
        flush(text, pieces);
        pieces.push_back(Piece{{}, interpolation()});
        trailing_ws = 0;
        continue;
      }
      if (c == ' ' || c == '\t') {
        text += c;
        ++pos_;
        ++trailing_ws;
        continue;
      }
      if (c == ':') {
        if (dict_key) break;
        text += c;
        ++pos_;
        trailing_ws = 0;
        continue;
      }
      if (std::strchr(",]}[{'\"", c) != nullptr) break;
      if (!is_unquoted_char(c)) {
        fail("character " + describe_char(c) + " is not allowed in an unquoted value; put the value in quotes");
      }
      text += c;
      ++pos_;
      trailing_ws = 0;
    }
    // Blanks before ',', ']', '}' or ':' belong to that token (OmegaConf's lexer), not the value.
    if (trim_trailing && trailing_ws > 0) text.resize(text.size() - trailing_ws);
    flush(text, pieces);
    if (pieces.empty()) {
      if (pos_ == start && !at_end()) fail("unexpected " + describe_char(peek()));
      fail(dict_key ? "expected a dict key" : "expected a value");
    }
    bool has_interpolation = false;
    for (const Piece& piece : pieces) has_interpolation |= piece.interpolation != nullptr;
    if (pieces.size() == 1 && has_interpolation) {
      result.kind = Element::Kind::kInterpolation;
      result.pieces = std::move(pieces);
      return result;
    }
    if (has_interpolation) {
      result.kind = Element::Kind::kConcat;
      result.pieces = std::move(pieces);
      return result;
    }
    std::string& value = pieces[0].text;
    const bool blank_inside = value.find_first_of(" \t") != std::string::npos;
    if (escaped || blank_inside || !type_token(value, result.constant)) {
      result.constant = Node::string(std::move(value));
    }
    return result;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

bool is_identifier(std::string_view text) {
  if (text.empty() || !(is_alpha(text[0]) || text[0] == '_')) return false;
  for (char c : text) {
    if (!(is_alpha(c) || is_digit(c) || c == '_' || c == '-')) return false;
  }
  return true;
}

bool type_token(std::string_view text, Node& out) {
  if (equals_ignoring_case(text, "null")) {
    out = Node();
    return true;
  }
  if (equals_ignoring_case(text, "true") || equals_ignoring_case(text, "false")) {
    out = Node::boolean(lower(text[0]) == 't');
    return true;
  }
  if (is_int_text(text)) {
    const std::string digits = without_underscores(text);
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(digits.c_str(), &end, 10);
    if (errno == ERANGE) {
      out = Node::integer_text(digits);  // Python ints are unbounded
    } else {
      out = Node::integer(value);
    }
    return true;
  }
  if (is_float_text(text)) {
    const std::string digits = without_underscores(text);
    out = Node::floating(std::strtod(digits.c_str(), nullptr));
    return true;
  }
  return false;
}

Template parse_template(std::string_view text) { return Parser(text).top_level(); }

Element parse_element(std::string_view text) { return Parser(text).single_element(); }

}  // namespace trainer::config::grammar
