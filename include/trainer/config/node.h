// The config tree: null, bool, int, float, string, list and map values (plus OmegaConf's `???`
// "missing" marker), maps keeping insertion order, every node remembering where it came from so
// errors can name a file:line or the override that set it. Plain C++: no YAML, no torch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::config {

// Where a value came from: a file and line, or the command-line override that set it.
struct Origin {
  std::shared_ptr<const std::string> source;  // file path or override text; null when unknown
  int line = 0;                               // 1-based line in a file; 0 when not a file
  bool is_override = false;

  static Origin file(std::shared_ptr<const std::string> path, int line);
  static Origin override_text(std::string text);
  bool known() const { return source != nullptr; }
  // "configs/model/mlp.yaml:3", "override 'model.x=3'" or "" when unknown.
  std::string describe() const;
  // The key and where its value came from, "data.batch_size (configs/data/x.yaml:4)", or the key
  // alone when that is unknown: how an error names a setting.
  std::string describe_key(const std::string& key) const;
};

enum class NodeType { kNull, kBool, kInt, kFloat, kString, kList, kMap, kMissing };

// Python-style type names used in messages: "null", "bool", "int", "float", "str", "list", "dict".
const char* type_name(NodeType type);

class BigInt;

class Node {
 public:
  struct Entry;

  Node() = default;  // null
  static Node boolean(bool value);
  static Node integer(int64_t value);
  // A Python int of any size from decimal text: an optional sign, then digits (leading zeros and
  // `+` are dropped). Values within int64 give an ordinary int; larger ones keep their canonical
  // text (Python's str() of the int) in the string storage, so ordinary ints cost nothing extra.
  // Asserts on other text (use BigInt::parse_decimal to validate).
  static Node integer_text(std::string_view decimal);
  static Node floating(double value);
  static Node string(std::string value);
  static Node list();
  static Node map();
  static Node missing();  // OmegaConf's `???`

  NodeType type() const { return type_; }
  bool is_null() const { return type_ == NodeType::kNull; }
  bool is_map() const { return type_ == NodeType::kMap; }
  bool is_list() const { return type_ == NodeType::kList; }
  bool is_string() const { return type_ == NodeType::kString; }
  bool is_missing() const { return type_ == NodeType::kMissing; }
  bool is_scalar() const { return !is_map() && !is_list(); }
  // A string value containing `${`: resolved later by the interpolation engine.
  bool is_interpolation() const;

  // Accessors assert the type (programmer error otherwise); check type() first.
  bool as_bool() const;
  // An int beyond int64 (Python's ints are unbounded): as_int() then saturates to the int64 limit
  // of its sign, and int_text() gives the exact value.
  bool is_big_int() const { return type_ == NodeType::kInt && !string_.empty(); }
  int64_t as_int() const;
  // Python's str() of an int node of any size: "-12", "123456789012345678901234567890".
  std::string int_text() const;
  double as_float() const;
  const std::string& as_string() const;

  const std::vector<Node>& items() const { return items_; }
  std::vector<Node>& items() { return items_; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<Entry>& entries() { return entries_; }
  size_t size() const;

  // Map access. find returns nullptr when absent (or when this is not a map).
  const Node* find(std::string_view key) const;
  Node* find(std::string_view key);
  // Replaces the value of an existing key in place (keeping its position) or appends a new one.
  Node& set(std::string key, Node value);
  bool erase(std::string_view key);
  // List access.
  Node& push_back(Node value);

  const Origin& origin() const { return origin_; }
  void set_origin(Origin origin) { origin_ = std::move(origin); }
  // Sets this origin on the node and every descendant.
  void set_origin_recursive(const Origin& origin);

  // Value equality; origins are ignored. Ints and floats never compare equal to each other.
  bool operator==(const Node& other) const;
  bool operator!=(const Node& other) const { return !(*this == other); }

 private:
  friend class BigInt;

  NodeType type_ = NodeType::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0.0;
  std::string string_;  // kString: the text; kInt: the decimal text of a big int, else empty
  std::vector<Node> items_;
  std::vector<Entry> entries_;
  Origin origin_;
};

struct Node::Entry {
  std::string key;
  Node value;
  // Keys written as numbers, booleans or null in an override dict keep their type for printing.
  NodeType key_type = NodeType::kString;
};

// OmegaConf's merge: maps merge key by key (new keys appended in order), everything else
// (lists included) is replaced by the source. A `???` source does not erase a set value.
void merge_into(Node& destination, const Node& source);

// Splits a key path as OmegaConf writes it: "a.b.c", "a[0].b", "list.0" -> {"a","0","b"}.
// Returns false on malformed paths (empty segments, unbalanced brackets).
bool split_key_path(std::string_view path, std::vector<std::string>& segments);

// Looks a dotted path up; list segments are decimal indices. nullptr when any step is absent.
const Node* select(const Node& root, std::string_view path);
Node* select(Node& root, std::string_view path);

}  // namespace trainer::config
