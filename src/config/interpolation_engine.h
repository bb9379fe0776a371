// The interpolation engine behind resolve_all, resolve_path and ConfigView: resolves values in
// place inside one mutable tree, lazily (only what is asked for and what that refers to), each
// node at most once, with cycle detection and errors that name the key, its origin and the fix.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/interpolation.h"
#include "trainer/config/node.h"

namespace trainer::config {

namespace grammar {
struct Element;
struct Interpolation;
struct Piece;
}  // namespace grammar

class InterpolationEngine {
 public:
  // `root` must outlive the engine; the engine rewrites interpolations in it as it resolves them.
  InterpolationEngine(Node& root, const ResolveContext& context);
  ~InterpolationEngine();
  InterpolationEngine(const InterpolationEngine&) = delete;
  InterpolationEngine& operator=(const InterpolationEngine&) = delete;

  // Resolves every interpolation in the tree.
  void resolve_all();

  // Follows `segments` from the root, resolving interpolations on the way and everything under
  // the node found. Returns nullptr when a key is absent (`*found_depth` = how many segments
  // matched), throws trainer::Error when an interpolation cannot be resolved.
  Node* resolve_at(const std::vector<std::string>& segments, size_t* found_depth = nullptr);

  // Lets ${hydra:...} read root["hydra"] (for a copy of a tree whose hydra node was the
  // context's).
  void use_root_hydra();

  // True when `node` holds a resolved string that merely looks like an interpolation
  // (an escaped `\${x}` or a resolver's output), so it must not be resolved again.
  bool is_resolved(const Node* node) const;

  // Key path of a node as users write it in overrides: "a.b.0.c".
  struct Step {
    Node* node;
    const std::string* key;  // null for list items and the root
    size_t index;
  };
  using Chain = std::vector<Step>;
  static std::string path_of(const Chain& chain, size_t length);
  // The same path as OmegaConf's full keys write it: "a.b[0].c".
  static std::string omegaconf_key(const Chain& chain, size_t length);

 private:
  struct Value;
  struct Active {
    const Node* node;
    const Chain* chain;
    size_t length;
  };

  // A chain borrowed from spare_chains_ for one lookup, so lookups do not allocate.
  struct PooledChain {
    explicit PooledChain(InterpolationEngine& engine);
    ~PooledChain();
    PooledChain(const PooledChain&) = delete;
    PooledChain& operator=(const PooledChain&) = delete;
    Chain chain;

   private:
    InterpolationEngine& engine_;
  };

  bool needs_resolution(const Node& node) const;
  // Resolves the interpolation at chain.back() in place; returns true when it was one.
  bool resolve_value(Chain& chain);
  void resolve_deep(Chain& chain);
  void resolve_target_container(Chain& chain);
  void mark_resolved_strings(const Node& node);
  // Follows `keys` from chain.back(), resolving interpolations on the way and the final value
  // (not what is under it). Returns nullptr when a key is absent; chain then ends at the last
  // node found and *found_depth is the index of the missing key.
  Node* walk(Chain& chain, const std::string_view* keys, size_t count, size_t* found_depth);
  Node* walk(Chain& chain, const std::vector<std::string>& keys, size_t* found_depth);

  Value evaluate(const grammar::Interpolation& interpolation, const Chain& holder);
  Node evaluate_element(const grammar::Element& element, const Chain& holder);
  std::string evaluate_key(const grammar::Piece& piece, const Chain& holder);
  std::string concatenate(const std::vector<grammar::Piece>& pieces, const Chain& holder);
  Value lookup(const grammar::Interpolation& interpolation, const Chain& holder);
  Value call_resolver(const grammar::Interpolation& interpolation, const Chain& holder);

  // Select-style lookup for oc.select / oc.dict.*: "a.b", ".x" (sibling), "..x", "" (root).
  // Returns the node (and with `deep` everything under it resolved) or nullptr when absent.
  Node* select_key(std::string_view key, const Chain& holder, bool deep);
  // The node ${hydra:path} gives: null for `???` as in Hydra, an error when absent.
  const Node* resolve_in_hydra(const std::string& path, const Chain& holder);

  [[noreturn]] void fail(const Chain& holder, const std::string& problem, const std::string& fix) const;
  [[noreturn]] void fail_cycle(const Node* node, const Chain& chain) const;

  Node& root_;
  const ResolveContext& context_;
  std::vector<const Node*> resolved_strings_;
  std::vector<Active> active_;
  std::vector<Chain> spare_chains_;
  // For ${hydra:...} when the hydra node is not inside root_: a copy of root_ with the hydra node
  // under "hydra", resolved by its own engine (so hydra values may refer to job values).
  std::unique_ptr<Node> hydra_root_;
  std::unique_ptr<InterpolationEngine> hydra_engine_;
  bool hydra_in_root_ = false;
};

// Throws a trainer::Error naming `where_path` for a value that is `???`.
[[noreturn]] void throw_missing_value(const std::string& path, const Node& node, const std::string& context);

}  // namespace trainer::config
