// What `trainer <cmd> --shell-completion install|uninstall|query=SHELL` prints, as Hydra 1.3's
// bash, zsh and fish completion plugins do: a script the user evaluates to register the
// completion function `hydra_bash_completion` / `hydra_fish_completion` for the program, the
// script that removes it, and the candidates in the form the function reads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::launch {

enum class Shell { kBash, kZsh, kFish };

// "bash", "zsh", "fish"; nullopt for any other name.
std::optional<Shell> shell_named(std::string_view name);

// `program` is the name the shell runs (the executable's file name, e.g. "trainer"). zsh uses
// the bash script through zsh's bashcompinit, as in Hydra; the zsh script loads bashcompinit.
std::string completion_install_script(Shell shell, const std::string& program);
std::string completion_uninstall_script(Shell shell, const std::string& program);

// The query's answer: space-separated for bash and zsh, one a line for fish.
std::string completion_reply(Shell shell, const std::vector<std::string>& candidates);

}  // namespace trainer::launch
