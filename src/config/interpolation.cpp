#include "trainer/config/interpolation.h"

#include "trainer/config/did_you_mean.h"
#include "trainer/util/error.h"

#include "interpolation_engine.h"

namespace trainer::config {

void resolve_all(Node& root, const ResolveContext& ctx) {
  InterpolationEngine engine(root, ctx);
  engine.resolve_all();
}

Node resolve_path(const Node& root, std::string_view path, const ResolveContext& ctx) {
  std::vector<std::string> segments;
  if (!path.empty() && !split_key_path(path, segments)) {
    throw Error(std::string(path), "'" + std::string(path) + "' is not a valid key path",
                "Write keys as a.b.c or a[0].b.");
  }
  Node copy = root;
  InterpolationEngine engine(copy, ctx);
  if (ctx.hydra != nullptr && ctx.hydra == root.find("hydra")) engine.use_root_hydra();
  size_t depth = 0;
  Node* node = engine.resolve_at(segments, &depth);
  if (node == nullptr) {
    std::string prefix;
    for (size_t i = 0; i < depth; ++i) prefix += (i == 0 ? "" : ".") + segments[i];
    const Node* parent = select(copy, prefix);
    std::string fix;
    if (parent != nullptr && parent->is_map()) {
      std::vector<std::string> keys;
      for (const Node::Entry& entry : parent->entries()) keys.push_back(entry.key);
      const std::string match = closest_match(segments[depth], keys);
      if (!match.empty()) {
        fix = "Did you mean '" + (prefix.empty() ? match : prefix + "." + match) + "'? ";
      }
    }
    fix += "Add it with +" + std::string(path) + "=...";
    throw Error(std::string(path), "key '" + std::string(path) + "' not found in the config", fix);
  }
  return *node;
}

}  // namespace trainer::config
