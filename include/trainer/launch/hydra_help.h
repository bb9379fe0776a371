// `--hydra-help`: Hydra's hydra_help template (hydra.hydra_help.template) with its flags, its
// config groups and the hydra config filled in, as Hydra 1.3 prints it. trainer's flags are
// Hydra's; the lines that would not be true of trainer say what trainer does instead.
#pragma once

#include <map>
#include <string>

#include "trainer/config/composer.h"
#include "trainer/config/node.h"

namespace trainer::launch {

// $FLAGS_HELP: one `--flag,-f : help` line a flag, then the overrides. `program` is what the
// shell runs (the executable's file name), shown in the shell-completion commands.
std::string hydra_flags_help(const std::string& program);

// $HYDRA_CONFIG_GROUPS (`hydra_groups`) or $APP_CONFIG_GROUPS: every group holding configs, as
// `group: option, option` lines, sorted.
std::string config_groups_help(const config::Composer& composer, bool hydra_groups);

// Python's string.Template.substitute: `$name`, `${name}`, `$$`. Throws trainer::Error naming
// `where` for a name not in `values` or a stray `$`.
std::string substitute_template(const std::string& text, const std::map<std::string, std::string>& values,
                                const std::string& where);

// The whole text: `config` is what Hydra composes for it (no primary config, the overrides),
// `composer` lists the groups.
std::string hydra_help_text(const config::Composer& composer, const config::Node& config, const std::string& program);

}  // namespace trainer::launch
