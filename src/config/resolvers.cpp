// The resolver registry and the built-in resolvers (OmegaConf 2.3's oc.* and Hydra's now and
// hydra). oc.select, oc.decode, oc.deprecated, oc.dict.keys/values and hydra need the config
// being resolved, so the interpolation engine evaluates them itself; they are registered here too
// so their names are taken and listed.
#include <cstdlib>
#include <ctime>

#include "trainer/config/interpolation.h"
#include "trainer/config/python_str.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

#include "interpolation_grammar.h"

namespace trainer::config {
namespace {

void expect_arg_count(const char* name, const std::vector<Node>& args, size_t low, size_t high, const char* usage) {
  if (args.size() >= low && args.size() <= high) return;
  throw Error(name,
              std::string(name) + " takes " +
                  (low == high ? std::to_string(low) : std::to_string(low) + " to " + std::to_string(high)) +
                  " arguments, got " + std::to_string(args.size()),
              std::string("Write it as ") + usage + ".");
}

Node oc_env(const std::vector<Node>& args, const ResolveContext&) {
  const char* usage = "${oc.env:VAR} or ${oc.env:VAR,default}";
  expect_arg_count("oc.env", args, 1, 2, usage);
  if (!args[0].is_string()) {
    // What os.environ[key] says, which OmegaConf's oc.env calls.
    const std::string got = args[0].is_null() ? "NoneType" : type_name(args[0].type());
    throw Error("oc.env", "str expected, not " + got, std::string("Write it as ") + usage + ".");
  }
  const std::string& name = args[0].as_string();
  if (const char* value = std::getenv(name.c_str())) return Node::string(value);
  if (args.size() == 2) {
    // Like OmegaConf: the default becomes a string too, except null which stays null.
    if (args[1].is_null()) return Node();
    return Node::string(python_str(args[1]));
  }
  throw Error("oc.env", "Environment variable '" + name + "' not found",
              "Set it (export " + name + "=...) or give a default: ${oc.env:" + name + ",default}.");
}

Node oc_create(const std::vector<Node>& args, const ResolveContext&) {
  const char* usage = "${oc.create:{a: 1}} or ${oc.create:'a: 1'}";
  expect_arg_count("oc.create", args, 1, 1, usage);
  const Node& arg = args[0];
  if (arg.is_map() || arg.is_list()) return arg;
  if (arg.is_null()) return Node();  // OmegaConf.create(None) is None
  if (arg.is_string()) {
    // OmegaConf.create(str) reads YAML; nest it one level so lists work too.
    std::string text = "value:\n";
    size_t start = 0;
    const std::string& source = arg.as_string();
    while (start <= source.size()) {
      size_t end = source.find('\n', start);
      if (end == std::string::npos) end = source.size();
      text += "  ";
      text.append(source, start, end - start);
      text += '\n';
      start = end + 1;
    }
    YamlDocument document = load_yaml_string(text, "oc.create");
    if (const Node* value = document.root.find("value")) {
      if (value->is_map() || value->is_list()) return *value;
    }
  }
  if (!arg.is_string()) {
    throw Error("oc.create", std::string("Object of unsupported type: '") + type_name(arg.type()) + "'",
                std::string("oc.create needs a dict, a list or a YAML string of one. Write it as ") + usage + ".");
  }
  throw Error("oc.create", "oc.create needs a dict, a list or a YAML string of one, got " + python_str(arg),
              std::string("Write it as ") + usage + ".");
}

Node now(const std::vector<Node>& args, const ResolveContext& context) {
  const char* usage = "${now:%Y-%m-%d}";
  expect_arg_count("now", args, 1, 1, usage);
  if (!args[0].is_string()) {
    throw Error("now", "the format must be a str, got " + python_str(args[0]),
                std::string("Write it as ") + usage + ".");
  }
  const std::string& format = args[0].as_string();
  const auto since_epoch = context.now.time_since_epoch();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(context.now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count() % 1000000;
  // Python's strftime also knows %f (microseconds); C's does not, so expand it first.
  std::string pattern;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%' && i + 1 < format.size()) {
      if (format[i + 1] == 'f') {
        char digits[8];
        std::snprintf(digits, sizeof(digits), "%06lld", static_cast<long long>(micros));
        pattern += digits;
      } else {
        pattern += format[i];
        pattern += format[i + 1];
      }
      ++i;
    } else {
      pattern += format[i];
    }
  }
  std::tm local{};
  localtime_r(&seconds, &local);
  if (pattern.empty()) return Node::string("");
  std::string out(pattern.size() * 4 + 64, '\0');
  while (true) {
    const size_t written = std::strftime(out.data(), out.size(), pattern.c_str(), &local);
    if (written > 0 || out.size() > 65536) {
      out.resize(written);
      break;
    }
    out.resize(out.size() * 2);
  }
  return Node::string(out);
}

Node hydra(const std::vector<Node>& args, const ResolveContext& context) {
  const char* usage = "${hydra:runtime.output_dir}";
  expect_arg_count("hydra", args, 1, 1, usage);
  if (context.hydra == nullptr) {
    throw Error("hydra", "the hydra config is not available here",
                "Use ${hydra:...} only in configs composed by the trainer.");
  }
  if (!args[0].is_string()) {
    throw Error("hydra", "the key must be a str", std::string("Write it as ") + usage + ".");
  }
  const Node* node = select(*context.hydra, args[0].as_string());
  if (node == nullptr) {
    throw Error("hydra", "hydra." + args[0].as_string() + " not found", "See the hydra config with --cfg hydra.");
  }
  if (node->is_missing()) return Node();  // as OmegaConf.select, which Hydra uses
  return *node;
}

ResolverFn needs_config(const char* name) {
  return [name](const std::vector<Node>&, const ResolveContext&) -> Node {
    throw Error(name,
                std::string(name) +
                    " reads the config, so it only works inside an "
                    "interpolation being resolved",
                "Use it in a config value, e.g. ${" + std::string(name) + ":key}.");
  };
}

}  // namespace

ResolverRegistry& ResolverRegistry::global() {
  static ResolverRegistry registry = [] {
    ResolverRegistry builtins;
    builtins.add("oc.env", oc_env);
    builtins.add("oc.select", needs_config("oc.select"));
    builtins.add("oc.create", oc_create);
    builtins.add("oc.decode", needs_config("oc.decode"));
    builtins.add("oc.deprecated", needs_config("oc.deprecated"));
    builtins.add("oc.dict.keys", needs_config("oc.dict.keys"));
    builtins.add("oc.dict.values", needs_config("oc.dict.values"));
    builtins.add("now", now);
    builtins.add("hydra", hydra);
    return builtins;
  }();
  return registry;
}

void ResolverRegistry::add(const std::string& name, ResolverFn fn) {
  bool valid = !name.empty() && name.front() != '.' && name.back() != '.';
  for (size_t start = 0; valid && start < name.size();) {
    size_t end = name.find('.', start);
    if (end == std::string::npos) end = name.size();
    valid = grammar::is_identifier(std::string_view(name).substr(start, end - start));
    start = end + 1;
  }
  if (!valid) {
    throw Error("resolver '" + name + "'", "'" + name + "' is not a valid resolver name",
                "Use letters, digits, '_' and '-', with '.' between parts (e.g. my.times_two).");
  }
  if (find(name) != nullptr) {
    throw Error("resolver '" + name + "'", "a resolver named '" + name + "' is already registered",
                "Pick another name.");
  }
  if (!fn) {
    throw Error("resolver '" + name + "'", "the resolver function is empty", "Pass a callable.");
  }
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
  out.reserve(resolvers_.size());
  for (const auto& entry : resolvers_) out.push_back(entry.first);
  return out;
}

}  // namespace trainer::config
