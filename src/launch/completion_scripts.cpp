#include "trainer/launch/completion_scripts.h"

namespace trainer::launch {
namespace {

// Registers hydra_bash_completion for the program, remembering the rule it replaces in
// _HYDRA_OLD_COMP (Hydra's names, so a user's Hydra habits and HYDRA_COMP_DEBUG=1 carry over).
// The function runs `<program> -sc query=bash` with the line and offers what it prints; with
// nothing to offer, bash completes file names (-o default). `=` leaves COMP_WORDBREAKS so that
// `model=c` is one word, as Hydra does.
constexpr std::string_view kBashInstall =
    R"SH(export _HYDRA_OLD_COMP="$(complete -p @PROGRAM@ 2> /dev/null)"
hydra_bash_completion()
{
    local line="${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}"
    local trimmed="${line#"${line%%[![:space:]]*}"}"
    local helper="${trimmed%%[[:space:]]*}"
    local word="${line##*[[:space:]]}"
    if [ -z "$helper" ] || ! command -v "$helper" > /dev/null 2>&1; then
        return
    fi
    local choices
    choices="$(COMP_LINE="$COMP_LINE" COMP_POINT="$COMP_POINT" "$helper" -sc query=bash)"
    if [ "$HYDRA_COMP_DEBUG" = "1" ]; then
        printf "\nCOMP_LINE='%s'\nCOMP_POINT='%s'\nWord='%s'\nOutput suggestions:\n" "$COMP_LINE" "$COMP_POINT" "$word"
        printf "\t%s\n" $choices
    fi
    COMPREPLY=($(compgen -o nospace -o default -W "$choices" -- "$word"))
    # Readline replaces only what follows the last break character (':' in "a=12:3"); so do we.
    if [[ "$word" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
        local before_colon="${word%"${word##*:}"}" candidate trimmed_reply=()
        for candidate in "${COMPREPLY[@]}"; do
            trimmed_reply+=("${candidate#"$before_colon"}")
        done
        COMPREPLY=("${trimmed_reply[@]}")
    fi
}
COMP_WORDBREAKS="${COMP_WORDBREAKS//=}"
complete -o nospace -o default -F hydra_bash_completion @PROGRAM@
)SH";

// Removes the function and the rule, and puts back the rule it replaced.
constexpr std::string_view kBashUninstall = R"SH(unset -f hydra_bash_completion
complete -r @PROGRAM@ 2> /dev/null
if [ -n "$_HYDRA_OLD_COMP" ]; then
    eval "$_HYDRA_OLD_COMP"
fi
unset _HYDRA_OLD_COMP
)SH";

constexpr std::string_view kZshPreamble = R"SH(autoload -Uz bashcompinit && bashcompinit
)SH";

// fish hands the function the line up to the cursor; -x: the candidates are all there is.
constexpr std::string_view kFishInstall = R"SH(function hydra_fish_completion
    set -lx COMP_LINE (commandline -cp)
    set -l words (commandline -cpo)
    command -q $words[1]; or return
    command $words[1] -sc query=fish
end
complete -c @PROGRAM@ -x -a '(hydra_fish_completion)'
)SH";

constexpr std::string_view kFishUninstall = R"SH(complete -e -c @PROGRAM@
functions -e hydra_fish_completion
)SH";

std::string with_program(std::string_view script, const std::string& program) {
  std::string out(script);
  const std::string mark = "@PROGRAM@";
  for (size_t at = out.find(mark); at != std::string::npos; at = out.find(mark, at + program.size())) {
    out.replace(at, mark.size(), program);
  }
  return out;
}

}  // namespace

std::optional<Shell> shell_named(std::string_view name) {
  if (name == "bash") return Shell::kBash;
  if (name == "zsh") return Shell::kZsh;
  if (name == "fish") return Shell::kFish;
  return std::nullopt;
}

std::string completion_install_script(Shell shell, const std::string& program) {
  switch (shell) {
    case Shell::kBash:
      return with_program(kBashInstall, program);
    case Shell::kZsh:
      return std::string(kZshPreamble) + with_program(kBashInstall, program);
    case Shell::kFish:
      return with_program(kFishInstall, program);
  }
  return {};
}

std::string completion_uninstall_script(Shell shell, const std::string& program) {
  return with_program(shell == Shell::kFish ? kFishUninstall : kBashUninstall, program);
}

std::string completion_reply(Shell shell, const std::vector<std::string>& candidates) {
  std::string out;
  for (const std::string& candidate : candidates) {
    if (!out.empty()) out += shell == Shell::kFish ? "\n" : " ";
    out += candidate;
  }
  return out + "\n";
}

}  // namespace trainer::launch
