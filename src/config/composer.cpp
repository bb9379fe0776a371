#include "trainer/config/composer.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "trainer/config/config_repository.h"
#include "trainer/config/defaults_list.h"
#include "trainer/config/did_you_mean.h"
#include "trainer/config/hydra_schema.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/python_str.h"
#include "trainer/config/python_value.h"
#include "trainer/util/error.h"

namespace trainer::config {

namespace {

// What composing the defaults list yields before any config-value override: cached per distinct
// set of config-group overrides, so the jobs of a sweep over values share one.
struct ComposedBase {
  Node config;
  std::vector<DefaultsEntry> defaults;
  std::string tree;
  std::vector<std::pair<std::string, std::optional<std::string>>> choices;
};

bool is_hydra_key(const std::string& key) {
  return key.compare(0, 6, "hydra.") == 0 || key.compare(0, 6, "hydra/") == 0;
}

bool parse_index(const std::string& text, size_t& index) {
  if (text.empty() || text.size() > 18) return false;
  index = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return true;
}

Node* child_of(Node& node, const std::string& segment) {
  if (node.is_map()) return node.find(segment);
  if (node.is_list()) {
    size_t index = 0;
    if (parse_index(segment, index) && index < node.items().size()) return &node.items()[index];
  }
  return nullptr;
}

std::vector<std::string> keys_of(const Node& node) {
  std::vector<std::string> keys;
  for (const Node::Entry& entry : node.entries()) keys.push_back(entry.key);
  return keys;
}

// Thrown inside apply_override when a key is not there in struct mode; the caller turns it into
// Hydra's "Could not override" message with the missing key and its closest sibling.
struct KeyNotInStruct {
  std::string full_key;
  std::string suggestion;
};

// Struct mode: merging a dict override into a dict may not introduce keys.
void check_struct_merge(const Node& destination, const Node& source, const std::string& prefix) {
  if (!destination.is_map() || !source.is_map()) return;
  for (const Node::Entry& entry : source.entries()) {
    const Node* existing = destination.find(entry.key);
    const std::string full_key = prefix.empty() ? entry.key : prefix + "." + entry.key;
    if (existing == nullptr) {
      throw KeyNotInStruct{full_key, closest_match(entry.key, keys_of(destination))};
    }
    check_struct_merge(*existing, entry.value, full_key);
  }
}

[[noreturn]] void merge_error(const Override& override, const std::string& problem, const std::string& fix) {
  throw Error(Origin::override_text(override.text).describe(),
              "Error merging override " + override.text + ": " + problem, fix);
}

// OmegaConf.update(cfg, key, value, merge=True, force_add=...) on a struct config.
void update_value(Node& root, const std::vector<std::string>& segments, const Node& value, bool force_add,
                  const Override& override) {
  Node* node = &root;
  std::string path;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const std::string& segment = segments[i];
    path += (path.empty() ? "" : ".") + segment;
    Node* next = child_of(*node, segment);
    if (next == nullptr || (!next->is_map() && !next->is_list())) {
      // OmegaConf replaces a missing or scalar step by {}; in struct mode only a force-add may.
      if (!force_add) {
        throw KeyNotInStruct{
            path, node->is_map() && next == nullptr ? closest_match(segment, keys_of(*node)) : std::string()};
      }
      if (node->is_map()) {
        Node fresh = Node::map();
        fresh.set_origin(Origin::override_text(override.text));
        next = &node->set(segment, std::move(fresh));
      } else if (next != nullptr) {
        *next = Node::map();
        next->set_origin(Origin::override_text(override.text));
      } else {
        merge_error(override, "list index out of range at '" + path + "'", "use an index below the list's length");
      }
    }
    node = next;
  }
  const std::string& last = segments.back();
  const std::string full_key = path.empty() ? last : path + "." + last;
  if (node->is_list()) {
    size_t index = 0;
    if (!parse_index(last, index)) {
      merge_error(override, "'" + last + "' is not a list index",
                  "index lists with numbers, e.g. " + (path.empty() ? "list" : path) + ".0=...");
    }
    if (index >= node->items().size()) {
      merge_error(override,
                  "list index out of range: '" + full_key + "' has " + std::to_string(node->items().size()) + " items",
                  "use an index below the list's length, or replace the whole list: " +
                      (path.empty() ? std::string("key") : path) + "=[...]");
    }
    Node& target = node->items()[index];
    if (target.is_map() && value.is_map()) {
      if (!force_add) check_struct_merge(target, value, full_key);
      merge_into(target, value);
    } else if ((target.is_map() && value.is_list()) || (target.is_list() && value.is_map())) {
      merge_error(override, "Cannot merge a dict with a list", "give a value of the same kind");
    } else {
      target = value;
    }
    return;
  }
  Node* target = node->find(last);
  if (target != nullptr && (target->is_map() || target->is_list()) && (value.is_map() || value.is_list())) {
    if (target->is_map() && value.is_map()) {
      if (!force_add) check_struct_merge(*target, value, full_key);
      merge_into(*target, value);
      return;
    }
    if (target->is_list() && value.is_list()) {
      *target = value;
      return;
    }
    merge_error(override,
                std::string("Cannot merge ") + (value.is_map() ? "a dict into the list" : "a list into the dict") +
                    " at '" + full_key + "'",
                "give a value of the same kind, or delete the key first with ~" + full_key);
  }
  if (target == nullptr && !force_add) {
    throw KeyNotInStruct{full_key, closest_match(last, keys_of(*node))};
  }
  node->set(last, value);
}

void apply_config_override(Node& config, const Override& override) {
  const std::string where = Origin::override_text(override.text).describe();
  std::vector<std::string> segments;
  if (!split_key_path(override.key, segments)) {
    throw Error(where, "'" + override.key + "' is not a valid key path", "write keys as a.b.c or list.0");
  }
  if (override.kind == OverrideKind::kDelete) {
    const Node* current = select(config, override.key);
    if (current == nullptr || current->is_null() || current->is_missing()) {
      throw Error(where, "Could not delete from config. '" + override.key + "' does not exist.",
                  did_you_mean(segments.back(), [&] {
                    std::string parent_path;
                    for (size_t i = 0; i + 1 < segments.size(); ++i) {
                      parent_path += (i ? "." : "") + segments[i];
                    }
                    const Node* parent = select(config, parent_path);
                    return parent != nullptr ? keys_of(*parent) : std::vector<std::string>();
                  }()));
    }
    if (override.has_value && !override.value.is_null() && !python_equal(override.value, *current)) {
      throw Error(where,
                  "Could not delete from config. The value of '" + override.key + "' is " + python_str(*current) +
                      " and not " + python_str(override.value) + ".",
                  "write ~" + override.key + " to delete whatever it holds");
    }
    Node* parent = &config;
    for (size_t i = 0; i + 1 < segments.size(); ++i) parent = child_of(*parent, segments[i]);
    if (parent->is_map()) {
      parent->erase(segments.back());
    } else {
      size_t index = 0;
      parse_index(segments.back(), index);
      parent->items().erase(parent->items().begin() + static_cast<std::ptrdiff_t>(index));
    }
    return;
  }

  Node value = override.value;
  value.set_origin_recursive(Origin::override_text(override.text));
  if (override.kind == OverrideKind::kAdd) {
    const Node* current = select(config, override.key);
    if (current != nullptr && !current->is_null() && !current->is_missing() && !value.is_map() && !value.is_list()) {
      const std::string bare = override.text.substr(1);
      throw Error(where, "Could not append to config. An item is already at '" + override.key + "'.",
                  "Either remove + prefix: '" + bare + "'\nOr add a second + to add or override '" + override.key +
                      "': '+" + override.text + "'");
    }
  }
  try {
    update_value(config, segments, value, override.kind != OverrideKind::kChange, override);
  } catch (const KeyNotInStruct& missing) {
    std::string fix = "To append to your config use +" + override.text;
    if (!missing.suggestion.empty()) {
      std::string path = missing.full_key;
      size_t dot = path.rfind('.');
      path = dot == std::string::npos ? missing.suggestion : path.substr(0, dot + 1) + missing.suggestion;
      fix = "Did you mean '" + path + "'? " + fix;
    }
    throw Error(where, "Could not override '" + override.key + "'. Key '" + missing.full_key + "' is not in the config",
                fix);
  }
}

void embed_at_package(Node& destination, const Node& body, const std::string& package) {
  if (package.empty()) {
    merge_into(destination, body);
    return;
  }
  Node* node = &destination;
  size_t start = 0;
  while (true) {
    size_t dot = package.find('.', start);
    std::string key = package.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    Node* next = node->find(key);
    if (next == nullptr || !next->is_map()) {
      if (dot == std::string::npos && next != nullptr) {
        // OmegaConf merges the embedded body onto whatever is there (a null or a value).
        merge_into(*next, body);
        return;
      }
      if (next == nullptr)
        next = &node->set(key, Node::map());
      else if (!next->is_map())
        *next = Node::map();
    }
    if (dot == std::string::npos) {
      merge_into(*next, body);
      return;
    }
    node = next;
    start = dot + 1;
  }
}

}  // namespace

std::string override_dirname(const std::vector<const Override*>& task_overrides, const Node& hydra) {
  std::string kv_sep = "=";
  std::string item_sep = ",";
  std::vector<std::string> exclude;
  if (const Node* config = select(hydra, "job.config.override_dirname")) {
    if (const Node* n = config->find("kv_sep"); n != nullptr && n->is_string()) kv_sep = n->as_string();
    if (const Node* n = config->find("item_sep"); n != nullptr && n->is_string()) item_sep = n->as_string();
    if (const Node* n = config->find("exclude_keys"); n != nullptr && n->is_list()) {
      for (const Node& item : n->items()) {
        if (item.is_string()) exclude.push_back(item.as_string());
      }
    }
  }
  std::vector<std::string> lines;
  for (const Override* override : task_overrides) {
    if (std::find(exclude.begin(), exclude.end(), override->key) != exclude.end()) continue;
    lines.push_back(override->text);
  }
  std::sort(lines.begin(), lines.end());
  std::string joined;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) joined += item_sep;
    joined += lines[i];
  }
  if (kv_sep == "=") return joined;
  std::string result;
  for (char c : joined) {
    if (c == '=')
      result += kv_sep;
    else
      result += c;
  }
  return result;
}

constexpr size_t kMaxCachedBases = 1024;

struct Composer::Impl {
  ComposerOptions options;
  ConfigRepository repository;
  std::string cwd;
  Node config_sources;
  mutable std::mutex mutex;
  mutable std::unordered_map<std::string, std::shared_ptr<const ComposedBase>> bases;

  explicit Impl(ComposerOptions opts) : options(std::move(opts)), repository(options.search_path) {
    char buffer[4096];
    if (getcwd(buffer, sizeof buffer) != nullptr) cwd = buffer;
    config_sources = Node::list();
    for (const SearchPathEntry& entry : repository.search_path()) {
      Node source = Node::map();
      std::string path = entry.path;
      std::string schema = "file";
      size_t scheme = path.find("://");
      if (scheme != std::string::npos) {
        schema = path.substr(0, scheme);
        path = path.substr(scheme + 3);
      }
      source.set("path", Node::string(path));
      source.set("schema", Node::string(schema));
      source.set("provider", Node::string(entry.provider));
      config_sources.push_back(std::move(source));
    }
    Node schema = Node::map();
    schema.set("path", Node::string(""));
    schema.set("schema", Node::string("structured"));
    schema.set("provider", Node::string("schema"));
    config_sources.push_back(std::move(schema));
  }

  std::shared_ptr<const ComposedBase> base(const std::vector<const Override*>& group_overrides, RunMode mode) const {
    std::string key = mode == RunMode::kMultirun ? "M" : "R";
    for (const Override* override : group_overrides) {
      key += '\x1f';
      key += override->text;
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = bases.find(key);
      if (it != bases.end()) return it->second;
    }
    DefaultsListResult list =
        create_defaults_list(repository, options.config_name, group_overrides, mode == RunMode::kMultirun);
    auto composed = std::make_shared<ComposedBase>();
    composed->config = Node::map();
    for (const DefaultsEntry& entry : list.defaults) {
      std::shared_ptr<const LoadedConfig> loaded = repository.load(entry.config_path);
      if (!loaded) continue;
      if (!entry.primary && entry.config_path != "hydra/config") {
        const Node* hydra = loaded->body.find("hydra");
        if (hydra != nullptr && hydra->find("searchpath") != nullptr && entry.package.empty()) {
          throw Error(hydra->origin().known() ? hydra->origin().describe() : loaded->source,
                      "In '" + entry.config_path +
                          "': Overriding hydra.searchpath is only supported from the primary "
                          "config",
                      "move hydra.searchpath to the primary config");
        }
      }
      embed_at_package(composed->config, loaded->body, entry.package);
    }
    composed->defaults = std::move(list.defaults);
    composed->tree = std::move(list.tree);
    composed->choices = std::move(list.choices);
    std::lock_guard<std::mutex> lock(mutex);
    // Bounded: a sweep over thousands of group combinations must not keep every composition.
    if (bases.size() >= kMaxCachedBases) bases.clear();
    return bases.emplace(std::move(key), std::move(composed)).first->second;
  }
};

Composer::Composer(ComposerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Composer::~Composer() = default;
Composer::Composer(Composer&&) noexcept = default;

ComposeResult Composer::compose(const std::vector<Override>& overrides, RunMode mode) const {
  return compose(overrides, mode, true);
}

std::optional<std::string> Composer::configured_mode(const std::vector<Override>& overrides) const {
  try {
    const ComposeResult result = compose(overrides, RunMode::kMultirun, false);
    const Node* mode = select(result.config, "hydra.mode");
    if (mode == nullptr || !mode->is_string()) return std::nullopt;
    return mode->as_string();
  } catch (const Error&) {
    return std::nullopt;
  }
}

ComposeResult Composer::compose(const std::vector<Override>& overrides, RunMode mode, bool fill_mode) const {
  const ConfigRepository& repo = impl_->repository;
  std::vector<const Override*> group_overrides;
  std::vector<const Override*> config_overrides;
  for (const Override& override : overrides) {
    const std::string where = Origin::override_text(override.text).describe();
    if (override.is_sweep()) {
      if (mode == RunMode::kMultirun) {
        if (is_hydra_key(override.key)) {
          throw Error(where, "Sweeping over Hydra's configuration is not supported : '" + override.text + "'",
                      "sweep over your own config keys, or set hydra.* once");
        }
        continue;
      }
      if (override.sweep.kind == SweepKind::kSimpleChoice) {
        throw Error(where, "Ambiguous value for argument '" + override.text + "'",
                    "1. To use it as a list, use key=[value1,value2]\n"
                    "2. To use it as string, quote the value: key=\\'value1,value2\\'\n"
                    "3. To sweep over it, add --multirun to your command line");
      }
      throw Error(where, "Sweep parameters '" + override.text + "' requires --multirun", "add -m/--multirun to sweep");
    }
    const bool is_group = !override.value.is_map() && repo.group_exists(override.key);
    (is_group ? group_overrides : config_overrides).push_back(&override);
  }

  std::shared_ptr<const ComposedBase> base = impl_->base(group_overrides, mode);
  ComposeResult result;
  result.config = base->config;
  result.defaults = base->defaults;
  result.defaults_tree = base->tree;
  Node& config = result.config;

  for (const Override* override : config_overrides) {
    if (override->package) {
      std::vector<std::string> groups = repo.all_groups();
      throw Error(Origin::override_text(override->text).describe(),
                  "Override " + override->text + " looks like a config group override, but config group '" +
                      override->key + "' does not exist.",
                  [&] {
                    std::string hint = did_you_mean(override->key, groups);
                    return hint.empty() ? std::string("check the group name (see --help)") : hint;
                  }());
    }
    apply_config_override(config, *override);
  }

  check_interpolation_syntax(config);  // as OmegaConf on creating each value: `x${a` fails here
  Node* hydra = config.find("hydra");
  if (hydra == nullptr || !hydra->is_map()) return result;
  apply_hydra_schema(*hydra);  // hydra.job.chdir=yes is true, hydra.run.dir=null refused, as in Hydra
  auto ensure_map = [](Node& parent, const char* key) -> Node& {
    Node* node = parent.find(key);
    if (node == nullptr || !node->is_map()) return parent.set(key, Node::map());
    return *node;
  };
  auto ensure_list = [](Node& parent, const char* key) -> Node& {
    Node* node = parent.find(key);
    if (node == nullptr || !node->is_list()) return parent.set(key, Node::list());
    return *node;
  };
  Node& hydra_overrides = ensure_map(*hydra, "overrides");
  Node& hydra_list = ensure_list(hydra_overrides, "hydra");
  Node& task_list = ensure_list(hydra_overrides, "task");
  std::vector<const Override*> task_overrides;
  for (const Override& override : overrides) {
    Node text = Node::string(override.text);
    if (is_hydra_key(override.key)) {
      hydra_list.push_back(std::move(text));
    } else {
      task_list.push_back(std::move(text));
      task_overrides.push_back(&override);
    }
  }
  Node& runtime = ensure_map(*hydra, "runtime");
  Node& choices = ensure_map(runtime, "choices");
  for (const auto& [group, option] : base->choices) {
    choices.set(group, option ? Node::string(*option) : Node());
  }
  runtime.set("version", Node::string("1.3.2"));  // the Hydra release whose behaviour we follow
  runtime.set("version_base", Node::string("1.3"));
  runtime.set("cwd", Node::string(impl_->cwd));
  runtime.set("config_sources", impl_->config_sources);
  Node& job = ensure_map(*hydra, "job");
  Node* name = job.find("name");
  if (name == nullptr || name->is_missing()) job.set("name", Node::string(impl_->options.job_name));
  job.set("override_dirname", Node::string(override_dirname(task_overrides, *hydra)));
  job.set("config_name", impl_->options.config_name.empty() ? Node() : Node::string(impl_->options.config_name));
  Node* run_mode = hydra->find("mode");
  if ((run_mode == nullptr || run_mode->is_null()) && mode != RunMode::kShow && fill_mode) {
    hydra->set("mode", Node::string(mode == RunMode::kMultirun ? "MULTIRUN" : "RUN"));
  }
  return result;
}

std::optional<std::vector<std::string>> Composer::group_options(const std::string& group) const {
  if (!impl_->repository.group_exists(group)) return std::nullopt;
  return impl_->repository.group_options(group);
}

std::vector<std::string> Composer::groups() const { return impl_->repository.all_groups(); }

std::vector<std::string> Composer::configs_in(const std::string& group) const {
  return impl_->repository.group_options(group);
}

std::vector<std::string> Composer::subgroups(const std::string& group) const {
  return impl_->repository.subgroups(group);
}

const std::vector<SearchPathEntry>& Composer::search_path() const { return impl_->repository.search_path(); }

}  // namespace trainer::config
