// STUB: replaced by the interpolation engine.
#include "trainer/config/interpolation.h"

#include "trainer/util/error.h"

namespace trainer::config {

ResolverRegistry& ResolverRegistry::global() {
  static ResolverRegistry registry;
  return registry;
}

void ResolverRegistry::add(const std::string& name, ResolverFn fn) {
  resolvers_.emplace_back(name, std::move(fn));
}

const ResolverFn* ResolverRegistry::find(std::string_view name) const {
  for (const auto& [key, fn] : resolvers_) {
    if (key == name) return &fn;
  }
  return nullptr;
}

std::vector<std::string> ResolverRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : resolvers_) out.push_back(entry.first);
  return out;
}

void resolve_all(Node&, const ResolveContext&) {}

Node resolve_path(const Node& root, std::string_view path, const ResolveContext&) {
  const Node* node = select(root, path);
  if (node == nullptr) throw Error(std::string(path), "not found");
  return *node;
}

}  // namespace trainer::config
