#include "trainer/config/config_view.h"

#include "trainer/config/big_int.h"
#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

#include "interpolation_engine.h"

namespace trainer::config {

struct ConfigView::Shared {
  const Node* original = nullptr;
  ResolveContext context;
  // Made on the first value that needs resolving; resolved lazily, one path at a time.
  std::unique_ptr<Node> working;
  std::unique_ptr<InterpolationEngine> engine;

  InterpolationEngine& resolver() {
    if (engine == nullptr) {
      working = std::make_unique<Node>(*original);
      engine = std::make_unique<InterpolationEngine>(*working, context);
      if (context.hydra != nullptr && context.hydra == original->find("hydra")) {
        engine->use_root_hydra();
      }
    }
    return *engine;
  }
};

namespace {

const char* with_article(NodeType type) {
  switch (type) {
    case NodeType::kNull:
      return "null";
    case NodeType::kBool:
      return "a bool";
    case NodeType::kInt:
      return "an int";
    case NodeType::kFloat:
      return "a float";
    case NodeType::kString:
      return "a str";
    case NodeType::kList:
      return "a list";
    case NodeType::kMap:
      return "a dict";
    case NodeType::kMissing:
      return "a missing value (\?\?\?)";
  }
  return "a value";
}

const char* example_of(NodeType type) {
  switch (type) {
    case NodeType::kBool:
      return "true";
    case NodeType::kInt:
      return "10";
    case NodeType::kFloat:
      return "0.1";
    case NodeType::kString:
      return "text";
    case NodeType::kList:
      return "[1,2]";
    case NodeType::kMap:
      return "{a:1}";
    default:
      return "...";
  }
}

std::string actual(const Node& node) {
  std::string text = with_article(node.type());
  if (node.is_scalar() && !node.is_null() && !node.is_missing()) {
    std::string shown = node.is_string() ? python_string_repr(node.as_string()) : python_str(node);
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    text += " (" + shown + ")";
  }
  return text;
}

std::string where_of(const Node& node, const std::string& path) {
  return node.origin().known() ? node.origin().describe() : (path.empty() ? "<root>" : path);
}

std::string shown_path(const std::string& path) { return path.empty() ? "the config root" : path; }

[[noreturn]] void missing_error(const Node& node, const std::string& path) {
  throw Error(where_of(node, path), "missing mandatory value: " + shown_path(path) + " is \?\?\?",
              "Set it on the command line, e.g. " + path + "=...");
}

[[noreturn]] void type_error(const Node& node, const std::string& path, const char* expected, NodeType example) {
  if (node.is_missing()) missing_error(node, path);
  throw Error(where_of(node, path), shown_path(path) + " is " + actual(node) + ", expected " + expected,
              std::string("Set it to ") + expected + ", e.g. " + path + "=" + example_of(example));
}

// `engine` is null until the view first resolved something.
bool is_unresolved(const Node& node, const InterpolationEngine* engine) {
  return node.is_interpolation() && (engine == nullptr || !engine->is_resolved(&node));
}

bool contains_unresolved(const Node& node, const InterpolationEngine* engine) {
  if (node.is_map()) {
    for (const Node::Entry& entry : node.entries()) {
      if (contains_unresolved(entry.value, engine)) return true;
    }
    return false;
  }
  if (node.is_list()) {
    for (const Node& item : node.items()) {
      if (contains_unresolved(item, engine)) return true;
    }
    return false;
  }
  return is_unresolved(node, engine);
}

const Node* child_of(const Node& node, const std::string& key) {
  if (node.is_map()) return node.find(key);
  if (node.is_list()) {
    size_t index = 0;
    for (char c : key) {
      if (c < '0' || c > '9') return nullptr;
      index = index * 10 + static_cast<size_t>(c - '0');
      if (index > node.items().size()) return nullptr;
    }
    if (key.empty() || index >= node.items().size()) return nullptr;
    return &node.items()[index];
  }
  return nullptr;
}

}  // namespace

namespace view_detail {

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void expect_type(const Node& node, const std::string& path, NodeType type) {
  if (node.type() == type) return;
  type_error(node, path, with_article(type), type);
}

bool to_bool(const Node& node, const std::string& path) {
  expect_type(node, path, NodeType::kBool);
  return node.as_bool();
}

int64_t to_int(const Node& node, const std::string& path) {
  expect_type(node, path, NodeType::kInt);
  if (node.is_big_int()) {
    throw Error(where_of(node, path), shown_path(path) + " is " + node.int_text() + ", which does not fit in 64 bits",
                "Use a value between -9223372036854775808 and 9223372036854775807.");
  }
  return node.as_int();
}

int64_t to_int_in_range(const Node& node, const std::string& path, int64_t low, uint64_t high, const char* type) {
  const int64_t value = to_int(node, path);
  if (value < low || (value > 0 && static_cast<uint64_t>(value) > high)) {
    throw Error(where_of(node, path),
                shown_path(path) + " is " + std::to_string(value) + ", which does not fit in a " + type + " (" +
                    std::to_string(low) + " to " + std::to_string(high) + ")",
                "Use a value in that range.");
  }
  return value;
}

double to_double(const Node& node, const std::string& path) {
  if (node.type() == NodeType::kInt) {
    double value = 0;
    if (!int_to_double(node, value)) {
      throw Error(where_of(node, path),
                  shown_path(path) + " is " + node.int_text() + ", which is too large for a float",
                  "Use a value whose magnitude is below 1.8e308.");
    }
    return value;
  }
  if (node.type() != NodeType::kFloat) type_error(node, path, "a float", NodeType::kFloat);
  return node.as_float();
}

std::string to_string(const Node& node, const std::string& path) {
  expect_type(node, path, NodeType::kString);
  return node.as_string();
}

}  // namespace view_detail

ConfigView::ConfigView(const Node& root, ResolveContext context) : shared_(std::make_shared<Shared>()), node_(&root) {
  shared_->original = &root;
  shared_->context = context;
}

ConfigView::ConfigView(std::shared_ptr<Shared> shared, const Node* node, std::vector<std::string> segments,
                       std::string prefix)
    : shared_(std::move(shared)), node_(node), segments_(std::move(segments)), prefix_(std::move(prefix)) {}

std::string ConfigView::full_path(std::string_view path) const {
  if (path.empty()) return prefix_;
  if (prefix_.empty()) return std::string(path);
  return prefix_ + "." + std::string(path);
}

const Node* ConfigView::find(std::string_view path, const Node** parent_out, size_t* depth_out,
                             std::vector<std::string>* segments_out) const {
  std::vector<std::string> local;
  std::vector<std::string>& segments = segments_out != nullptr ? *segments_out : local;
  segments.clear();
  if (!path.empty() && !split_key_path(path, segments)) {
    throw Error(full_path(path), "'" + std::string(path) + "' is not a valid key path",
                "Write keys as a.b.c or a[0].b.");
  }
  // Fast path: no interpolation on the way or under the value.
  const Node* current = node_;
  bool clean = true;
  size_t depth = 0;
  for (; depth < segments.size(); ++depth) {
    if (is_unresolved(*current, shared_->engine.get())) {
      clean = false;
      break;
    }
    const Node* child = child_of(*current, segments[depth]);
    if (child == nullptr) break;
    current = child;
  }
  if (clean && depth < segments.size()) {
    if (parent_out != nullptr) *parent_out = current;
    if (depth_out != nullptr) *depth_out = depth;
    return nullptr;
  }
  if (clean && !contains_unresolved(*current, shared_->engine.get())) return current;

  // Resolve in the private copy, by the full path from the root.
  std::vector<std::string> full = segments_;
  full.insert(full.end(), segments.begin(), segments.end());
  InterpolationEngine& engine = shared_->resolver();
  size_t found = 0;
  Node* node = engine.resolve_at(full, &found);
  if (node != nullptr) return node;
  if (parent_out != nullptr) {
    // The walk resolved every node on the way, so the parent can be read directly (resolving
    // its whole subtree could fail on an unrelated value).
    const Node* parent = shared_->working.get();
    for (size_t i = 0; i < found && parent != nullptr; ++i) parent = child_of(*parent, full[i]);
    *parent_out = parent;
  }
  if (depth_out != nullptr) *depth_out = found - segments_.size();
  return nullptr;
}

void ConfigView::throw_missing(const Node& node, const std::string& path) { missing_error(node, path); }

const Node& ConfigView::node(std::string_view path) const {
  const Node* parent = nullptr;
  size_t depth = 0;
  std::vector<std::string> segments;
  const Node* found = find(path, &parent, &depth, &segments);
  if (found != nullptr) {
    if (found->is_missing()) throw_missing(*found, full_path(path));
    return *found;
  }
  std::string parent_path = prefix_;
  for (size_t i = 0; i < depth; ++i) parent_path = view_detail::child_path(parent_path, segments[i]);
  const std::string& key = segments[depth];
  const std::string wanted = view_detail::child_path(parent_path, key);
  if (parent == nullptr || parent->is_map()) {
    std::string fix;
    if (parent != nullptr) {
      std::vector<std::string> keys;
      for (const Node::Entry& entry : parent->entries()) keys.push_back(entry.key);
      const std::string match = closest_match(key, keys);
      if (!match.empty()) {
        fix = "Did you mean '" + view_detail::child_path(parent_path, match) + "'? ";
      }
    }
    fix += "If it is new, add it with +" + wanted + "=...";
    const std::string where = parent != nullptr && parent->origin().known() ? parent->origin().describe() : wanted;
    throw Error(where, "key '" + wanted + "' not found in the config", fix);
  }
  if (parent->is_list()) {
    throw Error(
        where_of(*parent, parent_path),
        "key '" + wanted + "' not found: " + shown_path(parent_path) + " is a list of " +
            std::to_string(parent->items().size()) + " items",
        (parent->items().size() == 0 ? std::string("The list is empty: give it items first.")
                                     : "Use an index from 0 to " + std::to_string(parent->items().size() - 1) + "."));
  }
  throw Error(where_of(*parent, parent_path),
              "key '" + wanted + "' not found: " + shown_path(parent_path) + " is " + actual(*parent) + ", not a dict",
              "Fix the key path.");
}

ConfigView ConfigView::sub(std::string_view path) const {
  const Node& found = node(path);
  const std::string full = full_path(path);
  if (found.is_scalar()) type_error(found, full, "a dict", NodeType::kMap);
  std::vector<std::string> segments = segments_;
  std::vector<std::string> relative;
  if (!path.empty()) split_key_path(path, relative);
  segments.insert(segments.end(), relative.begin(), relative.end());
  return ConfigView(shared_, &found, std::move(segments), full);
}

std::vector<std::string> ConfigView::keys() const {
  const Node& self = node();
  std::vector<std::string> out;
  for (const Node::Entry& entry : self.entries()) out.push_back(entry.key);
  return out;
}

}  // namespace trainer::config
