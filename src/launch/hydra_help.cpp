#include "trainer/launch/hydra_help.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "trainer/config/interpolation.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace trainer::launch {
namespace {

// Hydra's completion plugins list their install commands in this order (bash, fish, zsh).
std::string completion_help(const std::string& program) {
  const std::vector<std::string> lines = {
      "Bash - Install:",
      "eval \"$(" + program + " -sc install=bash)\"",
      "Bash - Uninstall:",
      "eval \"$(" + program + " -sc uninstall=bash)\"",
      "",
      "Fish - Install:",
      program + " -sc install=fish | source",
      "Fish - Uninstall:",
      program + " -sc uninstall=fish | source",
      "",
      "Zsh - Install:",
      // One line of Hydra's text, split in two literals on purpose.
      "Zsh is compatible with the Bash shell completion, see the [documentation]"  // NOLINT(bugprone-suspicious-missing-comma)
      "(https://hydra.cc/docs/1.2/tutorials/basic/running_your_app/tab_completion#zsh-instructions)"
      " for details.",
      "eval \"$(" + program + " -sc install=bash)\"",
      "Zsh - Uninstall:",
      "eval \"$(" + program + " -sc uninstall=bash)\"",
      "",
  };
  std::string out;
  for (const std::string& line : lines) out += (line.empty() ? "" : "    " + line) + "\n";
  return out;
}

void collect_groups(const config::Composer& composer, const std::string& parent, std::vector<std::string>& out) {
  for (const std::string& name : composer.subgroups(parent)) {
    const std::string group = parent.empty() ? name : parent + "/" + name;
    if (!composer.configs_in(group).empty()) out.push_back(group);
    if (!composer.subgroups(group).empty()) collect_groups(composer, group, out);
  }
}

bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string hydra_flags_help(const std::string& program) {
  return "--help,-h : Application's help\n"
         "--hydra-help : Hydra's help\n"
         "--version : Show trainer's version and exit\n"
         "--cfg,-c : Show config instead of running [job|hydra|all]\n"
         "--resolve : Used in conjunction with --cfg, resolve config interpolations before "
         "printing.\n"
         "--package,-p : Config package to show\n"
         "--run,-r : Run a job\n"
         "--multirun,-m : Run multiple jobs with the configured launcher and sweeper\n"
         "--shell-completion,-sc : Install or Uninstall shell completion:\n" +
         completion_help(program) +
         "--config-path,-cp : Overrides the primary config directory (default: the shipped "
         "configs/).\n"
         "                    The config_path is absolute or relative to the current directory\n"
         "--config-name,-cn : Overrides the primary config's name (default: config)\n"
         "--config-dir,-cd : Adds an additional config dir to the config search path\n"
         "--info,-i : Print Hydra information "
         "[all|config|defaults|defaults-tree|plugins|searchpath]\n"
         "Overrides : Any key=value arguments to override config values (use dots "
         "for.nested=overrides)";
}

std::string config_groups_help(const config::Composer& composer, bool hydra_groups) {
  std::vector<std::string> groups;
  collect_groups(composer, "", groups);
  std::sort(groups.begin(), groups.end());
  std::string out;
  for (const std::string& group : groups) {
    const bool is_hydra = group == "hydra" || group.rfind("hydra/", 0) == 0;
    if (is_hydra != hydra_groups) continue;
    std::string options;
    for (const std::string& option : composer.configs_in(group)) options += (options.empty() ? "" : ", ") + option;
    out += group + ": " + options + "\n";
  }
  return out;
}

std::string substitute_template(const std::string& text, const std::map<std::string, std::string>& values,
                                const std::string& where) {
  std::string out;
  for (size_t at = 0; at < text.size(); ++at) {
    if (text[at] != '$') {
      out += text[at];
      continue;
    }
    if (at + 1 < text.size() && text[at + 1] == '$') {
      out += '$';
      ++at;
      continue;
    }
    const bool braced = at + 1 < text.size() && text[at + 1] == '{';
    size_t start = at + (braced ? 2 : 1);
    size_t end = start;
    if (end < text.size() && identifier_start(text[end])) {
      while (end < text.size() && identifier_char(text[end])) ++end;
    }
    if (end == start || (braced && (end >= text.size() || text[end] != '}'))) {
      throw Error(where, "Invalid placeholder in the template at offset " + std::to_string(at),
                  "write $NAME or ${NAME} for a placeholder and $$ for a dollar sign");
    }
    const std::string name = text.substr(start, end - start);
    auto value = values.find(name);
    if (value == values.end()) {
      std::string known;
      for (const auto& [key, unused] : values) known += (known.empty() ? "$" : ", $") + key;
      throw Error(where, "unknown placeholder $" + name + " in the template", "the template may use " + known + ".");
    }
    out += value->second;
    at = braced ? end : end - 1;
  }
  return out;
}

std::string hydra_help_text(const config::Composer& composer, const config::Node& config, const std::string& program) {
  const config::Node* hydra = config.find("hydra");
  config::ResolveContext ctx;
  ctx.hydra = hydra;
  const config::Node template_node = config::resolve_path(config, "hydra.hydra_help.template", ctx);
  if (!template_node.is_string()) {
    throw Error("hydra.hydra_help.template", "the template is not a string",
                "set hydra.hydra_help.template to text, or leave hydra/hydra_help at its default");
  }
  // $CONFIG is Hydra's sanitised hydra config: only `hydra`, without its help texts.
  config::Node shown = config::Node::map();
  if (hydra != nullptr) {
    config::Node& copy = shown.set("hydra", *hydra);
    copy.erase("help");
    copy.erase("hydra_help");
  }
  const std::map<std::string, std::string> values = {
      {"FLAGS_HELP", hydra_flags_help(program)},
      {"HYDRA_CONFIG_GROUPS", config_groups_help(composer, true)},
      {"APP_CONFIG_GROUPS", config_groups_help(composer, false)},
      {"CONFIG", config::to_yaml(shown)},
  };
  return substitute_template(template_node.as_string(), values, "hydra.hydra_help.template") + "\n";
}

}  // namespace trainer::launch
