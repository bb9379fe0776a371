#include "interpolation_engine.h"

#include <array>
#include <charconv>
#include <unordered_map>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/config/user_warning.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

#include "interpolation_grammar.h"

namespace trainer::config {

struct InterpolationEngine::Value {
  const Node* ref = nullptr;  // a node of the tree (no copy until needed)
  Node owned;                 // a resolver's result
  const Node& get() const { return ref != nullptr ? *ref : owned; }
  Node take() {
    if (ref != nullptr) return *ref;
    return std::move(owned);
  }
};

namespace {

bool parse_index(std::string_view text, size_t& index) {
  if (text.empty()) return false;
  auto result = std::from_chars(text.data(), text.data() + text.size(), index);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

std::vector<std::string> keys_of(const Node& map) {
  std::vector<std::string> keys;
  keys.reserve(map.entries().size());
  for (const Node::Entry& entry : map.entries()) keys.push_back(entry.key);
  return keys;
}

std::string join_path(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// Python's type(value).__name__ for a value as OmegaConf holds it (containers are configs).
std::string python_type_name(const Node& node) {
  switch (node.type()) {
    case NodeType::kNull:
      return "NoneType";
    case NodeType::kList:
      return "ListConfig";
    case NodeType::kMap:
      return "DictConfig";
    case NodeType::kMissing:
      return "str";
    default:
      return type_name(node.type());
  }
}

bool is_identifier_char(char c, bool first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

// Python's string.Template(message).safe_substitute(OLD_KEY=..., NEW_KEY=...): `$$` is `$`,
// `$name` / `${name}` of another name (or a lone `$`) stay as written.
std::string substitute_keys(const std::string& message, const std::string& old_key, const std::string& new_key) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] != '$' || i + 1 == message.size()) {
      out += message[i];
      continue;
    }
    if (message[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    const bool braced = message[i + 1] == '{';
    size_t start = i + (braced ? 2 : 1), end = start;
    while (end < message.size() && is_identifier_char(message[end], end == start)) ++end;
    const std::string name = message.substr(start, end - start);
    if (name.empty() || (braced && (end == message.size() || message[end] != '}')) ||
        (name != "OLD_KEY" && name != "NEW_KEY")) {
      out += message[i];
      continue;
    }
    out += name == "OLD_KEY" ? old_key : new_key;
    i = braced ? end : end - 1;
  }
  return out;
}

std::string describe_value(const Node& node) {
  std::string text = type_name(node.type());
  if (node.is_scalar() && !node.is_missing()) {
    std::string shown = node.is_string() ? python_string_repr(node.as_string()) : python_str(node);
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    text += " (" + shown + ")";
  }
  return text;
}

// Pops the innermost active entry however the resolution ends.
template <typename T>
struct PopOnExit {
  std::vector<T>& stack;
  ~PopOnExit() { stack.pop_back(); }
};

std::string key_text(const Node& key, NodeType& type) {
  type = key.type();
  switch (key.type()) {
    case NodeType::kNull:
      return "null";
    case NodeType::kBool:
      return key.as_bool() ? "true" : "false";
    case NodeType::kInt:
      return key.int_text();
    case NodeType::kFloat:
      return python_float_repr(key.as_float());
    case NodeType::kString:
      return key.as_string();
    default:
      type = NodeType::kString;
      return python_str(key);
  }
}

// Sweeps resolve the same strings in every job, so parsed templates are kept per thread.
// Shared pointers keep a template alive while it is evaluated even if the cache is cleared.
std::shared_ptr<const grammar::Template> parsed_template(const std::string& text) {
  thread_local std::unordered_map<std::string, std::shared_ptr<const grammar::Template>> cache;
  auto found = cache.find(text);
  if (found != cache.end()) return found->second;
  auto parsed = std::make_shared<const grammar::Template>(grammar::parse_template(text));
  if (cache.size() >= 20000) cache.clear();
  cache.emplace(text, parsed);
  return parsed;
}

}  // namespace

namespace {

void check_syntax_under(const Node& node, const std::string& path) {
  if (node.is_map()) {
    for (const Node::Entry& entry : node.entries()) check_syntax_under(entry.value, join_path(path, entry.key));
  } else if (node.is_list()) {
    for (size_t i = 0; i < node.items().size(); ++i)
      check_syntax_under(node.items()[i], join_path(path, std::to_string(i)));
  } else if (node.is_string() && node.as_string().find("${") != std::string::npos) {
    try {
      parsed_template(node.as_string());
    } catch (const grammar::SyntaxError& error) {
      const std::string key = path.empty() ? "<root>" : path;
      throw Error(node.origin().known() ? node.origin().describe() : key,
                  key + " = '" + node.as_string() + "': cannot parse the interpolation: " + error.what() +
                      " (at character " + std::to_string(error.position() + 1) + ")",
                  "Write interpolations as ${key.path} or ${resolver:args}; write \\${ for a literal '${'.");
    }
  }
}

}  // namespace

void check_interpolation_syntax(const Node& root) { check_syntax_under(root, ""); }

void throw_missing_value(const std::string& path, const Node& node, const std::string& context) {
  const std::string where = node.origin().known() ? node.origin().describe() : path;
  throw Error(where, "missing mandatory value: " + path + " is \?\?\?" + context,
              "Set it on the command line, e.g. " + path + "=...");
}

InterpolationEngine::InterpolationEngine(Node& root, const ResolveContext& context) : root_(root), context_(context) {
  hydra_in_root_ = context_.hydra != nullptr && root_.find("hydra") == context_.hydra;
}

InterpolationEngine::~InterpolationEngine() = default;

void InterpolationEngine::use_root_hydra() { hydra_in_root_ = root_.find("hydra") != nullptr; }

std::string InterpolationEngine::omegaconf_key(const Chain& chain, size_t length) {
  std::string path;
  for (size_t i = 1; i < length && i < chain.size(); ++i) {
    if (chain[i].key != nullptr) {
      if (!path.empty()) path += '.';
      path += *chain[i].key;
    } else {
      path += "[" + std::to_string(chain[i].index) + "]";
    }
  }
  return path;
}

std::string InterpolationEngine::path_of(const Chain& chain, size_t length) {
  std::string path;
  for (size_t i = 1; i < length && i < chain.size(); ++i) {
    if (!path.empty()) path += '.';
    if (chain[i].key != nullptr) {
      path += *chain[i].key;
    } else {
      path += std::to_string(chain[i].index);
    }
  }
  return path;
}

bool InterpolationEngine::is_resolved(const Node* node) const {
  for (const Node* done : resolved_strings_) {
    if (done == node) return true;
  }
  return false;
}

bool InterpolationEngine::needs_resolution(const Node& node) const {
  return node.is_interpolation() && !is_resolved(&node);
}

void InterpolationEngine::mark_resolved_strings(const Node& node) {
  if (node.is_interpolation()) {
    resolved_strings_.push_back(&node);
  } else if (node.is_map()) {
    for (const Node::Entry& entry : node.entries()) mark_resolved_strings(entry.value);
  } else if (node.is_list()) {
    for (const Node& item : node.items()) mark_resolved_strings(item);
  }
}

InterpolationEngine::PooledChain::PooledChain(InterpolationEngine& engine) : engine_(engine) {
  if (!engine_.spare_chains_.empty()) {
    chain = std::move(engine_.spare_chains_.back());
    engine_.spare_chains_.pop_back();
  }
}

InterpolationEngine::PooledChain::~PooledChain() {
  chain.clear();
  engine_.spare_chains_.push_back(std::move(chain));
}

void InterpolationEngine::resolve_all() {
  Chain chain{{&root_, nullptr, 0}};
  resolve_deep(chain);
}

Node* InterpolationEngine::walk(Chain& chain, const std::string_view* keys, size_t count, size_t* found_depth) {
  for (size_t depth = 0; depth < count; ++depth) {
    resolve_value(chain);  // a key path may pass through an interpolated container
    Node* current = chain.back().node;
    const std::string_view key = keys[depth];
    Node* child = nullptr;
    const std::string* child_key = nullptr;
    size_t index = 0;
    if (current->is_map()) {
      for (Node::Entry& entry : current->entries()) {
        if (entry.key == key) {
          child = &entry.value;
          child_key = &entry.key;
          break;
        }
      }
    } else if (current->is_list()) {
      if (parse_index(key, index) && index < current->items().size()) {
        child = &current->items()[index];
      }
    }
    if (child == nullptr) {
      if (found_depth != nullptr) *found_depth = depth;
      return nullptr;
    }
    chain.push_back({child, child_key, index});
  }
  if (found_depth != nullptr) *found_depth = count;
  resolve_value(chain);
  return chain.back().node;
}

Node* InterpolationEngine::walk(Chain& chain, const std::vector<std::string>& keys, size_t* found_depth) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  return walk(chain, views.data(), views.size(), found_depth);
}

Node* InterpolationEngine::resolve_at(const std::vector<std::string>& segments, size_t* found_depth) {
  Chain chain{{&root_, nullptr, 0}};
  chain.reserve(segments.size() + 4);
  Node* node = walk(chain, segments, found_depth);
  if (node == nullptr) return nullptr;
  resolve_deep(chain);
  return chain.back().node;
}

bool InterpolationEngine::resolve_value(Chain& chain) {
  Node* node = chain.back().node;
  if (!needs_resolution(*node)) return false;
  for (const Active& active : active_) {
    if (active.node == node) fail_cycle(node, chain);
  }
  std::shared_ptr<const grammar::Template> parsed;
  try {
    parsed = parsed_template(node->as_string());
  } catch (const grammar::SyntaxError& error) {
    fail(chain,
         std::string("cannot parse the interpolation: ") + error.what() + " (at character " +
             std::to_string(error.position() + 1) + ")",
         "Write interpolations as ${key.path} or ${resolver:args}; write \\${ for a literal "
         "'${'.");
  }
  Node result;
  {
    active_.push_back({node, &chain, chain.size()});
    PopOnExit<Active> pop{active_};
    if (parsed->is_single_interpolation()) {
      result = evaluate(*parsed->pieces[0].interpolation, chain).take();
    } else {
      result = Node::string(concatenate(parsed->pieces, chain));
    }
  }
  Origin origin = node->origin();
  *node = std::move(result);
  node->set_origin(std::move(origin));
  mark_resolved_strings(*node);
  return true;
}

void InterpolationEngine::resolve_deep(Chain& chain) {
  if (resolve_value(chain)) return;  // a freshly resolved value is final
  Node* node = chain.back().node;
  if (node->is_map()) {
    for (Node::Entry& entry : node->entries()) {
      chain.push_back({&entry.value, &entry.key, 0});
      resolve_deep(chain);
      chain.pop_back();
    }
  } else if (node->is_list()) {
    std::vector<Node>& items = node->items();
    for (size_t i = 0; i < items.size(); ++i) {
      chain.push_back({&items[i], nullptr, i});
      resolve_deep(chain);
      chain.pop_back();
    }
  }
}

void InterpolationEngine::resolve_target_container(Chain& chain) {
  const Node* node = chain.back().node;
  for (const Active& active : active_) {
    if (active.node == node) fail_cycle(node, chain);
  }
  active_.push_back({node, &chain, chain.size()});
  PopOnExit<Active> pop{active_};
  resolve_deep(chain);
}

InterpolationEngine::Value InterpolationEngine::evaluate(const grammar::Interpolation& interpolation,
                                                         const Chain& holder) {
  return interpolation.is_resolver ? call_resolver(interpolation, holder) : lookup(interpolation, holder);
}

std::string InterpolationEngine::evaluate_key(const grammar::Piece& piece, const Chain& holder) {
  if (piece.interpolation == nullptr) return piece.text;
  Value value = evaluate(*piece.interpolation, holder);
  if (!value.get().is_string()) {
    fail(holder,
         "the nested interpolation " + piece.interpolation->text +
             " is used as a key name, so it must give a str, but it gave " + describe_value(value.get()),
         "Make it refer to a string value.");
  }
  return value.get().as_string();
}

std::string InterpolationEngine::concatenate(const std::vector<grammar::Piece>& pieces, const Chain& holder) {
  std::string out;
  for (const grammar::Piece& piece : pieces) {
    if (piece.interpolation == nullptr) {
      out += piece.text;
    } else {
      Value value = evaluate(*piece.interpolation, holder);
      append_python_str(value.get(), out);
    }
  }
  return out;
}

Node InterpolationEngine::evaluate_element(const grammar::Element& element, const Chain& holder) {
  using Kind = grammar::Element::Kind;
  switch (element.kind) {
    case Kind::kConstant:
      return element.constant;
    case Kind::kInterpolation:
      return evaluate(*element.pieces[0].interpolation, holder).take();
    case Kind::kConcat:
      return Node::string(concatenate(element.pieces, holder));
    case Kind::kList: {
      Node list = Node::list();
      for (const grammar::Element& item : element.items) {
        list.push_back(evaluate_element(item, holder));
      }
      return list;
    }
    case Kind::kDict: {
      Node map = Node::map();
      for (size_t i = 0; i < element.items.size(); ++i) {
        NodeType type = NodeType::kString;
        std::string key = key_text(element.keys[i], type);
        map.set(key, evaluate_element(element.items[i], holder));
        for (Node::Entry& entry : map.entries()) {
          if (entry.key == key) entry.key_type = type;
        }
      }
      return map;
    }
  }
  return Node();
}

InterpolationEngine::Value InterpolationEngine::lookup(const grammar::Interpolation& interpolation,
                                                       const Chain& holder) {
  // Literal keys are viewed in place; only nested interpolations produce new strings. Short
  // paths (almost all) need no allocation at all.
  const size_t count = interpolation.keys.size();
  constexpr size_t kInline = 8;
  std::array<std::string_view, kInline> inline_keys;
  std::vector<std::string_view> heap_keys;
  std::string_view* keys = inline_keys.data();
  if (count > kInline) {
    heap_keys.resize(count);
    keys = heap_keys.data();
  }
  std::vector<std::string> nested;
  for (size_t i = 0; i < count; ++i) {
    const grammar::Piece& piece = interpolation.keys[i];
    if (piece.interpolation == nullptr) {
      keys[i] = piece.text;
    } else {
      if (nested.empty()) nested.reserve(count);  // views into it must stay valid
      nested.push_back(evaluate_key(piece, holder));
      keys[i] = nested.back();
    }
  }
  PooledChain pooled(*this);
  Chain& chain = pooled.chain;
  const size_t dots = static_cast<size_t>(interpolation.dots);
  if (dots == 0) {
    chain.push_back({&root_, nullptr, 0});
  } else {
    if (dots >= holder.size()) {
      fail(holder, "the relative interpolation " + interpolation.text + " goes above the config root",
           "Use fewer leading dots, or an absolute path without a leading dot.");
    }
    chain.assign(holder.begin(), holder.end() - static_cast<std::ptrdiff_t>(dots));
  }
  size_t depth = 0;
  Node* target = walk(chain, keys, count, &depth);
  if (target == nullptr) {
    const Node& parent = *chain.back().node;
    const std::string parent_path = path_of(chain, chain.size());
    std::string wanted = parent_path;
    for (size_t i = depth; i < count; ++i) wanted = join_path(wanted, std::string(keys[i]));
    std::string problem = "interpolation target '" + wanted + "' not found";
    std::string fix;
    if (parent.is_map()) {
      const std::string match = closest_match(keys[depth], keys_of(parent));
      if (!match.empty()) fix = "Did you mean '" + join_path(parent_path, match) + "'? ";
      fix += "Fix the interpolation, or add the key with +" + join_path(parent_path, std::string(keys[depth])) + "=...";
    } else if (parent.is_list()) {
      problem += " (" + (parent_path.empty() ? std::string("the root") : "'" + parent_path + "'") + " is a list of " +
                 std::to_string(parent.items().size()) + " items)";
      fix = (parent.items().size() == 0 ? std::string("The list is empty: give it items first.")
                                        : "Use an index from 0 to " + std::to_string(parent.items().size() - 1) + ".");
    } else {
      problem += " ('" + parent_path + "' is a " + describe_value(parent) + ", not a dict)";
      fix = "Fix the interpolation.";
    }
    fail(holder, problem, fix);
  }
  if (target->is_missing()) {
    const std::string target_path = path_of(chain, chain.size());
    std::string at = target->origin().known() ? " at " + target->origin().describe() : "";
    fail(holder, "missing mandatory value: the interpolation target '" + target_path + "' is \?\?\?" + at,
         "Set it on the command line, e.g. " + target_path + "=...");
  }
  if (!target->is_scalar()) resolve_target_container(chain);
  Value value;
  value.ref = target;
  return value;
}

Node* InterpolationEngine::select_key(std::string_view key, const Chain& holder, bool deep) {
  size_t dots = 0;
  while (dots < key.size() && key[dots] == '.') ++dots;
  std::string_view rest = key.substr(dots);
  PooledChain pooled(*this);
  Chain& chain = pooled.chain;
  if (dots == 0) {
    chain.push_back({&root_, nullptr, 0});
  } else {
    if (dots >= holder.size()) return nullptr;
    chain.assign(holder.begin(), holder.end() - static_cast<std::ptrdiff_t>(dots));
  }
  std::vector<std::string> segments;
  if (!rest.empty() && !split_key_path(rest, segments)) {
    fail(holder, "'" + std::string(key) + "' is not a valid key path",
         "Write keys as a.b.c, a[0] or a relative .b / ..b.");
  }
  Node* node = walk(chain, segments, nullptr);
  if (node == nullptr) return nullptr;
  if (deep && !node->is_scalar()) resolve_target_container(chain);
  return node;
}

InterpolationEngine::Value InterpolationEngine::call_resolver(const grammar::Interpolation& interpolation,
                                                              const Chain& holder) {
  std::string name;
  for (const grammar::Piece& part : interpolation.name) {
    if (!name.empty()) name += '.';
    name += evaluate_key(part, holder);
  }
  std::vector<Node> args;
  args.reserve(interpolation.args.size());
  for (const grammar::Element& element : interpolation.args) {
    args.push_back(evaluate_element(element, holder));
  }
  auto expect_args = [&](size_t low, size_t high, const char* usage) {
    if (args.size() < low || args.size() > high) {
      fail(holder,
           name + " takes " +
               (low == high ? std::to_string(low) : std::to_string(low) + " to " + std::to_string(high)) + " argument" +
               (high == 1 ? "" : "s") + ", got " + std::to_string(args.size()),
           std::string("Write it as ") + usage + ".");
    }
  };
  auto expect_string = [&](const Node& arg, const char* usage) {
    if (!arg.is_string()) {
      fail(holder, name + " needs a key as a string, got " + describe_value(arg),
           std::string("Write it as ") + usage + ".");
    }
  };
  Value value;
  if (name == "oc.select") {
    const char* usage = "${oc.select:key.path,default}";
    expect_args(1, 2, usage);
    expect_string(args[0], usage);
    Node* node = select_key(args[0].as_string(), holder, true);
    if (node == nullptr || node->is_missing()) {
      value.owned = args.size() > 1 ? std::move(args[1]) : Node();
    } else {
      value.ref = node;
    }
    return value;
  }
  if (name == "oc.deprecated") {
    // OmegaConf 2.3: the value of the new key, with a warning naming both keys (once per text).
    const char* usage = "${oc.deprecated:new.key} or ${oc.deprecated:new.key,'message with $OLD_KEY and $NEW_KEY'}";
    if (args.empty() || args.size() > 2) expect_args(1, 2, usage);
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].is_string()) {
        fail(holder,
             std::string("oc.deprecated: interpolation ") + (i == 0 ? "key" : "message") + " type is not a string (" +
                 python_type_name(args[i]) + ")",
             std::string("Write it as ") + usage + ".");
      }
    }
    const std::string& key = args[0].as_string();
    const std::string old_key = omegaconf_key(holder, holder.size());
    Node* node = select_key(key, holder, true);
    if (node == nullptr) {
      fail(holder, "In oc.deprecated resolver at '" + old_key + "': Key not found: '" + key + "'",
           "Name the key that replaces this one, e.g. ${oc.deprecated:new.key}.");
    }
    size_t dots = 0;
    while (dots < key.size() && key[dots] == '.') ++dots;
    std::string new_key = key.substr(dots);
    if (dots > 0) {
      const size_t level = holder.size() >= dots ? holder.size() - dots : 0;
      new_key = join_path(omegaconf_key(holder, level), new_key);
    }
    const std::string message =
        args.size() > 1 ? args[1].as_string()
                        : std::string("'$OLD_KEY' is deprecated. Change your code and config to use '$NEW_KEY'");
    warn_once(substitute_keys(message, old_key, new_key));
    value.ref = node;
    return value;
  }
  if (name == "oc.dict.keys" || name == "oc.dict.values") {
    const bool keys = name == "oc.dict.keys";
    const char* usage = keys ? "${oc.dict.keys:key.path}" : "${oc.dict.values:key.path}";
    expect_args(1, 1, usage);
    if (!args[0].is_string()) {
      fail(holder,
           "`" + name + "` requires a string as input, but obtained `" + python_str(args[0]) +
               "` of type: " + python_type_name(args[0]),
           std::string("Write it as ") + usage + ".");
    }
    const std::string& key = args[0].as_string();
    Node* node = select_key(key, holder, !keys);
    if (node == nullptr) fail(holder, "Key not found: '" + key + "'", "Give the path of a dict in the config.");
    if (node->is_missing()) {
      fail(holder, "Missing mandatory value: " + key, "Set " + key + " to a dict, or give another dict's path.");
    }
    if (!node->is_map()) {
      fail(holder, "`" + name + "` cannot be applied to objects of type: " + python_type_name(*node),
           "Give the path of a dict in the config.");
    }
    value.owned = Node::list();
    for (const Node::Entry& entry : node->entries()) {
      value.owned.push_back(keys ? Node::string(entry.key) : entry.value);
    }
    return value;
  }
  if (name == "oc.decode") {
    const char* usage = "${oc.decode:'[1,2]'}";
    expect_args(1, 1, usage);
    if (args[0].is_null()) return value;
    if (!args[0].is_string()) {
      fail(holder,
           "`oc.decode` can only take strings or None as input, but `" + python_str(args[0]) + "` is of type " +
               python_type_name(args[0]),
           "Pass a string, e.g. ${oc.decode:'[1,2]'} or ${oc.decode:${oc.env:VAR}}.");
    }
    grammar::Element element;
    try {
      element = grammar::parse_element(args[0].as_string());
    } catch (const grammar::SyntaxError& error) {
      fail(holder,
           "oc.decode cannot parse " + python_string_repr(args[0].as_string()) + ": " + error.what() +
               " (at character " + std::to_string(error.position() + 1) + ")",
           "Pass one value: a number, true/false, null, a string, [a list] or {a: dict}.");
    }
    value.owned = evaluate_element(element, holder);
    if (context_.omegaconf_resolve && (value.owned.is_list() || value.owned.is_map())) {
      fail(holder,
           std::string("--resolve cannot store the ") + (value.owned.is_list() ? "list" : "dict") +
               " that oc.decode returns (OmegaConf.resolve fails the same way)",
           "Use oc.create to build a list or dict, or print without --resolve.");
    }
    return value;
  }
  if (name == "hydra") {
    const char* usage = "${hydra:runtime.output_dir}";
    expect_args(1, 1, usage);
    expect_string(args[0], usage);
    value.ref = resolve_in_hydra(args[0].as_string(), holder);
    return value;
  }
  const ResolverFn* fn = ResolverRegistry::global().find(name);
  if (fn == nullptr) {
    std::vector<std::string> names = ResolverRegistry::global().names();
    std::string fix = did_you_mean(name, names);
    if (!fix.empty()) fix += ' ';
    fix += "Registered resolvers:";
    for (size_t i = 0; i < names.size(); ++i) fix += (i == 0 ? " " : ", ") + names[i];
    fix += ". Register new ones in C++ with TRAINER_REGISTER_RESOLVER.";
    fail(holder, "unknown resolver '" + name + "' in " + interpolation.text, fix);
  }
  try {
    value.owned = (*fn)(args, context_);
  } catch (const Error& error) {
    fail(holder, name + ": " + error.problem(), error.fix());
  } catch (const std::exception& error) {
    fail(holder, "resolver '" + name + "' failed: " + error.what(), "");
  }
  if (name == "oc.create" && !value.owned.is_scalar()) {
    // OmegaConf turns the value into a live config: its interpolations resolve where it sits.
    Chain chain(holder.begin(), holder.end() - 1);
    chain.push_back({&value.owned, holder.back().key, holder.back().index});
    resolve_deep(chain);
  }
  return value;
}

const Node* InterpolationEngine::resolve_in_hydra(const std::string& path, const Chain& holder) {
  if (context_.hydra == nullptr) {
    fail(holder, "${hydra:" + path + "} needs the hydra config, but none is available here",
         "Use ${hydra:...} only in configs composed by the trainer.");
  }
  std::vector<std::string> segments{"hydra"};
  std::vector<std::string> rest;
  if (!split_key_path(path, rest)) {
    fail(holder, "'" + path + "' is not a valid key path", "Write it as ${hydra:runtime.output_dir}.");
  }
  segments.insert(segments.end(), rest.begin(), rest.end());
  InterpolationEngine* engine = this;
  if (!hydra_in_root_) {
    if (hydra_engine_ == nullptr) {
      // Hydra values may refer to job values (hydra.run.dir: outputs/${model.name}), so resolve
      // them in a copy of the whole config with the hydra node in its place.
      hydra_root_ = std::make_unique<Node>(root_);
      hydra_root_->set("hydra", *context_.hydra);
      hydra_engine_ = std::make_unique<InterpolationEngine>(*hydra_root_, context_);
      hydra_engine_->hydra_in_root_ = true;
    }
    engine = hydra_engine_.get();
  }
  size_t depth = 0;
  Node* node = engine->resolve_at(segments, &depth);
  if (node == nullptr) {
    std::string prefix;
    for (size_t i = 0; i < depth; ++i) prefix = join_path(prefix, segments[i]);
    const Node* parent = select(engine->root_, prefix);
    std::string fix;
    if (parent != nullptr && parent->is_map()) {
      const std::string match = closest_match(segments[depth], keys_of(*parent));
      if (!match.empty()) {
        fix = "Did you mean '${hydra:" + join_path(prefix, match).substr(6) + "}'? ";
      }
    }
    fix += "See the hydra config with --cfg hydra.";
    fail(holder, "${hydra:" + path + "}: hydra." + path + " not found", fix);
  }
  if (node->is_missing()) {
    // Hydra's resolver is OmegaConf.select(hydra_cfg, path), which gives None for `???` (for
    // example runtime.output_dir under --cfg, where Hydra prints `output_dir: null`).
    static const Node kNull;
    return &kNull;
  }
  return node;
}

void InterpolationEngine::fail(const Chain& holder, const std::string& problem, const std::string& fix) const {
  const Node& node = *holder.back().node;
  std::string path = path_of(holder, holder.size());
  if (path.empty()) path = "<root>";
  const std::string where = node.origin().known() ? node.origin().describe() : path;
  std::string text = path;
  if (node.is_string()) text += " = '" + node.as_string() + "'";
  text += ": " + problem;
  throw Error(where, text, fix);
}

void InterpolationEngine::fail_cycle(const Node* node, const Chain& chain) const {
  size_t first = 0;
  while (first < active_.size() && active_[first].node != node) ++first;
  std::string cycle;
  for (size_t i = first; i < active_.size(); ++i) {
    std::string path = path_of(*active_[i].chain, active_[i].length);
    cycle += (path.empty() ? "<root>" : path) + " -> ";
  }
  std::string path = path_of(chain, chain.size());
  cycle += path.empty() ? "<root>" : path;
  const std::string where = node->origin().known() ? node->origin().describe() : path;
  throw Error(where, "interpolation cycle: " + cycle,
              "Break the cycle: one of these values must not refer back to the others.");
}

}  // namespace trainer::config
