#include "trainer/config/node.h"

#include <cassert>
#include <charconv>

#include "trainer/config/big_int.h"

#include "entry_index.h"

namespace trainer::config {

Origin Origin::file(std::shared_ptr<const std::string> path, int line) {
  Origin origin;
  origin.source = std::move(path);
  origin.line = line;
  return origin;
}

Origin Origin::override_text(std::string text) {
  Origin origin;
  origin.source = std::make_shared<const std::string>(std::move(text));
  origin.is_override = true;
  return origin;
}

std::string Origin::describe() const {
  if (!source) return {};
  if (is_override) return "override '" + *source + "'";
  if (line > 0) return *source + ":" + std::to_string(line);
  return *source;
}

std::string Origin::describe_key(const std::string& key) const {
  const std::string where = describe();
  return where.empty() ? key : key + " (" + where + ")";
}

const char* type_name(NodeType type) {
  switch (type) {
    case NodeType::kNull:
      return "null";
    case NodeType::kBool:
      return "bool";
    case NodeType::kInt:
      return "int";
    case NodeType::kFloat:
      return "float";
    case NodeType::kString:
      return "str";
    case NodeType::kList:
      return "list";
    case NodeType::kMap:
      return "dict";
    case NodeType::kMissing:
      return "missing value (\?\?\?)";
  }
  return "?";
}

Node Node::boolean(bool value) {
  Node node;
  node.type_ = NodeType::kBool;
  node.bool_ = value;
  return node;
}

Node Node::integer(int64_t value) {
  Node node;
  node.type_ = NodeType::kInt;
  node.int_ = value;
  return node;
}

Node Node::integer_text(std::string_view decimal) {
  BigInt value;
  const bool valid = BigInt::parse_decimal(decimal, value);
  assert(valid && "Node::integer_text needs a sign and decimal digits");
  (void)valid;
  return value.to_node();
}

Node Node::floating(double value) {
  Node node;
  node.type_ = NodeType::kFloat;
  node.float_ = value;
  return node;
}

Node Node::string(std::string value) {
  Node node;
  node.type_ = NodeType::kString;
  node.string_ = std::move(value);
  return node;
}

Node Node::list() {
  Node node;
  node.type_ = NodeType::kList;
  return node;
}

Node Node::map() {
  Node node;
  node.type_ = NodeType::kMap;
  return node;
}

Node Node::missing() {
  Node node;
  node.type_ = NodeType::kMissing;
  return node;
}

bool Node::is_interpolation() const { return type_ == NodeType::kString && string_.find("${") != std::string::npos; }

bool Node::as_bool() const {
  assert(type_ == NodeType::kBool);
  return bool_;
}

int64_t Node::as_int() const {
  assert(type_ == NodeType::kInt);
  return int_;
}

std::string Node::int_text() const {
  assert(type_ == NodeType::kInt);
  return string_.empty() ? std::to_string(int_) : string_;
}

double Node::as_float() const {
  assert(type_ == NodeType::kFloat);
  return float_;
}

const std::string& Node::as_string() const {
  assert(type_ == NodeType::kString);
  return string_;
}

size_t Node::size() const {
  if (type_ == NodeType::kMap) return entries_.size();
  if (type_ == NodeType::kList) return items_.size();
  return 0;
}

const Node* Node::find(std::string_view key) const {
  if (type_ != NodeType::kMap) return nullptr;
  for (const Entry& entry : entries_) {
    if (entry.key == key) return &entry.value;
  }
  return nullptr;
}

Node* Node::find(std::string_view key) { return const_cast<Node*>(static_cast<const Node*>(this)->find(key)); }

Node& Node::set(std::string key, Node value) {
  assert(type_ == NodeType::kMap);
  for (Entry& entry : entries_) {
    if (entry.key == key) {
      entry.value = std::move(value);
      return entry.value;
    }
  }
  entries_.push_back(Entry{std::move(key), std::move(value)});
  return entries_.back().value;
}

bool Node::erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

Node& Node::push_back(Node value) {
  assert(type_ == NodeType::kList);
  items_.push_back(std::move(value));
  return items_.back();
}

void Node::set_origin_recursive(const Origin& origin) {
  origin_ = origin;
  for (Node& item : items_) item.set_origin_recursive(origin);
  for (Entry& entry : entries_) entry.value.set_origin_recursive(origin);
}

bool Node::operator==(const Node& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case NodeType::kNull:
    case NodeType::kMissing:
      return true;
    case NodeType::kBool:
      return bool_ == other.bool_;
    case NodeType::kInt:
      return int_ == other.int_ && string_ == other.string_;
    case NodeType::kFloat:
      return float_ == other.float_ || (float_ != float_ && other.float_ != other.float_);
    case NodeType::kString:
      return string_ == other.string_;
    case NodeType::kList:
      return items_ == other.items_;
    case NodeType::kMap:
      if (entries_.size() != other.entries_.size()) return false;
      for (size_t i = 0; i < entries_.size(); ++i) {
        if (entries_[i].key != other.entries_[i].key || entries_[i].value != other.entries_[i].value) {
          return false;
        }
      }
      return true;
  }
  return false;
}

void merge_into(Node& destination, const Node& source) {
  if (destination.is_map() && source.is_map()) {
    // Indexed: merging a large file's body into the (empty) composed config looked every key up
    // by a scan of the keys merged before it.
    std::vector<Node::Entry>& entries = destination.entries();
    detail::EntryIndex index;
    for (const Node::Entry& entry : source.entries()) {
      if (Node::Entry* existing = index.find(entries, entry.key)) {
        merge_into(existing->value, entry.value);
      } else {
        entries.push_back(entry);
      }
    }
    return;
  }
  if (source.is_missing() && !destination.is_missing() && !destination.is_null()) return;
  destination = source;
}

bool split_key_path(std::string_view path, std::vector<std::string>& segments) {
  segments.clear();
  size_t i = 0;
  if (path.empty()) return false;
  while (i < path.size()) {
    if (path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string_view::npos || close == i + 1) return false;
      segments.emplace_back(path.substr(i + 1, close - i - 1));
      i = close + 1;
      if (i < path.size()) {
        if (path[i] == '.') {
          ++i;
          if (i == path.size()) return false;
        } else if (path[i] != '[') {
          return false;
        }
      }
      continue;
    }
    size_t end = path.find_first_of(".[", i);
    if (end == std::string_view::npos) end = path.size();
    if (end == i) return false;
    segments.emplace_back(path.substr(i, end - i));
    i = end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) return false;
    }
  }
  return true;
}

namespace {

bool parse_index(const std::string& text, size_t& index) {
  if (text.empty()) return false;
  auto result = std::from_chars(text.data(), text.data() + text.size(), index);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace

const Node* select(const Node& root, std::string_view path) {
  if (path.empty()) return &root;
  std::vector<std::string> segments;
  if (!split_key_path(path, segments)) return nullptr;
  const Node* node = &root;
  for (const std::string& segment : segments) {
    if (node->is_map()) {
      node = node->find(segment);
    } else if (node->is_list()) {
      size_t index = 0;
      if (!parse_index(segment, index) || index >= node->items().size()) return nullptr;
      node = &node->items()[index];
    } else {
      return nullptr;
    }
    if (node == nullptr) return nullptr;
  }
  return node;
}

Node* select(Node& root, std::string_view path) {
  return const_cast<Node*>(select(static_cast<const Node&>(root), path));
}

}  // namespace trainer::config
