// OmegaConf interpolation: `${a.b}`, `${a[0]}`, relative `${.x}` / `${..x}`, nested `${a.${b}}`,
// string concatenation, type-preserving whole-value interpolation, cycle detection, and resolvers
// (`${name:args}`): oc.env, oc.select, oc.create, oc.decode, oc.dict.keys/values, now, hydra, plus
// any registered from C++ with TRAINER_REGISTER_RESOLVER.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config {

struct ResolveContext {
  const Node* hydra = nullptr;  // the `hydra` node, for ${hydra:...}; may be null
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();  // for ${now:FMT}
};

// A resolver gets its already-resolved arguments and returns a value.
using ResolverFn = std::function<Node(const std::vector<Node>& args, const ResolveContext& ctx)>;

class ResolverRegistry {
 public:
  static ResolverRegistry& global();
  // Throws trainer::Error if the name is taken.
  void add(const std::string& name, ResolverFn fn);
  const ResolverFn* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, ResolverFn>> resolvers_;
};

// Resolves every interpolation in `root` in place (`???` values stay as they are).
// Throws trainer::Error naming the key path, the node's origin, the problem and the fix.
void resolve_all(Node& root, const ResolveContext& ctx);

// Resolves the value at `path` (and what it refers to) without changing `root`.
Node resolve_path(const Node& root, std::string_view path, const ResolveContext& ctx);

}  // namespace trainer::config

#define TRAINER_CONCAT_INNER(a, b) a##b
#define TRAINER_CONCAT(a, b) TRAINER_CONCAT_INNER(a, b)
// Registers a resolver at static-initialisation time: TRAINER_REGISTER_RESOLVER("double", fn);
#define TRAINER_REGISTER_RESOLVER(name, fn)                                        \
  static const bool TRAINER_CONCAT(trainer_resolver_registered_, __COUNTER__) = \
      (::trainer::config::ResolverRegistry::global().add(name, fn), true)
