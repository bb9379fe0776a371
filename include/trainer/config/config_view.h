// Typed, read-only access to a config tree for the training engine:
// view.get<int64_t>("trainer.max_epochs"), get_or, has, sub("trainer"). Interpolations are resolved
// on access; errors name the full key, its origin, the expected and the actual type, and suggest
// the closest key. Views share state and are cheap to copy; they are not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "trainer/config/interpolation.h"
#include "trainer/config/node.h"

namespace trainer::config {

namespace view_detail {
// Conversions that throw trainer::Error naming `path`, the node's origin and both types.
bool to_bool(const Node& node, const std::string& path);
int64_t to_int(const Node& node, const std::string& path);
int64_t to_int_in_range(const Node& node, const std::string& path, int64_t low, uint64_t high, const char* type);
double to_double(const Node& node, const std::string& path);
std::string to_string(const Node& node, const std::string& path);
void expect_type(const Node& node, const std::string& path, NodeType type);
std::string child_path(const std::string& path, const std::string& key);
}  // namespace view_detail

// How get<T> reads a T. Supported: bool, integer types (range-checked), float, double,
// std::string, std::vector<T>, std::map<std::string, T>, std::optional<T> (null -> nullopt).
template <typename T, typename Enable = void>
struct ConfigConverter;

class ConfigView {
 public:
  // `root` must outlive the view and every view made from it. It is never modified: values that
  // need resolving are resolved in a private copy, made the first time one is needed.
  explicit ConfigView(const Node& root, ResolveContext context = {});

  // The value at `path` (relative to this view) as a T. Throws trainer::Error when the key is
  // absent, `???`, or of another type (an int is accepted where a float is expected).
  template <typename T>
  T get(std::string_view path) const {
    return ConfigConverter<T>::convert(node(path), full_path(path));
  }

  // Like get, but `fallback` when the key is absent or null.
  template <typename T>
  T get_or(std::string_view path, T fallback) const {
    const Node* found = find(path);
    if (found == nullptr || found->is_null()) return fallback;
    if (found->is_missing()) throw_missing(*found, full_path(path));
    return ConfigConverter<T>::convert(*found, full_path(path));
  }

  // True when the key exists (even if its value is null or `???`).
  bool has(std::string_view path) const { return find(path) != nullptr; }

  // A view of the dict or list at `path`; its messages name keys with the full path.
  ConfigView sub(std::string_view path) const;

  // The resolved node at `path` ("" for this view's node). Throws like get.
  const Node& node(std::string_view path = {}) const;

  // Keys of this view's dict, in order (empty for a list).
  std::vector<std::string> keys() const;

  // "trainer" for view.sub("trainer"); "" for the root view.
  const std::string& prefix() const { return prefix_; }
  // prefix + "." + path.
  std::string full_path(std::string_view path) const;

 private:
  struct Shared;
  ConfigView(std::shared_ptr<Shared> shared, const Node* node, std::vector<std::string> segments, std::string prefix);

  // The resolved node or nullptr when absent; `*parent_out` gets the deepest node found and
  // `*depth_out` the index of the first missing segment.
  const Node* find(std::string_view path, const Node** parent_out = nullptr, size_t* depth_out = nullptr,
                   std::vector<std::string>* segments_out = nullptr) const;
  [[noreturn]] static void throw_missing(const Node& node, const std::string& path);

  std::shared_ptr<Shared> shared_;
  const Node* node_;
  std::vector<std::string> segments_;  // from the root to node_
  std::string prefix_;
};

template <>
struct ConfigConverter<bool> {
  static bool convert(const Node& node, const std::string& path) { return view_detail::to_bool(node, path); }
};

template <typename T>
struct ConfigConverter<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static T convert(const Node& node, const std::string& path) {
    if constexpr (std::is_same_v<T, int64_t>) {
      return view_detail::to_int(node, path);
    } else {
      const char* name = std::is_signed_v<T> ? "signed int" : "non-negative int";
      return static_cast<T>(view_detail::to_int_in_range(node, path,
                                                         static_cast<int64_t>(std::numeric_limits<T>::min()),
                                                         static_cast<uint64_t>(std::numeric_limits<T>::max()), name));
    }
  }
};

template <typename T>
struct ConfigConverter<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static T convert(const Node& node, const std::string& path) {
    return static_cast<T>(view_detail::to_double(node, path));
  }
};

template <>
struct ConfigConverter<std::string> {
  static std::string convert(const Node& node, const std::string& path) { return view_detail::to_string(node, path); }
};

template <typename T>
struct ConfigConverter<std::optional<T>> {
  static std::optional<T> convert(const Node& node, const std::string& path) {
    if (node.is_null()) return std::nullopt;
    return ConfigConverter<T>::convert(node, path);
  }
};

template <typename T>
struct ConfigConverter<std::vector<T>> {
  static std::vector<T> convert(const Node& node, const std::string& path) {
    view_detail::expect_type(node, path, NodeType::kList);
    std::vector<T> out;
    out.reserve(node.items().size());
    for (size_t i = 0; i < node.items().size(); ++i) {
      out.push_back(ConfigConverter<T>::convert(node.items()[i], view_detail::child_path(path, std::to_string(i))));
    }
    return out;
  }
};

template <typename T>
struct ConfigConverter<std::map<std::string, T>> {
  static std::map<std::string, T> convert(const Node& node, const std::string& path) {
    view_detail::expect_type(node, path, NodeType::kMap);
    std::map<std::string, T> out;
    for (const Node::Entry& entry : node.entries()) {
      out.emplace(entry.key, ConfigConverter<T>::convert(entry.value, view_detail::child_path(path, entry.key)));
    }
    return out;
  }
};

}  // namespace trainer::config
