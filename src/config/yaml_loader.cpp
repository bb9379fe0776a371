// Loads YAML config files into Node trees the way OmegaConf.load does: yaml-cpp parses, and this
// event handler types plain scalars with PyYAML's YAML 1.1 rules (plus OmegaConf's floats),
// honours explicit tags, anchors, aliases and `<<` merge keys, rejects duplicate keys, and stamps
// every node with file:line.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include "trainer/config/python_str.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

#include "entry_index.h"
#include "utf8.h"
#include "yaml_block_parser.h"
#include "yaml_scalar.h"

namespace trainer::config {
namespace {

using yaml_detail::PlainKind;

constexpr const char* kSyntaxFix =
    "Check the indentation and quoting around that line: nested keys must be indented more than "
    "their parent, and values containing ': ', ' #' or starting with a special character "
    "({, [, *, &, !, |, >, %, @, `) must be quoted.";

// Aliases copy the anchored subtree; a cap keeps "billion laughs" documents from eating memory.
constexpr size_t kMaxAliasNodes = size_t{1} << 22;

size_t count_nodes(const Node& node) {
  size_t n = 1;
  for (const Node& item : node.items()) n += count_nodes(item);
  for (const Node::Entry& entry : node.entries()) n += count_nodes(entry.value);
  return n;
}

std::string quote(std::string_view text) {
  std::string out = "'";
  out.append(text);
  out += "'";
  return out;
}

class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::shared_ptr<const std::string> path, std::string_view source)
      : path_(std::move(path)), source_(source) {}

  bool has_root() const { return has_root_; }
  Node take_root() { return std::move(root_); }
  int root_line() const { return root_line_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (expecting_key()) {
      fail(line_of(mark),
           "a key is null (`~`, `null` or empty); OmegaConf keys must be strings, "
           "numbers or booleans",
           "Give the entry a name, or quote it ('null') if the key really is the word null.");
    }
    Node node;
    node.set_origin(origin(line_of(mark)));
    complete(std::move(node), anchor, line_of(mark), /*key_info=*/{});
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    int line = line_of(mark);
    if (anchor >= anchors_.size() || !anchors_[anchor].second) {
      fail(line,
           "this alias refers to an anchor that is not complete yet (an alias inside its own "
           "anchored node)",
           "Aliases may only refer to nodes that end before the alias.");
    }
    const Node& target = anchors_[anchor].first;
    alias_nodes_ += count_nodes(target);
    if (alias_nodes_ > kMaxAliasNodes) {
      fail(line, "aliases expand to more than 4 million nodes",
           "Use fewer nested aliases; this looks like a YAML bomb.");
    }
    KeyInfo key;
    key.plain_string = target.is_string();  // PyYAML checks aliased str keys for duplicates too
    complete(Node(target), 0, line, key);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    int line = line_of(mark);
    bool key_position = expecting_key();
    KeyInfo key;
    std::string fixed;
    if (tag == "!") check_quote_closed(mark);
    if (key_position && tag == "?" && stack_.back().block) check_key_has_colon(mark, value);
    std::string decoded;
    const std::string& raw = fix_escape_bytes(value, decoded);
    const std::string& text = decode_multiline_quoted(mark, raw, fixed);
    Node node = make_scalar(tag, text, line, key_position, key);
    node.set_origin(origin(line));
    complete(std::move(node), anchor, line, key);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    start_collection(mark, tag, anchor, /*is_map=*/false);
  }
  void OnSequenceEnd() override { end_collection(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    start_collection(mark, tag, anchor, /*is_map=*/true);
    stack_.back().block = style != YAML::EmitterStyle::Flow;
  }
  void OnMapEnd() override { end_collection(); }

 private:
  struct KeyInfo {
    bool merge = false;         // plain `<<`
    bool plain_string = false;  // a str-tagged key: OmegaConf rejects duplicates of these
  };

  struct Frame {
    Node node;
    bool is_map = false;
    bool block = false;  // block style (not `{...}`): every key there is followed by ':'
    YAML::anchor_t anchor = 0;
    int line = 0;
    // Map state: the key waiting for its value.
    bool have_key = false;
    std::string key;
    NodeType key_type = NodeType::kString;
    KeyInfo key_info;
    int key_line = 0;
    // Entries brought in by `<<` keys, in PyYAML's order; applied under the own entries at the end.
    std::vector<Node::Entry> merged;
    bool has_merge = false;
    // Duplicate keys are looked up once per entry: indexed so that a large map stays linear.
    detail::EntryIndex keys;
  };

  static int line_of(const YAML::Mark& mark) { return mark.line + 1; }

  // yaml-cpp 0.7 accepts a quoted scalar that runs to the end of the file without its closing
  // quote; PyYAML (and so OmegaConf) rejects it.
  void check_quote_closed(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= source_.size()) return;
    size_t i = static_cast<size_t>(mark.pos);
    char quote = source_[i];
    if (quote != '\'' && quote != '"') return;
    for (++i; i < source_.size(); ++i) {
      char c = source_[i];
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        if (quote == '\'' && i + 1 < source_.size() && source_[i + 1] == '\'') {
          ++i;
        } else {
          return;
        }
      }
    }
    fail(line_of(mark),
         std::string("this ") + (quote == '"' ? "double" : "single") + "-quoted string has no closing quote",
         std::string("Add the closing ") + quote + " (a quote inside single quotes is written '').");
  }

  // A line of a block mapping with no ':' after its key (`test_after_fit:false`, the space
  // forgotten): yaml-cpp 0.7 reads it as a key with no value; PyYAML (and so Hydra) refuses the
  // file ("could not find expected ':'"). An explicit key (`? key`) has its ':' on a later line.
  void check_key_has_colon(const YAML::Mark& mark, const std::string& value) const {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= source_.size()) return;
    const auto start = static_cast<size_t>(mark.pos);
    if (source_.compare(start, value.size(), value) != 0) return;  // not a one-line plain key
    size_t before = start;
    while (before > 0 && (source_[before - 1] == ' ' || source_[before - 1] == '\t')) --before;
    if (before > 0 && source_[before - 1] == '?') return;
    size_t after = start + value.size();
    while (after < source_.size() && (source_[after] == ' ' || source_[after] == '\t')) ++after;
    if (after < source_.size() && source_[after] == ':') return;
    const size_t colon = value.find(':');
    fail(line_of(mark), "'" + value + "' has no ':' after it, so it is not a key: value entry",
         colon != std::string::npos
             ? "Put a space after the colon: " + value.substr(0, colon) + ": " + value.substr(colon + 1) +
                   " (YAML reads a key only where ': ' follows it, as Hydra's PyYAML does)."
             : "Write it as key: value, or remove the line.");
  }

  // yaml-cpp 0.7 decodes the escapes `\N` (U+0085) and `\_` (U+00A0) to the single bytes 0x85
  // and 0xA0 instead of their UTF-8 encodings, leaving invalid UTF-8 in the string. Every other
  // byte of a scalar comes from the (validated) source or from a UTF-8-encoded escape, so a byte
  // that does not start a valid UTF-8 sequence is one of those two code points: encode it.
  static const std::string& fix_escape_bytes(const std::string& value, std::string& fixed) {
    size_t i = 0;
    bool changed = false;
    while (i < value.size()) {
      const auto byte = static_cast<unsigned char>(value[i]);
      size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
      bool valid = length > 0 && i + length <= value.size();
      for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(value[i + k]) & 0xC0) == 0x80;
      if (!changed && valid) {
        i += length;
        continue;
      }
      if (!changed) {
        fixed.assign(value, 0, i);
        changed = true;
      }
      if (valid) {
        fixed.append(value, i, length);
        i += length;
      } else {
        detail::append_utf8(fixed, byte);  // U+0085 or U+00A0
        ++i;
      }
    }
    return changed ? fixed : value;
  }

  // yaml-cpp 0.7 folds the line breaks of a multi-line quoted scalar wrongly: a scalar made only
  // of blanks and breaks ('\n\n  ', which is how PyYAML writes "\n") comes out "", and breaks
  // before the closing quote ('a\n\n\n  ', PyYAML's "a\n\n") collapse to one. A quoted scalar that
  // spans lines is therefore decoded again from the source with PyYAML's scan_flow_scalar.
  // `mark` is where the node starts: its anchor and tag come first.
  const std::string& decode_multiline_quoted(const YAML::Mark& mark, const std::string& value,
                                             std::string& fixed) const {
    if (mark.pos < 0) return value;
    size_t i = static_cast<size_t>(mark.pos);
    const size_t n = source_.size();
    while (i < n && (source_[i] == '&' || source_[i] == '!')) {
      while (i < n && source_[i] != ' ' && source_[i] != '\t' && source_[i] != '\n') ++i;
      while (i < n) {
        char c = source_[i];
        if (c == ' ' || c == '\t' || c == '\n') {
          ++i;
        } else if (c == '#') {
          while (i < n && source_[i] != '\n') ++i;
        } else {
          break;
        }
      }
    }
    if (i >= source_.size() || (source_[i] != '\'' && source_[i] != '"')) return value;
    std::string decoded;
    size_t end = 0;
    if (!scan_flow_scalar(source_, i, decoded, end)) return value;
    if (source_.substr(i, end - i).find('\n') == std::string_view::npos) return value;
    fixed = std::move(decoded);
    return fixed;
  }

  // PyYAML's Scanner.scan_flow_scalar from the opening quote at `pos` (line breaks are already
  // "\n" only). Sets `end` past the closing quote. False on anything yaml-cpp should have refused.
  static bool scan_flow_scalar(std::string_view src, size_t pos, std::string& out, size_t& end) {
    const char quote = src[pos];
    const bool dq = quote == '"';
    size_t i = pos + 1;
    auto at = [&](size_t k) { return k < src.size() ? src[k] : '\0'; };
    // scan_flow_scalar_breaks: blank lines after a break, each one "\n".
    auto breaks = [&](std::string& chunk) -> bool {
      while (true) {
        std::string_view prefix = src.substr(i, 3);
        char after = at(i + 3);
        if ((prefix == "---" || prefix == "...") && (after == '\0' || after == ' ' || after == '\t' || after == '\n'))
          return false;  // "found unexpected document separator"
        while (at(i) == ' ' || at(i) == '\t') ++i;
        if (at(i) != '\n') return true;
        chunk.push_back('\n');
        ++i;
      }
    };
    // scan_flow_scalar_non_spaces
    auto non_spaces = [&]() -> bool {
      while (true) {
        char ch = at(i);
        if (ch != '\'' && ch != '"' && ch != '\\' && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\0') {
          out.push_back(ch);
          ++i;
          continue;
        }
        if (!dq && ch == '\'' && at(i + 1) == '\'') {
          out.push_back('\'');
          i += 2;
        } else if ((dq && ch == '\'') || (!dq && (ch == '"' || ch == '\\'))) {
          out.push_back(ch);
          ++i;
        } else if (dq && ch == '\\') {
          ++i;
          char e = at(i);
          const char* replacement = nullptr;
          switch (e) {
            case 'a':
              replacement = "\x07";
              break;
            case 'b':
              replacement = "\x08";
              break;
            case 't':
            case '\t':
              replacement = "\t";
              break;
            case 'n':
              replacement = "\n";
              break;
            case 'v':
              replacement = "\x0B";
              break;
            case 'f':
              replacement = "\x0C";
              break;
            case 'r':
              replacement = "\r";
              break;
            case 'e':
              replacement = "\x1B";
              break;
            case ' ':
              replacement = " ";
              break;
            case '"':
              replacement = "\"";
              break;
            case '/':
              replacement = "/";
              break;
            case '\\':
              replacement = "\\";
              break;
            case 'N':
              replacement = "\xC2\x85";
              break;
            case '_':
              replacement = "\xC2\xA0";
              break;
            case 'L':
              replacement = "\xE2\x80\xA8";
              break;
            case 'P':
              replacement = "\xE2\x80\xA9";
              break;
            default:
              break;
          }
          if (e == '0') {
            out.push_back('\0');
            ++i;
          } else if (replacement != nullptr) {
            out.append(replacement);
            ++i;
          } else if (e == 'x' || e == 'u' || e == 'U') {
            size_t length = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            ++i;
            uint32_t cp = 0;
            for (size_t k = 0; k < length; ++k) {
              char h = at(i + k);
              int digit = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
              if (digit < 0) return false;
              cp = cp * 16 + static_cast<uint32_t>(digit);
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
            detail::append_utf8(out, cp);
            i += length;
          } else if (e == '\n') {
            ++i;
            if (!breaks(out)) return false;
          } else {
            return false;
          }
        } else {
          return true;
        }
      }
    };
    if (!non_spaces()) return false;
    while (at(i) != quote) {
      if (i >= src.size()) return false;
      // scan_flow_scalar_spaces
      size_t ws = i;
      while (at(i) == ' ' || at(i) == '\t') ++i;
      if (i >= src.size()) return false;
      if (at(i) == '\n') {
        ++i;
        std::string chunk;
        if (!breaks(chunk)) return false;
        if (chunk.empty()) out.push_back(' ');
        out += chunk;
      } else {
        out.append(src.substr(ws, i - ws));
      }
      if (!non_spaces()) return false;
    }
    end = i + 1;
    return true;
  }

  Origin origin(int line) const { return Origin::file(path_, line); }

  [[noreturn]] void fail(int line, std::string problem, std::string fix) const {
    throw Error(*path_ + ":" + std::to_string(line), std::move(problem), std::move(fix));
  }

  bool expecting_key() const { return !stack_.empty() && stack_.back().is_map && !stack_.back().have_key; }

  Node make_scalar(const std::string& tag, const std::string& value, int line, bool key_position, KeyInfo& key) {
    if (tag == "?") {
      PlainKind kind = yaml_detail::resolve_plain(value, {});
      switch (kind) {
        case PlainKind::kString:
          key.plain_string = true;
          if (value == "\?\?\?" && !key_position) return Node::missing();
          return Node::string(value);
        case PlainKind::kNull:
          return Node();  // yaml-cpp reports nulls through OnNull; kept for safety
        case PlainKind::kBool: {
          bool b = false;
          yaml_detail::construct_bool(value, b);
          return Node::boolean(b);
        }
        case PlainKind::kInt: {
          int64_t i = 0;
          if (yaml_detail::construct_int(value, i)) return Node::integer(i);
          Node big;
          if (!yaml_detail::construct_big_int(value, big)) {
            fail(line, "the number " + value + " is not a valid integer",
                 "Write digits like 10, 0x1f or 0b101, or quote it to keep it as a string.");
          }
          return big;
        }
        case PlainKind::kFloat: {
          double d = 0;
          if (!yaml_detail::construct_float(value, d)) {
            fail(line, "the number " + value + " is not a valid float",
                 "Write it like 1.5, 1e-4 or .inf, or quote it to keep it as a string.");
          }
          return Node::floating(d);
        }
        case PlainKind::kMerge:
          if (key_position) {
            key.merge = true;
            return Node::string(value);
          }
          fail(line, "`<<` is YAML's merge key and cannot be used as a value",
               "Quote it ('<<') to use it as a string.");
        case PlainKind::kValue:
          fail(line, "a bare `=` is a YAML 1.1 value key that OmegaConf cannot load",
               "Quote it ('=') to use it as a string.");
        case PlainKind::kTimestamp:
        case PlainKind::kYaml:
          return Node::string(value);
      }
    }
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      key.plain_string = true;
      if (value == "\?\?\?" && !key_position) return Node::missing();
      return Node::string(value);
    }
    if (tag == "tag:yaml.org,2002:int") {
      int64_t i = 0;
      if (yaml_detail::construct_int(value, i)) return Node::integer(i);
      Node big;
      if (!yaml_detail::construct_big_int(value, big)) {
        fail(line, quote(value) + " is tagged !!int but is not an integer",
             "Remove the !!int tag or write an integer.");
      }
      return big;
    }
    if (tag == "tag:yaml.org,2002:float") {
      double d = 0;
      if (!yaml_detail::construct_float(value, d)) {
        fail(line, quote(value) + " is tagged !!float but is not a float", "Remove the !!float tag or write a number.");
      }
      return Node::floating(d);
    }
    if (tag == "tag:yaml.org,2002:bool") {
      bool b = false;
      if (!yaml_detail::construct_bool(value, b)) {
        fail(line, quote(value) + " is tagged !!bool but is not a boolean", "Write true/false (or yes/no, on/off).");
      }
      return Node::boolean(b);
    }
    if (tag == "tag:yaml.org,2002:null") {
      if (key_position) {
        fail(line, "a key is null; OmegaConf keys must be strings, numbers or booleans", "Give the entry a name.");
      }
      return Node();
    }
    fail(line, "the tag " + tag + " is not supported in config files",
         "Remove the tag; only !!str, !!int, !!float, !!bool and !!null are understood.");
  }

  void start_collection(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, bool is_map) {
    int line = line_of(mark);
    if (expecting_key()) {
      fail(line, std::string("a key is a ") + (is_map ? "mapping" : "list") + "; config keys must be scalars",
           "Use a string, number or boolean as the key.");
    }
    const char* expected = is_map ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq";
    if (tag != "?" && tag != "!" && tag != expected) {
      fail(line, "the tag " + tag + " is not supported in config files", "Remove the tag.");
    }
    Frame frame;
    frame.node = is_map ? Node::map() : Node::list();
    frame.node.set_origin(origin(line));
    frame.is_map = is_map;
    frame.anchor = anchor;
    frame.line = line;
    stack_.push_back(std::move(frame));
  }

  void end_collection() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.has_merge) {
      // PyYAML puts merged entries first and lets the map's own entries override them; a key
      // keeps the position where it first appeared.
      std::vector<Node::Entry> own = std::move(frame.node.entries());
      std::vector<Node::Entry>& out = frame.node.entries();
      out.clear();
      out.reserve(frame.merged.size() + own.size());
      detail::EntryIndex index;
      for (auto* list : {&frame.merged, &own}) {
        for (Node::Entry& entry : *list) {
          if (Node::Entry* existing = index.find(out, entry.key)) {
            existing->value = std::move(entry.value);
            existing->key_type = entry.key_type;
          } else {
            out.push_back(std::move(entry));
          }
        }
      }
    }
    complete(std::move(frame.node), frame.anchor, frame.line, {});
  }

  void remember_anchor(YAML::anchor_t anchor, const Node& node) {
    if (anchor == 0) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    anchors_[anchor] = {node, true};
  }

  // Hands a finished node to its parent (as a key, a map value or a list item) or makes it the
  // root.
  void complete(Node node, YAML::anchor_t anchor, int line, KeyInfo key_info) {
    remember_anchor(anchor, node);
    if (stack_.empty()) {
      root_ = std::move(node);
      root_line_ = line;
      has_root_ = true;
      return;
    }
    Frame& parent = stack_.back();
    if (!parent.is_map) {
      parent.node.items().push_back(std::move(node));
      return;
    }
    if (!parent.have_key) {
      set_key(parent, node, key_info, line);
      return;
    }
    parent.have_key = false;
    if (parent.key_info.merge) {
      merge_value(parent, std::move(node), parent.key_line);
      return;
    }
    // A value is reported at its key's line: that is where a reader looks for `key: value`.
    node.set_origin(origin(parent.key_line));
    std::vector<Node::Entry>& entries = parent.node.entries();
    if (Node::Entry* existing = parent.keys.find(entries, parent.key)) {
      bool both_strings = existing->key_type == NodeType::kString && parent.key_type == NodeType::kString;
      if (both_strings && parent.key_info.plain_string) {
        fail(parent.key_line,
             "duplicate key " + quote(parent.key) + " (first defined on line " +
                 std::to_string(existing->value.origin().line) + ")",
             "Remove one of the two entries or rename it; OmegaConf refuses duplicate keys.");
      }
      if (existing->key_type != parent.key_type) {
        fail(parent.key_line,
             "the keys " + quote(parent.key) + " and " + parent.key + " differ only in type (string vs number/boolean)",
             "Use one spelling of the key.");
      }
      // PyYAML lets a repeated non-string key (`1: a` then `1: b`) overwrite in place.
      existing->value = std::move(node);
      return;
    }
    entries.push_back(Node::Entry{std::move(parent.key), std::move(node), parent.key_type});
  }

  void set_key(Frame& parent, const Node& key, KeyInfo info, int line) {
    parent.have_key = true;
    parent.key_info = info;
    parent.key_line = line;
    parent.key_type = key.type();
    switch (key.type()) {
      case NodeType::kString:
        parent.key = key.as_string();
        break;
      case NodeType::kMissing:
        parent.key = "\?\?\?";
        parent.key_type = NodeType::kString;
        break;
      case NodeType::kInt:
        parent.key = key.int_text();
        break;
      case NodeType::kBool:
        // Python's str() of the key, which is what OmegaConf shows for bool keys.
        parent.key = key.as_bool() ? "True" : "False";
        break;
      case NodeType::kFloat:
        parent.key = ::trainer::config::python_float_repr(key.as_float());
        break;
      default:
        fail(line,
             std::string("a key is a ") + type_name(key.type()) + "; config keys must be strings, numbers or booleans",
             "Use a scalar key.");
    }
  }

  void merge_value(Frame& parent, Node value, int line) {
    parent.has_merge = true;
    auto append_map = [&](const Node& map) {
      for (const Node::Entry& entry : map.entries()) parent.merged.push_back(entry);
    };
    if (value.is_map()) {
      append_map(value);
      return;
    }
    if (value.is_list()) {
      for (const Node& item : value.items()) {
        if (!item.is_map()) {
          fail(line, "a `<<` merge list must contain only mappings (aliases of mappings)",
               "Write `<<: *anchor` or `<<: [*a, *b]` where each anchor names a mapping.");
        }
      }
      // Earlier maps in the list win, so PyYAML lays them out last-to-first.
      for (auto it = value.items().rbegin(); it != value.items().rend(); ++it) append_map(*it);
      return;
    }
    fail(line, "the value of a `<<` merge key must be a mapping or a list of mappings",
         "Write `<<: *anchor` where the anchor names a mapping, or quote '<<' to use it as a key.");
  }

  std::shared_ptr<const std::string> path_;
  std::string_view source_;
  std::vector<Frame> stack_;
  std::vector<std::pair<Node, bool>> anchors_;
  size_t alias_nodes_ = 0;
  Node root_;
  int root_line_ = 1;
  bool has_root_ = false;
};

// Hydra reads `# @key value` lines at the very top (blank lines allowed) and stops at the first
// other line, so `# @package` below an ordinary comment is ignored, as in Hydra.
std::optional<std::string> parse_header(std::string_view text, const std::string& name) {
  std::optional<std::string> package;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] != '#') break;
    std::string_view rest = line;
    while (!rest.empty() && rest[0] == '#') rest.remove_prefix(1);
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    if (rest.empty() || rest[0] != '@') break;
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < rest.size()) {
      size_t next = rest.find(' ', i);
      if (next == std::string_view::npos) next = rest.size();
      if (next > i) words.push_back(rest.substr(i, next - i));
      i = next + 1;
    }
    std::string where = name + ":" + std::to_string(line_number);
    if (words.size() < 2) {
      throw Error(where, "expected a header of the form `# @KEY VALUE`, got '" + std::string(rest) + "'",
                  "Write e.g. `# @package db.primary`, or add text so it is not read as a header.");
    }
    if (words.size() > 2) {
      throw Error(where, "too many words in the header '" + std::string(rest) + "'",
                  "Write exactly `# @package PACKAGE` with no spaces inside the package.");
    }
    if (words[0] == "@package") package = std::string(words[1]);
  }
  return package;
}

// OmegaConf reads files as UTF-8 and refuses anything else; so do we (yaml-cpp would accept
// stray bytes and the writer could not print them back). Like PyYAML's reader, characters outside
// YAML's printable set are refused too: C0 controls other than tab/LF/CR, DEL, C1 controls other
// than NEL, U+FFFE/U+FFFF. Inside double quotes they can still be written as escapes.
bool is_yaml_printable(uint32_t code) {
  return code == 0x09 || code == 0x0A || code == 0x0D || (code >= 0x20 && code <= 0x7E) || code == 0x85 ||
         (code >= 0xA0 && code <= 0xD7FF) || (code >= 0xE000 && code <= 0xFFFD) || code >= 0x10000;
}

void check_utf8(std::string_view text, const std::string& name) {
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') ++line;
    size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    uint32_t code = byte;
    if (valid && length > 1) {
      code = byte & (0xFF >> (length + 1));
      for (size_t k = 1; k < length; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
      static const uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
      valid = code >= kMinimum[length] && code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF);
    }
    if (!valid) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", byte);
      throw Error(name + ":" + std::to_string(line), std::string("invalid UTF-8 (byte ") + hex + ")",
                  "Save the file as UTF-8.");
    }
    if (code == 0x2028 || code == 0x2029) {
      throw Error(name + ":" + std::to_string(line),
                  std::string("the character ") +
                      (code == 0x2028 ? "U+2028 (line separator)" : "U+2029 (paragraph separator)") +
                      " is a line break in YAML 1.1 (PyYAML, OmegaConf) but text in YAML 1.2; a config "
                      "file with it would not read the same everywhere",
                  std::string("Replace it by a newline, or write it as the escape \\") + (code == 0x2028 ? "L" : "P") +
                      " inside a double-quoted string.");
    }
    if (!is_yaml_printable(code)) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "#x%04X", static_cast<unsigned>(code));
      throw Error(name + ":" + std::to_string(line),
                  std::string("unacceptable character ") + hex + " (a control character YAML does not allow)",
                  "Remove it, or write it as an escape inside a double-quoted string (e.g. \"\\x1e\").");
    }
    i += length;
  }
}

// PyYAML (YAML 1.1) reads CR LF, a lone CR and NEL (U+0085) each as one line break that stands
// for "\n"; yaml-cpp (YAML 1.2) only knows LF and CR LF and keeps a lone CR or NEL as text. Turn
// them all into "\n" first so that both read the same document. Returns `text` or `buffer`.
std::string_view normalize_breaks(std::string_view text, std::string& buffer) {
  if (text.find('\r') == std::string_view::npos && text.find("\xC2\x85") == std::string_view::npos) return text;
  buffer.clear();
  buffer.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      buffer.push_back('\n');
    } else if (c == '\xC2' && i + 1 < text.size() && text[i + 1] == '\x85') {
      ++i;
      buffer.push_back('\n');
    } else {
      buffer.push_back(c);
    }
  }
  return buffer;
}

YamlDocument load(std::string_view original, const std::string& name, bool fast_path) {
  std::string normalized;
  std::string_view text = normalize_breaks(original, normalized);
  check_utf8(text, name);
  auto path = std::make_shared<const std::string>(name);
  YamlDocument doc;
  doc.package = parse_header(text, name);
  if (fast_path && yaml_detail::parse_simple_block_yaml(text, path, doc.root)) return doc;
  TreeBuilder builder(path, text);
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    if (parser.HandleNextDocument(builder)) {
      TreeBuilder extra(path, text);
      if (parser.HandleNextDocument(extra)) {
        throw Error(name, "the file holds more than one YAML document (a second `---`)",
                    "Keep one document per config file; remove the extra `---` separator.");
      }
    }
  } catch (const YAML::Exception& e) {
    std::string where = name;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    // Tabs in indentation are the most common cause of baffling yaml-cpp messages.
    std::string_view line;
    if (!e.mark.is_null()) {
      size_t start = 0;
      for (int i = 0; i < e.mark.line && start != std::string_view::npos; ++i) {
        start = text.find('\n', start);
        if (start != std::string_view::npos) ++start;
      }
      if (start != std::string_view::npos && start < text.size()) {
        line = text.substr(start, text.find('\n', start) - start);
      }
    }
    size_t indent_end = line.find_first_not_of(" \t");
    if (line.substr(0, indent_end).find('\t') != std::string_view::npos) {
      throw Error(where, "YAML syntax error: " + e.msg + " (the line is indented with a tab)",
                  "Indent with spaces only; YAML does not allow tabs for indentation.");
    }
    throw Error(where, "YAML syntax error: " + e.msg, kSyntaxFix);
  }
  if (!builder.has_root()) {
    doc.root = Node::map();
    doc.root.set_origin(Origin::file(path, 1));
    return doc;
  }
  int line = builder.root_line();
  Node root = builder.take_root();
  if (root.is_null()) {
    doc.root = Node::map();
    doc.root.set_origin(Origin::file(path, line));
    return doc;
  }
  if (!root.is_map()) {
    throw Error(name + ":" + std::to_string(line),
                std::string("the top level of a config file must be a mapping of keys to values, "
                            "but this file holds a ") +
                    type_name(root.type()),
                "Write `key: value` lines at the top level (a list must be the value of a key).");
  }
  doc.root = std::move(root);
  return doc;
}

}  // namespace

YamlDocument load_yaml_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw Error(path, "cannot open the config file", "Check that the file exists and is readable.");
  }
  std::string text;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw Error(path, "cannot read the config file", "Check the file's permissions.");
  return load(text, path, true);
}

YamlDocument load_yaml_string(std::string_view text, const std::string& name) { return load(text, name, true); }

namespace yaml_detail {
YamlDocument load_yaml_string_full(std::string_view text, const std::string& name) { return load(text, name, false); }
}  // namespace yaml_detail

Node type_yaml_scalar(std::string_view text) {
  using yaml_detail::resolve_plain;
  std::string value(text);
  switch (resolve_plain(text, {})) {
    case PlainKind::kNull:
      return Node();
    case PlainKind::kBool: {
      bool b = false;
      yaml_detail::construct_bool(text, b);
      return Node::boolean(b);
    }
    case PlainKind::kInt: {
      int64_t i = 0;
      if (yaml_detail::construct_int(text, i)) return Node::integer(i);
      Node big;
      if (yaml_detail::construct_big_int(text, big)) return big;
      return Node::string(std::move(value));
    }
    case PlainKind::kFloat: {
      double d = 0;
      if (yaml_detail::construct_float(text, d)) return Node::floating(d);
      return Node::string(std::move(value));
    }
    default:
      if (value == "\?\?\?") return Node::missing();
      return Node::string(std::move(value));
  }
}

}  // namespace trainer::config
