// Writes a Node as OmegaConf.to_yaml prints it: PyYAML's block-style emitter (indent 2, width
// 80, allow_unicode, keys in order) with OmegaConf's string representer, which single-quotes any
// string that Python's int() or float() accepts or that is a YAML 1.1 boolean word. The emitter's
// column, indentation and style choices are followed step by step so that quoting and line
// folding come out byte for byte the same.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/python_value.h"
#include "trainer/config/yaml.h"

#include "utf8.h"
#include "yaml_scalar.h"

namespace trainer::config {
namespace {

constexpr int kBestIndent = 2;
constexpr int kBestWidth = 80;
constexpr char32_t kNone = 0xFFFFFFFF;  // "no character": the end of the text

bool is_break(char32_t ch) { return ch == '\n' || ch == 0x85 || ch == 0x2028 || ch == 0x2029; }
bool is_space_or_break(char32_t ch) { return ch == ' ' || is_break(ch); }
// PyYAML's "whitespace" set for indicator checks: '\0 \t\r\n\x85\u2028\u2029'.
bool is_yaml_whitespace(char32_t ch) {
  return ch == 0 || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == 0x85 || ch == 0x2028 || ch == 0x2029;
}

// Python's str.isspace().
bool is_python_space(char32_t ch) {
  return (ch >= 0x09 && ch <= 0x0D) || (ch >= 0x1C && ch <= 0x20) || ch == 0x85 || ch == 0xA0 || ch == 0x1680 ||
         (ch >= 0x2000 && ch <= 0x200A) || ch == 0x2028 || ch == 0x2029 || ch == 0x202F || ch == 0x205F || ch == 0x3000;
}

// The value (0-9) of a Unicode decimal digit (category Nd), or -1. Python's int() and float()
// accept any of them; every Nd block is ten consecutive code points starting at one of these.
int unicode_digit(char32_t ch) {
  static constexpr char32_t kZeros[] = {
      0x30,    0x660,   0x6f0,   0x7c0,   0x966,   0x9e6,   0xa66,   0xae6,   0xb66,   0xbe6,   0xc66,
      0xce6,   0xd66,   0xde6,   0xe50,   0xed0,   0xf20,   0x1040,  0x1090,  0x17e0,  0x1810,  0x1946,
      0x19d0,  0x1a80,  0x1a90,  0x1b50,  0x1bb0,  0x1c40,  0x1c50,  0xa620,  0xa8d0,  0xa900,  0xa9d0,
      0xa9f0,  0xaa50,  0xabf0,  0xff10,  0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0,
      0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60,
      0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0};
  if (ch < 0x30) return -1;
  if (ch <= 0x39) return static_cast<int>(ch - 0x30);
  if (ch < 0x80) return -1;
  for (char32_t zero : kZeros)
    if (ch >= zero && ch < zero + 10) return static_cast<int>(ch - zero);
  return -1;
}

// A string as Python sees it: code points, plus where each starts in the UTF-8 bytes.
struct Text {
  std::string_view bytes;
  std::vector<char32_t> chars;
  std::vector<uint32_t> offsets;  // offsets[i] = byte offset of chars[i]; offsets[n] = size

  void assign(std::string_view s) {
    bytes = s;
    chars.clear();
    offsets.clear();
    bool ascii = true;
    for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii) {
      chars.resize(s.size());
      offsets.resize(s.size() + 1);
      for (size_t k = 0; k < s.size(); ++k) {
        chars[k] = static_cast<unsigned char>(s[k]);
        offsets[k] = static_cast<uint32_t>(k);
      }
      offsets[s.size()] = static_cast<uint32_t>(s.size());
      return;
    }
    size_t i = 0;
    while (i < s.size()) {
      offsets.push_back(static_cast<uint32_t>(i));
      unsigned char c = static_cast<unsigned char>(s[i]);
      char32_t cp = c;
      size_t len = 1;
      if (c >= 0xF0 && c < 0xF8) {
        cp = c & 0x07;
        len = 4;
      } else if (c >= 0xE0) {
        cp = c & 0x0F;
        len = 3;
      } else if (c >= 0xC0) {
        cp = c & 0x1F;
        len = 2;
      } else if (c >= 0x80) {
        len = 0;  // stray continuation byte
      }
      bool ok = len > 0 && i + len <= s.size() && c < 0xF8;
      for (size_t k = 1; ok && k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) ok = false;
        cp = (cp << 6) | (cc & 0x3F);
      }
      if (!ok) {
        // Invalid UTF-8: keep the byte as a lone surrogate (Python's surrogateescape), which the
        // emitter treats as a special character and escapes.
        cp = 0xDC00 + c;
        len = 1;
      }
      chars.push_back(cp);
      i += len;
    }
    offsets.push_back(static_cast<uint32_t>(s.size()));
  }
  size_t size() const { return chars.size(); }
  std::string_view slice(size_t start, size_t end) const {
    return bytes.substr(offsets[start], offsets[end] - offsets[start]);
  }
};

// Python's int(s) / float(s) succeed? Both first turn Unicode spaces into ' ' and Unicode digits
// into ASCII ones, then strip spaces and parse ASCII with `_` allowed between digits (that last
// part is python_int_syntax / python_float_syntax). Writes the stripped ASCII text into `ascii`
// (reused, so no allocation) and returns false when a character rules out both parses.
bool python_number_ascii(const Text& text, std::string& ascii) {
  ascii.clear();
  for (char32_t ch : text.chars) {
    if (is_python_space(ch)) {
      ascii.push_back(' ');
    } else if (ch < 0x80) {
      char c = static_cast<char>(ch);
      // Only these can appear in something int() or float() accepts.
      if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == '_' || c == 'e' || c == 'E' ||
            c == 'i' || c == 'I' || c == 'n' || c == 'N' || c == 'f' || c == 'F' || c == 'a' || c == 'A' || c == 't' ||
            c == 'T' || c == 'y' || c == 'Y'))
        return false;
      ascii.push_back(c);
    } else if (int d = unicode_digit(ch); d >= 0) {
      ascii.push_back(static_cast<char>('0' + d));
    } else {
      return false;
    }
  }
  size_t b = 0;
  size_t e = ascii.size();
  while (b < e && ascii[b] == ' ') ++b;
  while (e > b && ascii[e - 1] == ' ') --e;
  ascii.erase(e);
  ascii.erase(0, b);
  return !ascii.empty();
}

bool equals_ignore_case(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(a[k])) != lower[k]) return false;
  return true;
}

bool is_omegaconf_bool_word(std::string_view s) {
  // OmegaConf's YAML_BOOL_TYPES: the YAML 1.1 words plus y/Y/n/N.
  if (s == "y" || s == "Y" || s == "n" || s == "N") return true;
  return yaml_detail::resolve_plain(s, {false, false}) == yaml_detail::PlainKind::kBool;
}

// A common config string that PyYAML certainly prints plain: ASCII, no spaces, starts with a
// letter (or _ / $ ( ) and is not a word YAML or Python would read as bool/null/inf/nan. Lets the
// writer skip the full analysis for identifiers, paths and interpolations.
bool trivially_plain(std::string_view s) {
  if (s.empty() || s.size() > 100) return false;
  char first = s[0];
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_' || first == '/' ||
        first == '$' || first == '('))
    return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    switch (c) {
      case '_':
      case '.':
      case '/':
      case '$':
      case '{':
      case '}':
      case '(':
      case ')':
      case '+':
      case '=':
      case '-':
      case ':':
      case '[':
      case ']':
      case ',':
      case '@':
      case '%':
        ok = true;
        break;
      default:
        break;
    }
    if (!ok) return false;
  }
  if (s.back() == ':') return false;
  if (s.size() <= 8) {
    // y/n (OmegaConf), YAML 1.1 bool and null words, Python's inf/nan/infinity.
    if (s.size() == 1 && (first == 'y' || first == 'Y' || first == 'n' || first == 'N')) return false;
    auto kind = yaml_detail::resolve_plain(s, {false, true});
    if (kind != yaml_detail::PlainKind::kString) return false;
    if (equals_ignore_case(s, "inf") || equals_ignore_case(s, "nan") || equals_ignore_case(s, "infinity")) return false;
  }
  return true;
}

struct Analysis {
  bool empty = false;
  bool multiline = false;
  bool allow_block_plain = true;
  bool allow_single_quoted = true;
};

Analysis analyze(const Text& text) {
  Analysis a;
  const size_t n = text.size();
  if (n == 0) {
    a.empty = true;
    return a;
  }
  const auto& s = text.chars;
  bool block_indicators = false;
  bool line_breaks = false;
  bool special_characters = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false,
       break_space = false, space_break = false;
  if (n >= 3 && ((s[0] == '-' && s[1] == '-' && s[2] == '-') || (s[0] == '.' && s[1] == '.' && s[2] == '.')))
    block_indicators = true;
  bool preceded_by_whitespace = true;
  bool followed_by_whitespace = n == 1 || is_yaml_whitespace(s[1]);
  bool previous_space = false;
  bool previous_break = false;
  for (size_t index = 0; index < n; ++index) {
    char32_t ch = s[index];
    if (index == 0) {
      if (ch == '?' || ch == ':' || ch == '-') {
        if (followed_by_whitespace) block_indicators = true;
      } else if (yaml_detail::is_indicator(ch)) {
        block_indicators = true;
      }
    } else {
      if (ch == ':' && followed_by_whitespace) block_indicators = true;
      if (ch == '#' && preceded_by_whitespace) block_indicators = true;
    }
    if (is_break(ch)) line_breaks = true;
    // Deliberately unlike PyYAML: it writes NEL, U+2028 and U+2029 raw inside single quotes,
    // where a reader takes them for line breaks (PyYAML itself reads 'a<NEL>  b' back as "a b",
    // and the loader refuses them raw). Double quotes write them as the escapes \N, \L and \P,
    // which every reader reads back exactly.
    if (ch == 0x85 || ch == 0x2028 || ch == 0x2029) special_characters = true;
    if (!(ch == '\n' || (ch >= 0x20 && ch <= 0x7E))) {
      bool printable_unicode = (ch == 0x85 || (ch >= 0xA0 && ch <= 0xD7FF) || (ch >= 0xE000 && ch <= 0xFFFD) ||
                                (ch >= 0x10000 && ch < 0x10FFFF)) &&
                               ch != 0xFEFF;
      if (!printable_unicode) special_characters = true;  // allow_unicode=True
    }
    if (ch == ' ') {
      if (index == 0) leading_space = true;
      if (index == n - 1) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (is_break(ch)) {
      if (index == 0) leading_break = true;
      if (index == n - 1) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = false;
      previous_break = false;
    }
    preceded_by_whitespace = is_yaml_whitespace(ch);
    followed_by_whitespace = index + 2 >= n || is_yaml_whitespace(s[index + 2]);
  }
  if (leading_space || leading_break || trailing_space || trailing_break) a.allow_block_plain = false;
  if (break_space) a.allow_block_plain = a.allow_single_quoted = false;
  if (space_break || special_characters) a.allow_block_plain = a.allow_single_quoted = false;
  if (line_breaks) a.allow_block_plain = false;
  if (block_indicators) a.allow_block_plain = false;
  a.multiline = line_breaks;
  return a;
}

// One scalar about to be written: its text and how PyYAML's representer tagged it.
struct Scalar {
  std::string_view value;
  bool is_str = false;    // str (goes through OmegaConf's representer) vs int/float/bool/null
  size_t tag_length = 5;  // len("!!str"), len("!!int"), ... counted by check_simple_key
};

class Emitter {
 public:
  std::string out;

  void document(const Node& root) {
    emit(root, /*root=*/true, /*mapping=*/false, /*simple_key=*/false);
    write_indent();
    if (open_ended_) {
      write_indicator("...", true);
      write_indent();
    }
  }

 private:
  int column_ = 0;
  int indent_ = -1;  // PyYAML's None
  bool whitespace_ = true;
  bool indention_ = true;
  bool open_ended_ = false;
  bool root_context_ = false;
  Text text_;
  std::string number_text_;
  std::string ascii_;

  void write(std::string_view data, size_t chars) {
    out.append(data);
    column_ += static_cast<int>(chars);
  }

  void write_indicator(std::string_view indicator, bool need_whitespace, bool whitespace = false,
                       bool indention = false) {
    if (!whitespace_ && need_whitespace) {
      out.push_back(' ');
      ++column_;
    }
    out.append(indicator);
    column_ += static_cast<int>(indicator.size());
    whitespace_ = whitespace;
    indention_ = indention_ && indention;
    open_ended_ = false;
  }

  void write_line_break(char32_t br = '\n') {
    detail::append_utf8(out, br);
    whitespace_ = true;
    indention_ = true;
    column_ = 0;
  }

  void write_indent() {
    int indent = indent_ < 0 ? 0 : indent_;
    if (!indention_ || column_ > indent || (column_ == indent && !whitespace_)) write_line_break();
    if (column_ < indent) {
      whitespace_ = true;
      out.append(static_cast<size_t>(indent - column_), ' ');
      column_ = indent;
    }
  }

  int increase_indent(bool flow, bool indentless) {
    int saved = indent_;
    if (indent_ < 0) {
      indent_ = flow ? kBestIndent : 0;
    } else if (!indentless) {
      indent_ += kBestIndent;
    }
    return saved;
  }

  void emit(const Node& node, bool root, bool mapping, bool simple_key) {
    root_context_ = root;
    switch (node.type()) {
      case NodeType::kList:
        if (node.items().empty()) {
          write_indicator("[", true, /*whitespace=*/true);
          write_indicator("]", false);
          return;
        }
        emit_sequence(node, mapping);
        return;
      case NodeType::kMap:
        if (node.entries().empty()) {
          write_indicator("{", true, /*whitespace=*/true);
          write_indicator("}", false);
          return;
        }
        emit_mapping(node);
        return;
      default:
        emit_scalar(node, simple_key);
        return;
    }
  }

  void emit_sequence(const Node& node, bool mapping_context) {
    bool indentless = mapping_context && !indention_;
    int saved = increase_indent(false, indentless);
    for (const Node& item : node.items()) {
      write_indent();
      write_indicator("-", true, false, /*indention=*/true);
      emit(item, false, false, false);
    }
    indent_ = saved;
  }

  void emit_mapping(const Node& node) {
    int saved = increase_indent(false, false);
    for (const Node::Entry& entry : node.entries()) {
      write_indent();
      Scalar key = key_scalar(entry);
      if (key.is_str && trivially_plain(key.value)) {
        if (!whitespace_) write(" ", 1);
        write(key.value, key.value.size());
        whitespace_ = false;
        indention_ = false;
        write_indicator(":", false);
        emit(entry.value, false, /*mapping=*/true, false);
        continue;
      }
      text_.assign(key.value);
      Analysis analysis = analyze(text_);
      bool simple = key.tag_length + text_.size() < 128 && !analysis.empty && !analysis.multiline;
      if (simple) {
        root_context_ = false;
        process_scalar(key, analysis, /*simple_key=*/true);
        write_indicator(":", false);
      } else {
        write_indicator("?", true, false, /*indention=*/true);
        root_context_ = false;
        process_scalar(key, analysis, /*simple_key=*/false);
        write_indent();
        write_indicator(":", true, false, /*indention=*/true);
      }
      emit(entry.value, false, /*mapping=*/true, false);
    }
    indent_ = saved;
  }

  Scalar key_scalar(const Node::Entry& entry) {
    Scalar s;
    switch (entry.key_type) {
      case NodeType::kInt:
        s.value = entry.key;
        return s;
      case NodeType::kBool: {
        bool truthy = entry.key == "True" || entry.key == "true";
        s.value = truthy ? "true" : "false";
        s.tag_length = 6;
        return s;
      }
      case NodeType::kFloat: {
        double d = 0;
        if (yaml_detail::construct_float(entry.key, d)) {
          number_text_ = yaml_detail::yaml_float_text(d);
          s.value = number_text_;
        } else {
          s.value = entry.key;
        }
        s.tag_length = 7;
        return s;
      }
      case NodeType::kNull:
        s.value = "null";
        s.tag_length = 6;
        return s;
      default:
        s.value = entry.key;
        s.is_str = true;
        return s;
    }
  }

  void emit_scalar(const Node& node, bool simple_key) {
    Scalar s;
    switch (node.type()) {
      case NodeType::kNull:
        s.value = "null";
        break;
      case NodeType::kBool:
        s.value = node.as_bool() ? "true" : "false";
        break;
      case NodeType::kInt:
        number_text_ = node.int_text();
        s.value = number_text_;
        break;
      case NodeType::kFloat:
        number_text_ = yaml_detail::yaml_float_text(node.as_float());
        s.value = number_text_;
        break;
      case NodeType::kMissing:
        s.value = "\?\?\?";
        s.is_str = true;
        break;
      default:
        s.value = node.as_string();
        s.is_str = true;
        break;
    }
    if (!s.is_str || trivially_plain(s.value)) {
      // Numbers, booleans, null and trivially plain strings print as they are: no spaces to
      // fold at, no indicators, nothing that reads back as another type.
      if (root_context_) open_ended_ = true;
      if (!whitespace_) write(" ", 1);
      write(s.value, s.value.size());
      whitespace_ = false;
      indention_ = false;
      return;
    }
    text_.assign(s.value);
    Analysis analysis = analyze(text_);
    process_scalar(s, analysis, simple_key);
  }

  char choose_style(const Scalar& s, const Analysis& a, bool simple_key) {
    bool force_single = false;
    bool implicit_plain = true;  // the plain text reads back with the same tag
    if (s.is_str) {
      force_single = is_omegaconf_bool_word(s.value) ||
                     (python_number_ascii(text_, ascii_) && (python_int_syntax(ascii_) || python_float_syntax(ascii_)));
      implicit_plain = yaml_detail::resolve_plain(s.value, {false, true}) == yaml_detail::PlainKind::kString;
    }
    if (!force_single && implicit_plain && !(simple_key && (a.empty || a.multiline)) && a.allow_block_plain) return 0;
    if (a.allow_single_quoted && !(simple_key && a.multiline)) return '\'';
    return '"';
  }

  // PyYAML's expect_scalar: the scalar is written one indentation step in, which is where
  // folded continuation lines go.
  void process_scalar(const Scalar& s, const Analysis& a, bool simple_key) {
    char style = choose_style(s, a, simple_key);
    int saved = increase_indent(true, false);
    bool split = !simple_key;
    if (style == 0) {
      write_plain(split);
    } else if (style == '\'') {
      write_single_quoted(split);
    } else {
      write_double_quoted(split);
    }
    indent_ = saved;
  }

  void write_plain(bool split) {
    if (root_context_) open_ended_ = true;
    const size_t n = text_.size();
    if (n == 0) return;
    if (!whitespace_) write(" ", 1);
    whitespace_ = false;
    indention_ = false;
    bool spaces = false;
    size_t start = 0;
    for (size_t end = 0; end <= n; ++end) {
      char32_t ch = end < n ? text_.chars[end] : kNone;
      if (spaces) {
        if (ch != ' ') {
          if (start + 1 == end && column_ > kBestWidth && split) {
            write_indent();
            whitespace_ = false;
            indention_ = false;
          } else {
            write(text_.slice(start, end), end - start);
          }
          start = end;
        }
      } else if (ch == kNone || is_space_or_break(ch)) {
        write(text_.slice(start, end), end - start);
        start = end;
      }
      if (ch != kNone) spaces = ch == ' ';
    }
  }

  void write_breaks(size_t start, size_t end) {
    if (text_.chars[start] == '\n') write_line_break();
    for (size_t k = start; k < end; ++k) write_line_break(text_.chars[k]);
    write_indent();
  }

  void write_single_quoted(bool split) {
    write_indicator("'", true);
    const size_t n = text_.size();
    bool spaces = false;
    bool breaks = false;
    size_t start = 0;
    for (size_t end = 0; end <= n; ++end) {
      char32_t ch = end < n ? text_.chars[end] : kNone;
      if (spaces) {
        if (ch == kNone || ch != ' ') {
          if (start + 1 == end && column_ > kBestWidth && split && start != 0 && end != n) {
            write_indent();
          } else {
            write(text_.slice(start, end), end - start);
          }
          start = end;
        }
      } else if (breaks) {
        if (ch == kNone || !is_break(ch)) {
          write_breaks(start, end);
          start = end;
        }
      } else if (ch == kNone || is_space_or_break(ch) || ch == '\'') {
        if (start < end) {
          write(text_.slice(start, end), end - start);
          start = end;
        }
      }
      if (ch == '\'') {
        write("''", 2);
        start = end + 1;
      }
      if (ch != kNone) {
        spaces = ch == ' ';
        breaks = is_break(ch);
      }
    }
    write_indicator("'", false);
  }

  static const char* escape_of(char32_t ch) {
    switch (ch) {
      case 0:
        return "0";
      case 0x07:
        return "a";
      case 0x08:
        return "b";
      case 0x09:
        return "t";
      case 0x0A:
        return "n";
      case 0x0B:
        return "v";
      case 0x0C:
        return "f";
      case 0x0D:
        return "r";
      case 0x1B:
        return "e";
      case '"':
        return "\"";
      case '\\':
        return "\\";
      case 0x85:
        return "N";
      case 0xA0:
        return "_";
      case 0x2028:
        return "L";
      case 0x2029:
        return "P";
      default:
        return nullptr;
    }
  }

  void write_double_quoted(bool split) {
    write_indicator("\"", true);
    const size_t n = text_.size();
    size_t start = 0;
    for (size_t end = 0; end <= n; ++end) {
      char32_t ch = end < n ? text_.chars[end] : kNone;
      bool needs_escape =
          ch == kNone || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 || ch == 0xFEFF ||
          !((ch >= 0x20 && ch <= 0x7E) || (ch >= 0xA0 && ch <= 0xD7FF) || (ch >= 0xE000 && ch <= 0xFFFD));
      if (needs_escape) {
        if (start < end) {
          write(text_.slice(start, end), end - start);
          start = end;
        }
        if (ch != kNone) {
          char buf[16];
          if (const char* e = escape_of(ch)) {
            std::snprintf(buf, sizeof buf, "\\%s", e);
          } else if (ch <= 0xFF) {
            std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(ch));
          } else if (ch <= 0xFFFF) {
            std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(ch));
          } else {
            std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(ch));
          }
          std::string_view data(buf);
          write(data, data.size());
          start = end + 1;
        }
      }
      if (end > 0 && end + 1 < n && (ch == ' ' || start >= end) &&
          column_ + static_cast<int>(end - start) > kBestWidth && split) {
        if (start < end) {
          write(text_.slice(start, end), end - start);
          start = end;
        }
        write("\\", 1);
        write_indent();
        whitespace_ = false;
        indention_ = false;
        if (text_.chars[start] == ' ') write("\\", 1);
      }
    }
    write_indicator("\"", false);
  }
};

}  // namespace

std::string to_yaml(const Node& node) {
  Emitter emitter;
  emitter.out.reserve(1024);
  emitter.document(node);
  return std::move(emitter.out);
}

}  // namespace trainer::config
