// Hydra's override grammar (hydra/grammar/OverrideParser.g4, Hydra 1.3) as a recursive-descent
// parser over the tokens of override_lexer.h: the key with its prefix and package, then the value
// (primitives, quoted strings, lists, dicts, function calls, `a,b,c` sweeps) as an override_value.h
// Value, typed as Hydra types it, with function calls evaluated by override_functions.h. Every
// error names the override, the column and a way out.
#include "trainer/config/override.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "trainer/config/big_int.h"
#include "trainer/config/python_value.h"
#include "trainer/util/error.h"

#include "override_functions.h"
#include "override_lexer.h"
#include "override_value.h"

namespace trainer::config {
namespace {

using namespace override_detail;

[[noreturn]] void throw_override_error(std::string_view text, std::string problem, std::string fix) {
  if (!fix.empty() && fix[0] >= 'a' && fix[0] <= 'z') fix[0] = static_cast<char>(fix[0] - 'a' + 'A');
  throw Error("override '" + std::string(text) + "'", std::move(problem), std::move(fix));
}

class Parser {
 public:
  // `tokens` is scratch space reused across calls, so a plain override allocates nothing for it.
  Parser(std::string_view text, std::vector<Token>& tokens) : text_(text), tokens_(tokens) {}

  Override parse();

 private:
  // Key mode.
  void parse_key(Override& out);
  // Value mode.
  void tokenize_value(size_t p);
  Value parse_value();
  Value parse_element();
  Value parse_primitive();
  Value parse_dict_key();
  Value parse_list();
  Value parse_dict();
  Value parse_function();
  Value make_primitive(size_t first, size_t last);
  Value call(const std::string& name, std::vector<Value>& args, KeywordArguments& kwargs, size_t begin, size_t end);

  const Token& peek(size_t ahead = 0) const {
    size_t k = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[k];
  }
  std::string_view token_text(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }
  bool is_primitive_token(Tok t, bool dict_key) const {
    switch (t) {
      case Tok::kId:
      case Tok::kNull:
      case Tok::kInt:
      case Tok::kFloat:
      case Tok::kBool:
      case Tok::kUnquotedChar:
      case Tok::kEsc:
      case Tok::kWs:
        return true;
      case Tok::kColon:
      case Tok::kInterpolation:
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
  // A shell strips the quotes typed around the value: the whole override goes in double quotes
  // there (when nothing in it is special inside them).
  if (qc == '\'' && out.find_first_of("\"$`\\!") == std::string::npos) {
    out += " (on a shell command line, with the whole override in double quotes: \"" + out + "\")";
  }
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
    // In a list ([--cpu-bind=none]) the elements are quoted, so that the value stays a list.
    std::string_view value = text_.substr(value_begin_);
    while (!value.empty() && is_ws(value.back())) value.remove_suffix(1);
    if (value.size() > 2 && value.front() == '[' && value.back() == ']' &&
        value.find_first_of("'\"\\$`!") == std::string_view::npos) {
      std::string list = std::string(text_.substr(0, value_begin_)) + "[";
      std::string_view rest = value.substr(1, value.size() - 2);
      for (size_t start = 0; start <= rest.size();) {
        size_t end = rest.find(',', start);
        if (end == std::string_view::npos) end = rest.size();
        std::string_view element = rest.substr(start, end - start);
        while (!element.empty() && is_ws(element.front())) element.remove_prefix(1);
        while (!element.empty() && is_ws(element.back())) element.remove_suffix(1);
        list += (start == 0 ? "'" : ",'") + std::string(element) + "'";
        start = end + 1;
      }
      list += "]";
      fail("unexpected '=' in the value at " + column(col),
           "quote the list's elements, " + list +
               " (on a shell command line, with the whole override in double "
               "quotes: \"" +
               list + "\"), or escape it as \\=");
    }
    fail("unexpected '=' in the value at " + column(col), "quote it, " + quoted_suggestion() + ", or escape it as \\=");
  }
  if (t.type == Tok::kQuoted) {
    fail("a quoted string at " + column(col) + " must be the whole value or a whole list/dict element",
         "quote the entire value: " + quoted_suggestion());
  }
  std::string shown = what.empty() ? std::string("whitespace") : "'" + std::string(what) + "'";
  std::string fix = "quote the value if it is meant as text: " + quoted_suggestion();
  if (what == "[" || what == "]" || what == "{" || what == "}" || what == "(" || what == ")" || what == "," ||
      what == ":") {
    fix = "balance the brackets, or quote the value (" + quoted_suggestion() +
          ") or escape the character with a backslash (\\" + std::string(what) + ") if it is meant as text";
  }
  fail("unexpected " + shown + " at " + column(col) + " (expected " + expected + ")", fix);
}

void Parser::parse_key(Override& out) {
  // Lex the key part: it ends at the first '=' (which starts the value mode).
  static thread_local std::vector<KeyToken> tokens;
  const size_t p = lex_key(text_, tokens);
  const bool saw_equal = !tokens.empty() && tokens.back().kind == KeyTok::kEqual;
  if (!saw_equal && p < text_.size()) {
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
  size_t k = 0;
  auto kind_at = [&](size_t j) { return j < tokens.size() ? std::optional<KeyTok>(tokens[j].kind) : std::nullopt; };
  auto is_name = [](std::optional<KeyTok> kind) {
    return kind == KeyTok::kId || kind == KeyTok::kKeySpecial || kind == KeyTok::kDotPath;
  };
  if (kind_at(0) == KeyTok::kTilde) {
    out.kind = OverrideKind::kDelete;
    k = 1;
  } else if (kind_at(0) == KeyTok::kPlus) {
    out.kind = OverrideKind::kAdd;
    k = 1;
    if (kind_at(1) == KeyTok::kPlus) {
      out.kind = OverrideKind::kForceAdd;
      k = 2;
    }
  }
  // packageOrGroup: package | ID (SLASH ID)+
  size_t key_begin = k < tokens.size() ? tokens[k].begin : text_.size();
  const std::optional<KeyTok> first = kind_at(k);
  if (is_name(first)) {
    ++k;
    if (first == KeyTok::kId) {
      while (kind_at(k) == KeyTok::kSlash && kind_at(k + 1) == KeyTok::kId) k += 2;
    }
  }
  size_t key_end = k < tokens.size() ? tokens[k].begin : (saw_equal ? tokens.back().begin : p);
  out.key = std::string(text_.substr(key_begin, key_end - key_begin));
  if (kind_at(k) == KeyTok::kAt) {  // AT package (which may be empty)
    size_t pkg_begin = tokens[k].end;
    ++k;
    if (is_name(kind_at(k))) ++k;
    size_t pkg_end = k < tokens.size() ? tokens[k].begin : p;
    out.package = std::string(text_.substr(pkg_begin, pkg_end - pkg_begin));
  }
  if (out.key.empty()) {
    size_t at = k < tokens.size() ? tokens[k].begin : p;
    fail("the key is missing at " + column(at),
         "write key=value, +key=value, ++key=value or ~key, e.g. model.hidden_size=32");
  }
  if (k < tokens.size() && tokens[k].kind != KeyTok::kEqual) {
    const KeyToken& t = tokens[k];
    std::string shown(text_.substr(t.begin, t.end - t.begin));
    std::string fix =
        "a key is a dotted path (a.b.0), a config group path (server/db) or "
        "GROUP@PACKAGE; write it as key=value";
    if (t.kind == KeyTok::kSlash) {
      fix = "group paths use plain names (hydra/launcher); dotted keys cannot contain '/'";
    }
    if (t.kind == KeyTok::kColon) fix = "a package is one dotted path: db@src.pkg=mysql";
    if (t.kind == KeyTok::kPlus) fix = "use + to add or ++ to add-or-change, in front of the key only";
    fail("unexpected '" + shown + "' in the key at " + column(t.begin), fix);
  }
  if (!saw_equal) {
    if (out.kind == OverrideKind::kDelete) {
      out.has_value = false;
      value_begin_ = text_.size();
      return;
    }
    fail("missing '=' after the key", "write " + std::string(out.prefix()) + out.key_with_package() + "=VALUE (or " +
                                          out.key_with_package() + "= for an empty string; ~" + out.key_with_package() +
                                          " deletes it)");
  }
  out.has_value = true;
  // EQUAL: '=' WS?
  value_begin_ = tokens.back().end + whitespace_len(text_, tokens.back().end);
}

void Parser::tokenize_value(size_t p) {
  p = lex_value(text_, p, tokens_);
  pos_ = 0;
  if (p == text_.size()) return;
  const char c0 = text_[p];
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
  fail("'" + ch + "' is not allowed in an unquoted value (" + column(p) + ")", "quote it: " + quoted_suggestion());
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
    case Tok::kBracketOpen:
      return parse_list();
    case Tok::kBraceOpen:
      return parse_dict();
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
      fail("a value made only of whitespace at " + column(tokens_[b].begin), "quote it to keep the spaces: key=' '");
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
      case Tok::kBool:
        return Value::boolean(s[0] == 't' || s[0] == 'T');
      case Tok::kNull:
        return Value();
      case Tok::kEsc: {
        std::string out;
        for (size_t k = 1; k < s.size(); k += 2) out += s[k];
        return Value::str(std::move(out));
      }
      default:
        return Value::str(std::string(s));
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
        fail("a sweep cannot be nested inside a dict", "sweep over whole dicts instead: key={a:1},{a:2}");
      }
      // Python's dict: a repeated key keeps its first position and takes the last value.
      size_t k = 0;
      while (k + 1 < dict.items.size() && !(values_equal(dict.items[k], key) && dict.items[k].kind == key.kind)) k += 2;
      if (k + 1 < dict.items.size()) {
        dict.items[k + 1] = std::move(value);
      } else {
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
          fail("positional argument follows keyword argument in " + name + "() at " + column(arg_begin),
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

Value Parser::call(const std::string& name, std::vector<Value>& args, KeywordArguments& kwargs, size_t begin,
                   size_t end) {
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
       "bool; if the value is text, quote it (" +
           quoted_suggestion() + ") or escape the parentheses with \\( \\)");
}

Override Parser::parse() {
  Override out;
  out.text = std::string(text_);
  parse_key(out);
  if (!out.has_value) {
    out.value_text = "null";
    return out;
  }
  tokenize_value(value_begin_);
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
    case OverrideKind::kAdd:
      return "+";
    case OverrideKind::kForceAdd:
      return "++";
    case OverrideKind::kDelete:
      return "~";
    case OverrideKind::kChange:
      return "";
  }
  return "";
}

std::string Override::key_with_package() const { return package ? key + "@" + *package : key; }

Override parse_override(std::string_view text) {
  static thread_local std::vector<Token> tokens;
  return Parser(text, tokens).parse();
}

std::vector<Override> parse_overrides(const std::vector<std::string>& texts) {
  std::vector<Override> parsed;
  std::string problems;
  for (const std::string& text : texts) {
    try {
      parsed.push_back(parse_override(text));
    } catch (const Error& error) {
      problems += (problems.empty() ? "" : "\n") + std::string(error.what());
    }
  }
  if (!problems.empty()) throw Error("", problems);
  return parsed;
}

}  // namespace trainer::config
