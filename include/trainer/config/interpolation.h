// OmegaConf interpolation: `${a.b}`, `${a[0]}`, relative `${.x}` / `${..x}`, nested `${a.${b}}`,
// string concatenation, type-preserving whole-value interpolation, cycle detection, and resolvers
// (`${name:args}`): oc.env, oc.select, oc.create, oc.decode, oc.deprecated, oc.dict.keys/values, now, hydra, plus
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
  // The `hydra` node, for ${hydra:...}; may be null. It may be root["hydra"] itself or a separate
  // tree; either way its own interpolations resolve against the whole config (so
  // hydra.run.dir: outputs/${model.name} works), as in Hydra.
  const Node* hydra = nullptr;
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();  // for ${now:FMT}
  // As OmegaConf.resolve() (what Hydra's --cfg --resolve runs): a value that oc.decode turns into
  // a plain list or dict cannot be stored back into the config and is an error (observed in
  // OmegaConf 2.3: "Value 'list' is not a supported primitive type"). Off for jobs, whose code
  // reads such values fine.
  bool omegaconf_resolve = false;
};

// A resolver gets its already-resolved arguments (typed by OmegaConf's grammar: ints, floats,
// bools, null, strings, lists and dicts) and returns a value. Throw trainer::Error to fail; the
// engine adds the key and origin. A returned string is not resolved again.
using ResolverFn = std::function<Node(const std::vector<Node>& args, const ResolveContext& ctx)>;

class ResolverRegistry {
 public:
  // The built-ins are registered on first use: oc.env, oc.select, oc.create, oc.decode, oc.deprecated,
  // oc.dict.keys, oc.dict.values, now, hydra.
  static ResolverRegistry& global();
  // Throws trainer::Error if the name is taken or is not dot-separated identifiers.
  void add(const std::string& name, ResolverFn fn);
  const ResolverFn* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, ResolverFn>> resolvers_;
};

// Resolves every interpolation in `root` in place (`???` values stay as they are).
// Throws trainer::Error naming the key path, the node's origin, the problem and the fix.
// Each value is resolved once; a result that still contains "${" (an escaped `\${x}`, or a
// resolver's output such as an environment variable) is final, so do not resolve a tree twice.
// Strings are converted with Python's str() when concatenated ("lr_${lr}" -> "lr_1e-05").
void resolve_all(Node& root, const ResolveContext& ctx);

// Parses every string value holding "${" (OmegaConf validates them so when a config is created or
// merged, before anything is resolved: `bad: x${a` fails Hydra's --cfg job). Throws trainer::Error
// naming the key, its origin and where parsing stopped. Resolves nothing.
void check_interpolation_syntax(const Node& root);

// Resolves the value at `path` (and what it refers to) without changing `root`. Throws
// trainer::Error (with a did-you-mean) when the key is absent. For many lookups in one tree use
// ConfigView (config_view.h), which copies the tree once.
Node resolve_path(const Node& root, std::string_view path, const ResolveContext& ctx);

}  // namespace trainer::config

#define TRAINER_CONCAT_INNER(a, b) a##b
#define TRAINER_CONCAT(a, b) TRAINER_CONCAT_INNER(a, b)
// Registers a resolver at static-initialisation time: TRAINER_REGISTER_RESOLVER("double", fn);
// Put it in a file linked into the executable: a linker drops unreferenced objects of a static
// library, and their registrations with them.
#define TRAINER_REGISTER_RESOLVER(name, fn)                                     \
  static const bool TRAINER_CONCAT(trainer_resolver_registered_, __COUNTER__) = \
      (::trainer::config::ResolverRegistry::global().add(name, fn), true)
