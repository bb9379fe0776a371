// The fast path of the YAML loader: a line-based recursive parser for simple block YAML. It
// declines (returns false) on anything it is not sure to read exactly as yaml-cpp + the OmegaConf
// typing rules would, so the full parser stays the single source of truth for edge cases and
// error messages.
#include "yaml_block_parser.h"

#include <vector>

#include "entry_index.h"
#include "yaml_scalar.h"

namespace trainer::config::yaml_detail {
namespace {

struct Line {
  std::string_view text;  // without the newline
  int indent = 0;         // leading spaces
  int number = 0;         // 1-based
};

struct Decline {};  // thrown inside the parser to give up on the fast path

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return trim_right(s);
}

bool starts_sequence_item(std::string_view s) { return !s.empty() && s[0] == '-' && (s.size() == 1 || s[1] == ' '); }

// The position of the `:` that ends a mapping key (followed by a space or the end), or npos.
size_t key_colon(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) return i;
  }
  return std::string_view::npos;
}

class Parser {
 public:
  Parser(const std::shared_ptr<const std::string>& path, std::vector<Line>& lines) : path_(path), lines_(lines) {}

  Node document() {
    if (lines_.empty()) throw Decline{};
    const Line& first = lines_[0];
    if (starts_sequence_item(first.text.substr(static_cast<size_t>(first.indent)))) throw Decline{};
    Node root = parse_map(0, first.indent);
    if (next_ != lines_.size()) throw Decline{};
    return root;
  }

 private:
  const std::shared_ptr<const std::string>& path_;
  std::vector<Line>& lines_;
  size_t next_ = 0;  // the first line not consumed yet

  Origin origin(int line) const { return Origin::file(path_, line); }

  int indent_of_next() const { return next_ < lines_.size() ? lines_[next_].indent : -1; }

  // A block node whose first character is at column `col` of line `index`.
  Node parse_node(size_t index, int col) {
    std::string_view text = lines_[index].text.substr(static_cast<size_t>(col));
    if (starts_sequence_item(text)) return parse_sequence(index, col);
    if (key_colon(text) != std::string_view::npos) return parse_map(index, col);
    throw Decline{};  // a scalar on its own line (multi-line plain scalar or similar)
  }

  Node parse_map(size_t index, int col) {
    Node map = Node::map();
    map.set_origin(origin(lines_[index].number));
    detail::EntryIndex keys;  // a scan per key would make a large map quadratic
    while (true) {
      const Line& line = lines_[index];
      std::string_view text = line.text.substr(static_cast<size_t>(col));
      size_t colon = key_colon(text);
      if (colon == std::string_view::npos) throw Decline{};
      std::string_view key = trim_right(text.substr(0, colon));
      check_key(key);
      if (keys.find(map.entries(), key) != nullptr) throw Decline{};  // duplicate: the full parser reports it
      std::string_view rest = trim(text.substr(colon + 1));
      next_ = index + 1;
      Node value;
      if (rest.empty() || rest[0] == '#') {
        int next_indent = indent_of_next();
        if (next_indent > col) {
          value = parse_node(next_, next_indent);
        } else if (next_indent == col && starts_sequence_item(lines_[next_].text.substr(static_cast<size_t>(col)))) {
          value = parse_sequence(next_, col);  // `key:` then `- item` at the same indent
        }
      } else {
        value = parse_inline(rest, line.number);
        if (indent_of_next() > col) throw Decline{};  // continuation lines
      }
      value.set_origin(origin(line.number));
      map.entries().push_back(Node::Entry{std::string(key), std::move(value), NodeType::kString});
      int next_indent = indent_of_next();
      if (next_indent < col) return map;
      if (next_indent > col) throw Decline{};
      if (starts_sequence_item(lines_[next_].text.substr(static_cast<size_t>(col))))
        return map;  // ends an indentless sequence's parent map only when the caller says so
      index = next_;
    }
  }

  Node parse_sequence(size_t index, int col) {
    Node list = Node::list();
    list.set_origin(origin(lines_[index].number));
    while (true) {
      const Line& line = lines_[index];
      std::string_view text = line.text.substr(static_cast<size_t>(col));
      if (!starts_sequence_item(text)) throw Decline{};
      size_t skip = 1;
      while (skip < text.size() && text[skip] == ' ') ++skip;
      std::string_view rest = text.substr(skip);
      int rest_col = col + static_cast<int>(skip);
      next_ = index + 1;
      Node item;
      if (rest.empty() || rest[0] == '#') {
        if (!rest.empty()) throw Decline{};
        int next_indent = indent_of_next();
        if (next_indent > col) {
          item = parse_node(next_, next_indent);
        } else {
          throw Decline{};  // a null item: leave the origin rules to the full parser
        }
      } else if (starts_sequence_item(rest)) {
        item = parse_sequence(index, rest_col);
      } else if (key_colon(rest) != std::string_view::npos && rest[0] != '\'' && rest[0] != '"' && rest[0] != '[' &&
                 rest[0] != '{') {
        item = parse_map(index, rest_col);
      } else {
        item = parse_inline(rest, line.number);
        if (indent_of_next() > col) throw Decline{};
        item.set_origin(origin(line.number));
      }
      list.items().push_back(std::move(item));
      int next_indent = indent_of_next();
      if (next_indent < col) return list;
      if (next_indent > col) throw Decline{};
      if (!starts_sequence_item(lines_[next_].text.substr(static_cast<size_t>(col)))) return list;
      index = next_;
    }
  }

  static void check_key(std::string_view key) {
    if (key.empty() || is_indicator(key[0])) throw Decline{};
    for (char c : key) {
      switch (c) {
        case '#':
        case ':':
        case '\'':
        case '"':
        case '[':
        case ']':
        case '{':
        case '}':
        case ',':
        case '&':
        case '*':
        case '!':
        case '|':
        case '>':
        case '%':
        case '@':
        case '`':
          throw Decline{};
        default:
          break;
      }
    }
    if (resolve_plain(key, {}) != PlainKind::kString) throw Decline{};  // typed or `<<` keys
  }

  // A value written on the same line as its key or dash: plain, quoted, `[a, b]` or `{}`.
  Node parse_inline(std::string_view rest, int line) {
    char first = rest[0];
    if (first == '\'' || first == '"') return quoted(rest);
    if (first == '[') return flow_list(rest, line);
    if (first == '{') {
      if (without_comment(rest) != "{}") throw Decline{};
      return Node::map();
    }
    if (is_indicator(first) && !(first == '-' && rest.size() > 1 && rest[1] != ' ')) throw Decline{};
    std::string_view value = without_comment(rest);
    if (key_colon(value) != std::string_view::npos) throw Decline{};
    return plain(value);
  }

  // Cuts a trailing ` # comment` and trailing spaces.
  static std::string_view without_comment(std::string_view s) {
    for (size_t i = 1; i < s.size(); ++i) {
      if (s[i] == '#' && s[i - 1] == ' ') return trim_right(s.substr(0, i));
    }
    return trim_right(s);
  }

  static Node plain(std::string_view value) {
    switch (resolve_plain(value, {})) {
      case PlainKind::kString:
      case PlainKind::kTimestamp:
      case PlainKind::kYaml:
        if (value == "\?\?\?") return Node::missing();
        return Node::string(std::string(value));
      case PlainKind::kNull:
        return Node();
      case PlainKind::kBool: {
        bool b = false;
        construct_bool(value, b);
        return Node::boolean(b);
      }
      case PlainKind::kInt: {
        int64_t i = 0;
        if (construct_int(value, i)) return Node::integer(i);
        Node big;
        if (!construct_big_int(value, big)) throw Decline{};
        return big;
      }
      case PlainKind::kFloat: {
        double d = 0;
        if (!construct_float(value, d)) throw Decline{};
        return Node::floating(d);
      }
      default:
        throw Decline{};  // `<<` or `=` as a value: the full parser reports it
    }
  }

  static Node quoted(std::string_view rest) {
    char q = rest[0];
    std::string out;
    size_t i = 1;
    while (true) {
      if (i >= rest.size()) throw Decline{};  // continues on the next line
      char c = rest[i];
      if (q == '"' && c == '\\') throw Decline{};  // escapes: the full parser decodes them
      if (c == q) {
        if (q == '\'' && i + 1 < rest.size() && rest[i + 1] == '\'') {
          out.push_back('\'');
          i += 2;
          continue;
        }
        break;
      }
      out.push_back(c);
      ++i;
    }
    std::string_view after = rest.substr(i + 1);
    if (!after.empty() && after[0] != ' ') throw Decline{};
    after = trim(after);
    if (!after.empty() && after[0] != '#') throw Decline{};
    if (out == "\?\?\?") return Node::missing();
    return Node::string(std::move(out));
  }

  Node flow_list(std::string_view rest, int line) {
    std::string_view body = without_comment(rest);
    if (body.size() < 2 || body.back() != ']') throw Decline{};
    body = body.substr(1, body.size() - 2);
    Node list = Node::list();
    list.set_origin(origin(line));
    if (trim(body).empty()) return list;
    size_t start = 0;
    while (start <= body.size()) {
      size_t comma = body.find(',', start);
      if (comma == std::string_view::npos) comma = body.size();
      std::string_view item = trim(body.substr(start, comma - start));
      if (item.empty() || is_indicator(item[0])) {
        if (!(item.size() > 1 && item[0] == '-' && item[1] != ' ')) throw Decline{};
      }
      for (char c : item) {
        switch (c) {
          case ':':
          case '#':
          case '[':
          case ']':
          case '{':
          case '}':
          case '\'':
          case '"':
          case '?':
            throw Decline{};
          default:
            break;
        }
      }
      Node value = plain(item);
      value.set_origin(origin(line));
      list.items().push_back(std::move(value));
      start = comma + 1;
    }
    return list;
  }
};

}  // namespace

bool parse_simple_block_yaml(std::string_view text, const std::shared_ptr<const std::string>& path, Node& root) {
  thread_local std::vector<Line> lines;
  lines.clear();
  size_t pos = 0;
  int number = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    int indent = 0;
    for (char c : line) {
      // Tabs, carriage returns and control characters have rules of their own; so do
      // document markers and directives.
      if (c == '\t' || c == '\r' || (static_cast<unsigned char>(c) < 0x20)) return false;
    }
    while (static_cast<size_t>(indent) < line.size() && line[static_cast<size_t>(indent)] == ' ') ++indent;
    std::string_view content = line.substr(static_cast<size_t>(indent));
    if (content.empty() || content[0] == '#') continue;
    if (indent == 0 && (content.substr(0, 3) == "---" || content.substr(0, 3) == "..." || content[0] == '%'))
      return false;
    // Characters YAML 1.1 and 1.2 disagree about (NEL, line/paragraph separators, BOM).
    if (content.find("\xC2\x85") != std::string_view::npos || content.find("\xE2\x80\xA8") != std::string_view::npos ||
        content.find("\xE2\x80\xA9") != std::string_view::npos ||
        content.find("\xEF\xBB\xBF") != std::string_view::npos)
      return false;
    lines.push_back(Line{line, indent, number});
  }
  try {
    Parser parser(path, lines);
    root = parser.document();
    return true;
  } catch (const Decline&) {
    return false;
  }
}

}  // namespace trainer::config::yaml_detail
