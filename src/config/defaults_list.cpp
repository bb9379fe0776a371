#include "trainer/config/defaults_list.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/python_str.h"
#include "trainer/config/user_warning.h"
#include "trainer/util/error.h"

namespace trainer::config {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

std::string slashes_to_dots(std::string text) {
  std::replace(text.begin(), text.end(), '/', '.');
  return text;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += separator;
    text += items[i];
  }
  return text;
}

std::string describe(const Origin& origin, const std::string& fallback) {
  return origin.known() ? origin.describe() : fallback;
}

// One element of a defaults list as written (Hydra's ConfigDefault / GroupDefault / the virtual
// root above hydra/config and the primary config), plus what processing learns about it.
struct InputDefault {
  enum class Kind { kVirtualRoot, kConfig, kGroup };
  Kind kind = Kind::kConfig;
  std::string path;                  // kConfig: "db/mysql", "/abs/path", "_self_"
  std::string group;                 // kGroup: "db", "/abs/group"
  std::optional<std::string> value;  // kGroup: the option; nullopt for null (or options)
  std::vector<std::string> options;  // kGroup with a list of options
  bool is_options = false;
  std::optional<std::string> package;         // `@pkg` of the entry (relative)
  std::optional<std::string> package_header;  // `# @package` of the file (absolute)
  std::optional<std::string> parent_base_dir;
  std::optional<std::string> parent_package;
  bool primary = false;
  bool optional = false;
  bool is_override = false;
  bool deleted = false;
  bool external_append = false;
  Origin origin;        // the defaults-list line (or override) that wrote it
  Origin value_origin;  // what chose the current option (an override may replace it)

  bool is_virtual() const { return kind == Kind::kVirtualRoot; }
  bool is_self() const {
    if (kind == Kind::kConfig) return path == "_self_";
    if (kind == Kind::kGroup) return !is_options && value && *value == "_self_";
    return false;
  }

  void update_parent(const std::string& base_dir, const std::string& parent_pkg) {
    parent_base_dir = base_dir;
    parent_package = parent_pkg;
    if (package && package->find("_group_") != std::string::npos) {
      package = "_global_." + replace_all(*package, "_group_", default_package());
    }
  }

  static std::string strip_slash(const std::string& text, bool& absolute) {
    absolute = !text.empty() && text[0] == '/';
    return absolute ? text.substr(1) : text;
  }

  std::string group_path() const {
    const std::string base = parent_base_dir.value_or("");
    bool absolute = false;
    if (kind == Kind::kGroup) {
      std::string g = strip_slash(group, absolute);
      return base.empty() || absolute ? g : base + "/" + g;
    }
    std::string p = strip_slash(path, absolute);
    size_t slash = p.rfind('/');
    std::string g = slash == std::string::npos ? "" : p.substr(0, slash);
    if (absolute || base.empty()) return g;
    return g.empty() ? base : base + "/" + g;
  }

  std::optional<std::string> name() const {
    if (kind == Kind::kGroup) return is_options ? std::nullopt : value;
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }

  std::string config_path() const {
    if (kind == Kind::kVirtualRoot) return "<root>";
    if (kind == Kind::kGroup) return group_path() + "/" + name().value_or("None");
    bool absolute = false;
    std::string p = strip_slash(path, absolute);
    const std::string base = parent_base_dir.value_or("");
    return absolute || base.empty() ? p : base + "/" + p;
  }

  std::string default_package() const { return slashes_to_dots(group_path()); }

  std::string relative_group_path() const {
    bool absolute = false;
    if (kind == Kind::kGroup) return strip_slash(group, absolute);
    std::string p = strip_slash(path, absolute);
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? "" : p.substr(0, slash);
  }

  std::optional<std::string> get_package(bool use_header = true) const {
    if (!package && use_header) return package_header;
    return package;
  }

  void set_package_header(const std::optional<std::string>& header) {
    if (!header) return;
    // A header is always absolute.
    if (*header == "_global_" || starts_with(*header, "_global_.")) {
      package_header = header;
    } else {
      package_header = header->empty() ? "_global_" : "_global_." + *header;
    }
  }

  std::string final_package(bool use_header = true) const {
    std::string pkg = get_package(use_header).value_or(slashes_to_dots(relative_group_path()));
    const std::string parent = parent_package.value_or("");
    std::string result;
    if (parent.empty()) {
      result = pkg;
    } else {
      result = pkg.empty() ? parent : parent + "." + pkg;
    }
    size_t global = result.rfind("_global_");
    if (global == std::string::npos) return result;
    size_t start = global + 9;  // past "_global_."
    return start >= result.size() ? "" : result.substr(start);
  }

  std::string override_key() const {
    std::string key = group_path();
    std::string final_pkg = final_package(false);
    if (default_package() != final_pkg) key += "@" + (final_pkg.empty() ? "_global_" : final_pkg);
    return key;
  }

  bool is_interpolation() const {
    if (kind == Kind::kConfig) return path.find("${") != std::string::npos;
    if (kind == Kind::kGroup) return !is_options && value && value->find("${") != std::string::npos;
    return false;
  }

  bool is_missing() const {
    if (kind == Kind::kVirtualRoot) return false;
    std::optional<std::string> n = name();
    return n && *n == "\?\?\?";
  }
};

struct TreeNode {
  InputDefault node;
  TreeNode* parent = nullptr;
  bool has_children = false;  // Hydra's `children is not None`
  std::vector<std::unique_ptr<TreeNode>> children;
};

// Splits "group@pkg" (and Hydra 1.0's "group@pkg:pkg2" rename, whose second half is ignored).
void split_package(const std::string& text, std::string& name, std::optional<std::string>& package) {
  size_t at = text.find('@');
  if (at == std::string::npos) {
    name = text;
    package.reset();
    return;
  }
  name = text.substr(0, at);
  std::string pkg = text.substr(at + 1);
  size_t colon = pkg.find(':');
  if (colon != std::string::npos) pkg = pkg.substr(0, colon);
  package = pkg == "_here_" ? std::string() : pkg;
}

std::vector<InputDefault> parse_defaults(const LoadedConfig& loaded) {
  std::vector<InputDefault> result;
  if (loaded.defaults == nullptr) return result;
  for (const Node& item : loaded.defaults->items()) {
    InputDefault d;
    d.origin =
        item.origin().known() ? item.origin() : Origin::file(std::make_shared<const std::string>(loaded.source), 0);
    const std::string where = describe(d.origin, loaded.source);
    if (item.is_map()) {
      if (item.entries().size() != 1) {
        throw Error(where,
                    item.entries().empty() ? "In '" + loaded.config_path + "': Missing group name in a defaults item"
                                           : "In '" + loaded.config_path + "': Too many keys in a defaults item",
                    "write each item as `- group: option` on its own line");
      }
      const Node::Entry& entry = item.entries()[0];
      if (entry.value.origin().known()) d.origin = entry.value.origin();
      std::vector<std::string> words;
      size_t start = 0;
      const std::string& key = entry.key;
      while (start <= key.size()) {
        size_t space = key.find(' ', start);
        if (space == std::string::npos) space = key.size();
        words.push_back(key.substr(start, space - start));
        start = space + 1;
      }
      std::string group_text = words.back();
      for (size_t i = 0; i + 1 < words.size(); ++i) {
        if (words[i] == "optional") {
          d.optional = true;
        } else if (words[i] == "override") {
          d.is_override = true;
        } else {
          break;
        }
      }
      d.kind = InputDefault::Kind::kGroup;
      split_package(group_text, d.group, d.package);
      const Node& value = entry.value;
      switch (value.type()) {
        case NodeType::kNull:
          break;
        case NodeType::kMissing:
          d.value = "\?\?\?";
          break;
        case NodeType::kString:
          d.value = value.as_string();
          break;
        case NodeType::kList:
          d.is_options = true;
          for (const Node& option : value.items()) {
            if (!option.is_string()) {
              throw Error(describe(option.origin(), where),
                          std::string("Unsupported item value in defaults : ") + type_name(option.type()) +
                              ", nested list items must be strings",
                          "list option names, e.g. `- " + group_text + ": [a, b]`");
            }
            d.options.push_back(option.as_string());
          }
          break;
        default:
          throw Error(where,
                      std::string("Unsupported item value in defaults : ") + type_name(value.type()) +
                          ". Supported: string or list",
                      "name an option of the group, e.g. `- " + group_text + ": <option>`");
      }
      if (d.group.empty()) {
        throw Error(where, "In '" + loaded.config_path + "': Missing group name in a defaults item",
                    "write the item as `- group: option`");
      }
    } else if (item.is_string()) {
      d.kind = InputDefault::Kind::kConfig;
      split_package(item.as_string(), d.path, d.package);
      if (d.path == "_self_" && d.package) {
        throw Error(where, "_self_@PACKAGE is not supported", "write `- _self_` without a package");
      }
    } else {
      throw Error(where, std::string("Unsupported type in defaults : ") + type_name(item.type()),
                  "write `- group: option`, `- config_name` or `- _self_`");
    }
    d.value_origin = d.origin;
    result.push_back(std::move(d));
  }
  return result;
}

struct OverrideMetadata {
  bool external = false;
  std::string containing_config_path;
  Origin origin;
  bool used = false;
  std::string text;  // the override as typed (external) or "group: option" (in a defaults list)
};

struct OverrideChoice {
  std::optional<std::string> value;
  std::vector<std::string> options;
  bool is_options = false;
};

struct Deletion {
  std::optional<std::string> name;
  Origin origin;
  bool used = false;
};

class DefaultsListBuilder {
 public:
  DefaultsListBuilder(const ConfigRepository& repo, bool skip_missing) : repo_(repo), skip_missing_(skip_missing) {}

  void add_command_line(const Override& override) {
    const std::string key = override.key_with_package();
    const Origin origin = Origin::override_text(override.text);
    const std::string where = origin.describe();
    if (override.kind == OverrideKind::kForceAdd) {
      throw Error(where, "force-add of config groups is not supported: '" + override.text + "'",
                  "use +" + key + "=<option> to add the group, or " + key + "=<option> to change it");
    }
    if (override.kind == OverrideKind::kDelete) {
      Deletion deletion;
      deletion.origin = origin;
      if (override.has_value && !override.value.is_null()) {
        if (!override.value.is_string()) {
          throw Error(where, "Config group override deletion value must be a string",
                      "write ~" + key + " or ~" + key + "=<option>");
        }
        deletion.name = override.value.as_string();
      }
      deletions_[key] = deletion;
      return;
    }
    OverrideChoice choice;
    const Node& value = override.value;
    if (value.is_string()) {
      choice.value = value.as_string();
    } else if (value.is_list()) {
      choice.is_options = true;
      for (const Node& item : value.items()) {
        if (!item.is_string()) {
          throw Error(where, "Config group options must be strings",
                      "name options of '" + override.key + "', e.g. " + key + "=[a,b]");
        }
        choice.options.push_back(item.as_string());
      }
    } else if (value.is_missing()) {
      choice.value = "\?\?\?";
    } else {
      // Hydra names Python's types here: NoneType for null.
      throw Error(where,
                  std::string("Config group override must be a string or a list. Got ") +
                      (value.is_null() ? "NoneType" : type_name(value.type())),
                  "name an option of group '" + override.key + "': " + join(repo_.group_options(override.key), ", "));
    }
    if (override.kind == OverrideKind::kAdd) {
      InputDefault d;
      d.kind = InputDefault::Kind::kGroup;
      d.group = override.key;
      d.package = override.package;
      if (d.package && *d.package == "_here_") d.package = std::string();
      d.value = choice.value;
      d.options = choice.options;
      d.is_options = choice.is_options;
      d.external_append = true;
      d.origin = origin;
      d.value_origin = origin;
      appends_.push_back(std::move(d));
      return;
    }
    set_override_choice(key, std::move(choice));
    OverrideMetadata meta;
    meta.external = true;
    meta.origin = origin;
    meta.text = override.text;
    override_metadata_[key] = std::move(meta);
  }

  DefaultsListResult build(const std::string& config_name) {
    auto root = std::make_unique<TreeNode>();
    root->node.kind = InputDefault::Kind::kVirtualRoot;
    root->has_children = true;
    auto hydra = std::make_unique<TreeNode>();
    hydra->node.path = "hydra/config";
    hydra->parent = root.get();
    auto primary = std::make_unique<TreeNode>();
    primary->node.path = config_name.empty() ? std::string(kEmptyPrimaryConfig) : config_name;
    primary->node.primary = true;
    primary->parent = root.get();
    root->children.push_back(std::move(hydra));
    root->children.push_back(std::move(primary));

    create_tree(*root, true, false);

    DefaultsListResult result;
    collect(*root, result.defaults);
    ensure_no_duplicates(result.defaults);
    ensure_overrides_used();
    ensure_deletions_used();
    print_tree(*root, 0, result.tree);
    result.choices = known_choices_;
    return result;
  }

 private:
  void set_override_choice(const std::string& key, OverrideChoice choice) {
    override_choices_[key] = std::move(choice);
  }

  void create_tree(TreeNode& root, bool is_root_config, bool interpolated_subtree) {
    InputDefault& parent = root.node;
    if (parent.is_virtual()) {
      // The primary config is processed before hydra/config: later defaults win.
      for (auto it = root.children.rbegin(); it != root.children.rend(); ++it) {
        TreeNode& child = **it;
        child.node.update_parent("", "");
        create_tree(child, child.node.primary, false);
      }
      return;
    }
    if (is_root_config) {
      parent.update_parent("", "");
      if (!repo_.config_exists(parent.config_path())) config_not_found(root);
    }
    if (!parent.is_missing() && parent.name()) {
      if (auto loaded = repo_.load(parent.config_path())) {
        parent.set_package_header(loaded->package_header);
      }
    }
    if (is_deleted(parent)) {
      parent.deleted = true;
      deletions_[parent.override_key()].used = true;
      return;
    }
    set_known_choice(parent);
    if (!parent.name()) return;
    if (parent.is_missing()) {
      if (skip_missing_) return;
      missing_choice(parent);
    }
    const std::string path = parent.config_path();
    std::shared_ptr<const LoadedConfig> loaded = repo_.load(path);
    if (!loaded) {
      if (parent.optional) {
        parent.deleted = true;
        return;
      }
      config_not_found(root);
    }
    std::vector<InputDefault> defaults = parse_defaults(*loaded);
    bool self_added = false;
    if (!defaults.empty() || (is_root_config && !appends_.empty())) {
      self_added = validate_self(parent, defaults, has_config_content(loaded->body), *loaded);
    }
    if (is_root_config) defaults.insert(defaults.end(), appends_.begin(), appends_.end());
    update_overrides(defaults, parent, interpolated_subtree);

    const std::string parent_group = parent.group_path();
    const std::string parent_package = parent.final_package();
    std::vector<std::unique_ptr<TreeNode>> children;  // built last to first
    auto add_child = [&](InputDefault d, bool process) {
      auto child = std::make_unique<TreeNode>();
      child->node = std::move(d);
      child->parent = &root;
      TreeNode& ref = *child;
      children.push_back(std::move(child));
      if (process) create_tree(ref, false, interpolated_subtree);
    };
    for (auto it = defaults.rbegin(); it != defaults.rend(); ++it) {
      InputDefault& d = *it;
      if (d.is_self()) {
        d.update_parent(parent.parent_base_dir.value_or(""), parent.get_package().value_or(""));
        add_child(d, false);
        continue;
      }
      if (d.is_override) continue;
      d.update_parent(parent_group, parent_package);
      if (d.kind == InputDefault::Kind::kGroup) override_default_option(d);
      if (d.kind == InputDefault::Kind::kGroup && d.is_options) {
        for (auto option = d.options.rbegin(); option != d.options.rend(); ++option) {
          if (option->find("${") != std::string::npos) {
            throw Error(describe(d.value_origin, path),
                        "In '" + path +
                            "': Defaults List interpolation is not supported in options list "
                            "items",
                        "list plain option names");
          }
          InputDefault node;
          node.kind = InputDefault::Kind::kConfig;
          node.path = d.group + "/" + *option;
          node.package = d.package;
          node.optional = d.optional;
          node.origin = d.origin;
          node.value_origin = d.value_origin;
          node.update_parent(parent_group, parent_package);
          add_child(std::move(node), true);
        }
      } else if (d.is_interpolation()) {
        add_child(d, false);  // resolved once every other choice of this list is known
      } else {
        add_child(d, true);
      }
    }

    bool any_interpolation = false;
    for (const auto& child : children) {
      if (child->node.is_interpolation()) any_interpolation = true;
    }
    if (any_interpolation) {
      for (auto& child : children) {
        if (!child->node.is_interpolation()) continue;
        resolve_interpolation(child->node, defaults, self_added, path);
        child->node.update_parent(parent_group, parent_package);
        create_tree(*child, false, true);
      }
    }
    if (!children.empty()) {
      root.has_children = true;
      root.children.assign(std::make_move_iterator(children.rbegin()), std::make_move_iterator(children.rend()));
    }
  }

  static bool has_config_content(const Node& body) {
    for (const Node::Entry& entry : body.entries()) {
      if (entry.key != "defaults" && !entry.value.is_missing()) return true;
    }
    return false;
  }

  // Checks `_self_` appears at most once and adds it at the end when missing (Hydra 1.1+).
  static bool validate_self(const InputDefault& parent, std::vector<InputDefault>& defaults, bool has_content,
                            const LoadedConfig& loaded) {
    bool has_self = false;
    bool has_non_override = false;
    for (const InputDefault& d : defaults) {
      if (!d.is_override) has_non_override = true;
      if (d.is_self()) {
        if (has_self) {
          throw Error(describe(d.origin, loaded.source), "Duplicate _self_ defined in " + parent.config_path(),
                      "keep one `- _self_` in its defaults list");
        }
        has_self = true;
      }
    }
    if ((!has_self && has_non_override) || defaults.empty()) {
      // Hydra 1.3 still warns where a primary config with its own keys leaves it out: its keys
      // then override the defaults', the opposite of Hydra 1.0.
      if (parent.primary && has_content && has_non_override) {
        warn_once("In '" + parent.config_path() + "': Defaults list is missing `_self_`. See " +
                  "https://hydra.cc/docs/1.2/upgrades/1.0_to_1.1/default_composition_order for more information");
      }
      InputDefault self;
      self.kind = InputDefault::Kind::kConfig;
      self.path = "_self_";
      defaults.push_back(std::move(self));
    }
    return !has_self;
  }

  void update_overrides(std::vector<InputDefault>& defaults, const InputDefault& parent, bool interpolated_subtree) {
    const InputDefault* last_override = nullptr;
    const std::string parent_group = parent.group_path();
    const std::string parent_package = parent.final_package();
    for (InputDefault& d : defaults) {
      if (d.is_self()) continue;
      d.update_parent(parent_group, parent_package);
      if (last_override != nullptr && !(d.is_override || d.external_append)) {
        throw Error(describe(last_override->origin, parent.config_path()),
                    "In " + parent.config_path() + ": Override '" + last_override->override_key() + " : " +
                        last_override->name().value_or("null") + "' is defined before '" + d.override_key() + ": " +
                        d.name().value_or("null") + "'. Overrides must be at the end of the defaults list",
                    "move the `override` entries after every other entry of the list");
      }
      if (d.kind == InputDefault::Kind::kGroup && d.is_override) {
        last_override = &d;
        if (interpolated_subtree) {
          throw Error(describe(d.origin, parent.config_path()),
                      parent.config_path() +
                          ": Default List Overrides are not allowed in the subtree of an "
                          "interpolated config group (override " +
                          d.override_key() + "=" + d.name().value_or("null") + ")",
                      "move the override to the primary config or the command line");
        }
        const std::string key = d.override_key();
        if (override_choices_.find(key) == override_choices_.end()) {
          OverrideChoice choice;
          choice.value = d.value;
          choice.options = d.options;
          choice.is_options = d.is_options;
          override_choices_[key] = std::move(choice);
          OverrideMetadata meta;
          meta.containing_config_path = parent.config_path();
          meta.origin = d.origin;
          meta.text = "override " + d.group + ": " + d.value.value_or("null");
          override_metadata_[key] = std::move(meta);
        }
      }
    }
  }

  void override_default_option(InputDefault& d) {
    const std::string key = d.override_key();
    auto it = override_choices_.find(key);
    if (it == override_choices_.end()) return;
    d.value = it->second.value;
    d.options = it->second.options;
    d.is_options = it->second.is_options;
    OverrideMetadata& meta = override_metadata_[key];
    d.value_origin = meta.origin;
    meta.used = true;
  }

  bool is_deleted(const InputDefault& d) const {
    if (d.kind != InputDefault::Kind::kGroup) return false;
    auto it = deletions_.find(d.override_key());
    if (it == deletions_.end()) return false;
    return !it->second.name || it->second.name == d.name();
  }

  void set_known_choice(const InputDefault& d) {
    if (d.kind != InputDefault::Kind::kGroup) return;
    const std::string key = d.override_key();
    auto it = std::find_if(known_choices_.begin(), known_choices_.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it == known_choices_.end()) {
      known_choices_.emplace_back(key, d.name());
      known_choice_origins_[key] = d.value_origin;
    } else if (it->second != d.name()) {
      const std::string previous = it->second.value_or("null");
      const Origin& first = known_choice_origins_[key];
      if (first.is_override) {
        throw Error(describe(first, key),
                    "Multiple values for " + key + ". To override a value use 'override " + key + ": " + previous + "'",
                    "on the command line use " + key + "=" + previous + " (without +)");
      }
      // Hydra's message names the value to write with `override`: the entry that chose it is the
      // one to change (an experiment's `/model: cnn` beside the primary config's `model: mlp`).
      const std::string other = describe(d.value_origin, "");
      throw Error(describe(first, key),
                  "Multiple values for " + key + ". To override a value use 'override " + key + ": " + previous +
                      "'. " + key + " is chosen twice in the defaults tree: " + previous + " here and " +
                      d.name().value_or("null") + (other.empty() ? std::string(" elsewhere") : " at " + other),
                  "Write this entry as `- override /" + key + ": " + previous +
                      "` (an entry that changes a choice made elsewhere needs override), or remove one of the two.");
    }
    known_choices_per_group_[d.group_path()].insert(key);
  }

  [[noreturn]] void missing_choice(const InputDefault& d) const {
    const std::string key = d.override_key();
    std::string options;
    for (const std::string& option : repo_.group_options(d.group_path())) {
      options += "\n\t" + option;
    }
    throw Error(describe(d.value_origin, d.config_path()),
                "You must specify '" + key + "', e.g, " + key + "=<OPTION>\nAvailable options:" + options,
                "add " + key + "=<OPTION> to the command line");
  }

  [[noreturn]] void config_not_found(const TreeNode& tree) const {
    const InputDefault& element = tree.node;
    std::string problem;
    std::string fix;
    if (element.primary) {
      problem =
          "Cannot find primary config '" + element.config_path() + "'. Check that it's in your config search path.";
      fix = "pass --config-path/--config-dir with the directory holding " + element.config_path() +
            ".yaml, or --config-name with an existing config";
      throw Error("--config-name", problem + "\nConfig search path:\n" + repo_.describe_search_path(), fix);
    }
    const std::string parent = tree.parent != nullptr ? tree.parent->node.config_path() : std::string();
    if (element.kind == InputDefault::Kind::kGroup) {
      const std::string group = element.group_path();
      std::vector<std::string> options = repo_.group_options(group);
      problem = "Could not find '" + element.config_path() + "'";
      if (!options.empty()) {
        problem += "\n\nAvailable options in '" + group + "':";
        for (const std::string& option : options) problem += "\n\t" + option;
      }
      fix = options.empty() ? "create " + element.config_path() + ".yaml in a config directory"
                            : "choose one of the options listed above";
      const std::string best = closest_match(element.name().value_or(""), options);
      if (!best.empty()) fix = "did you mean " + element.override_key() + "=" + best + "?";
    } else {
      problem = "Could not load '" + element.config_path() + "'.";
      fix = "create " + element.config_path() + ".yaml in a config directory";
    }
    if (!parent.empty()) problem = "In '" + parent + "': " + problem;
    problem += "\nConfig search path:\n" + repo_.describe_search_path();
    throw Error(describe(element.value_origin, element.config_path()), problem, fix);
  }

  // `${db}_${server}`: each `${key}` is replaced by the option chosen so far for group `key`.
  void resolve_interpolation(InputDefault& d, const std::vector<InputDefault>& defaults, bool self_added,
                             const std::string& containing_path) const {
    std::string text = d.kind == InputDefault::Kind::kGroup ? *d.value : d.config_path();
    if (d.kind == InputDefault::Kind::kGroup && starts_with(text, "${defaults.")) {
      throw Error(
          describe(d.origin, containing_path),
          "Defaults list element '" + d.override_key() + "=" + text + "' is using a deprecated interpolation form",
          "refer to the group by name, e.g. ${db}, see "
          "http://hydra.cc/docs/1.1/upgrades/1.0_to_1.1/defaults_list_interpolation");
    }
    (void)defaults;
    (void)self_added;
    std::string result;
    // Anything beyond plain `${group}` references (resolvers such as `${oc.env:X,default}`)
    // goes through OmegaConf's full semantics, resolved against the choices made so far.
    if (text.find(':') != std::string::npos) {
      Node choices = Node::map();
      for (const auto& entry : known_choices_) {
        choices.set(entry.first, entry.second ? Node::string(*entry.second) : Node());
      }
      choices.set("_dummy_", Node::string(text));
      try {
        Node value = resolve_path(choices, "_dummy_", ResolveContext{});
        result = value.is_string() ? value.as_string() : python_str(value);
      } catch (const Error& error) {
        throw Error(describe(d.origin, containing_path),
                    "Error resolving interpolation '" + text + "': " + error.what(),
                    "refer only to config groups chosen in the same defaults list, e.g. "
                    "${group_name}, or to resolvers such as ${oc.env:VAR,default}");
      }
      text.clear();
    }
    size_t pos = 0;
    while (pos < text.size()) {
      size_t open = text.find("${", pos);
      if (open == std::string::npos) {
        result.append(text, pos, std::string::npos);
        break;
      }
      result.append(text, pos, open - pos);
      size_t close = text.find('}', open);
      std::string key = close == std::string::npos ? std::string() : text.substr(open + 2, close - open - 2);
      auto it = std::find_if(known_choices_.begin(), known_choices_.end(),
                             [&](const auto& entry) { return entry.first == key; });
      if (close == std::string::npos || key.empty() || it == known_choices_.end() || !it->second) {
        std::vector<std::string> keys;
        for (const auto& entry : known_choices_) keys.push_back(entry.first);
        std::string problem = "Error resolving interpolation '" + text + "'";
        if (!keys.empty()) problem += ", possible interpolation keys: " + join(keys, ", ");
        throw Error(describe(d.origin, containing_path), problem,
                    "refer only to config groups chosen in the same defaults list, e.g. "
                    "${group_name}");
      }
      result += *it->second;
      pos = close + 1;
    }
    if (d.kind == InputDefault::Kind::kGroup) {
      d.value = result;
    } else {
      d.path = result;
      d.parent_base_dir.reset();
      d.parent_package.reset();
    }
  }

  void collect(const TreeNode& tree, std::vector<DefaultsEntry>& out) const {
    if (!tree.has_children || tree.children.empty()) {
      emit(tree.parent, tree.node, out);
      return;
    }
    for (const auto& child : tree.children) {
      if (!child->has_children || child->children.empty()) {
        emit(&tree, child->node, out);
      } else {
        collect(*child, out);
      }
    }
  }

  void emit(const TreeNode* tree, const InputDefault& node, std::vector<DefaultsEntry>& out) const {
    if (node.deleted || node.is_missing() || node.is_virtual() || !node.name()) return;
    DefaultsEntry entry;
    std::string key;
    if (node.is_self()) {
      entry.config_path = tree->node.config_path();
      entry.is_self = true;
      entry.parent = tree->parent != nullptr ? tree->parent->node.config_path() : "";
      entry.package = tree->node.final_package();
      entry.primary = tree->node.primary;
    } else {
      entry.config_path = node.config_path();
      entry.parent = tree != nullptr ? tree->node.config_path() : "";
      entry.package = node.final_package();
      entry.primary = node.primary;
      if (node.kind == InputDefault::Kind::kGroup) key = node.override_key();
    }
    if (entry.config_path == kEmptyPrimaryConfig) return;
    out.push_back(std::move(entry));
    override_keys_.push_back(std::move(key));
  }

  void ensure_no_duplicates(const std::vector<DefaultsEntry>& defaults) const {
    std::set<std::string> seen;
    for (size_t i = 0; i < defaults.size(); ++i) {
      const std::string& key = override_keys_[i];
      if (defaults[i].is_self || key.empty()) continue;
      if (!seen.insert(key).second) {
        throw Error(defaults[i].parent.empty() ? key : "'" + defaults[i].parent + "'",
                    key + " appears more than once in the final defaults list",
                    "choose " + key + " once, or give the second one its own package (" + key + "@other_package)");
      }
    }
  }

  void ensure_overrides_used() const {
    for (const auto& [key, meta] : override_metadata_) {
      if (meta.used) continue;
      const std::string group = key.substr(0, key.find('@'));
      auto it = known_choices_per_group_.find(group);
      std::vector<std::string> choices;
      if (it != known_choices_per_group_.end()) choices.assign(it->second.begin(), it->second.end());
      std::string problem = "Could not override '" + key + "'.";
      if (choices.size() > 1) {
        problem += "\nDid you mean to override one of " + join(choices, ", ") + "?";
      } else if (choices.size() == 1) {
        problem += "\nDid you mean to override " + choices[0] + "?";
      } else {
        problem += " No match in the defaults list.";
      }
      if (!meta.containing_config_path.empty()) {
        problem = "In '" + meta.containing_config_path + "': " + problem;
      }
      std::string fix;
      if (meta.external) {
        const OverrideChoice& choice = override_choices_.at(key);
        std::string value = choice.is_options ? "[" + join(choice.options, ",") + "]" : choice.value.value_or("null");
        fix = "To append to your default list use +" + key + "=" + value;
      } else {
        fix =
            "add the group to the defaults list without `override`, or override a group "
            "that is there";
      }
      throw Error(describe(meta.origin, key), problem, fix);
    }
  }

  void ensure_deletions_used() const {
    for (const auto& [key, deletion] : deletions_) {
      if (deletion.used) continue;
      const std::string desc = deletion.name ? key + "=" + *deletion.name : key;
      throw Error(describe(deletion.origin, key), "Could not delete '" + desc + "'. No match in the defaults list",
                  "delete a group that the defaults list chooses (see --info defaults)");
    }
  }

  static std::string tree_label(const InputDefault& node) {
    if (node.kind == InputDefault::Kind::kGroup) {
      return node.override_key() + ": " + node.name().value_or("null");
    }
    return node.config_path();
  }

  static void print_tree(const TreeNode& tree, int indent, std::string& out) {
    out.append(static_cast<size_t>(indent) * 2, ' ');
    out += tree_label(tree.node);
    if (tree.has_children && !tree.children.empty()) {
      out += ":\n";
      for (const auto& child : tree.children) print_tree(*child, indent + 1, out);
    } else {
      out += '\n';
    }
  }

  const ConfigRepository& repo_;
  bool skip_missing_;
  std::map<std::string, OverrideChoice> override_choices_;
  std::map<std::string, OverrideMetadata> override_metadata_;
  std::vector<InputDefault> appends_;
  std::map<std::string, Deletion> deletions_;
  std::vector<std::pair<std::string, std::optional<std::string>>> known_choices_;
  std::map<std::string, Origin> known_choice_origins_;
  std::map<std::string, std::set<std::string>> known_choices_per_group_;
  mutable std::vector<std::string> override_keys_;  // parallel to the collected defaults
};

}  // namespace

DefaultsListResult create_defaults_list(const ConfigRepository& repo, const std::string& config_name,
                                        const std::vector<const Override*>& group_overrides, bool skip_missing) {
  DefaultsListResult result;
  DefaultsListBuilder builder(repo, skip_missing);
  for (const Override* override : group_overrides) builder.add_command_line(*override);
  return builder.build(config_name);
}

}  // namespace trainer::config
