// The install and uninstall scripts and the query's reply format (run in real shells by
// tests/e2e/shell_completion_test.cpp).
#include "trainer/launch/completion_scripts.h"

#include <catch2/catch.hpp>

using namespace trainer::launch;

TEST_CASE("shells by name") {
  CHECK(shell_named("bash") == Shell::kBash);
  CHECK(shell_named("zsh") == Shell::kZsh);
  CHECK(shell_named("fish") == Shell::kFish);
  CHECK_FALSE(shell_named("tcsh"));
}

TEST_CASE("the scripts register Hydra's completion functions for the program") {
  const std::string bash = completion_install_script(Shell::kBash, "my_trainer");
  CHECK(bash.find("export _HYDRA_OLD_COMP=\"$(complete -p my_trainer 2> /dev/null)\"\n") == 0);
  CHECK(bash.find("\"$helper\" -sc query=bash") != std::string::npos);
  CHECK(bash.find("COMP_WORDBREAKS=\"${COMP_WORDBREAKS//=}\"\n") != std::string::npos);
  CHECK(bash.find("complete -o nospace -o default -F hydra_bash_completion my_trainer\n") != std::string::npos);
  CHECK(completion_install_script(Shell::kZsh, "my_trainer") == "autoload -Uz bashcompinit && bashcompinit\n" + bash);
  CHECK(completion_install_script(Shell::kFish, "my_trainer")
            .find("complete -c my_trainer -x -a '(hydra_fish_completion)'\n") != std::string::npos);
  CHECK(completion_uninstall_script(Shell::kBash, "my_trainer").find("complete -r my_trainer") != std::string::npos);
  CHECK(completion_uninstall_script(Shell::kZsh, "t") == completion_uninstall_script(Shell::kBash, "t"));
  CHECK(completion_uninstall_script(Shell::kFish, "my_trainer") ==
        "complete -e -c my_trainer\nfunctions -e hydra_fish_completion\n");
}

TEST_CASE("the reply: one line of candidates for bash and zsh, one a line for fish") {
  CHECK(completion_reply(Shell::kBash, {"a=", "b."}) == "a= b.\n");
  CHECK(completion_reply(Shell::kZsh, {"a=", "b."}) == "a= b.\n");
  CHECK(completion_reply(Shell::kFish, {"a=", "b."}) == "a=\nb.\n");
  CHECK(completion_reply(Shell::kBash, {}) == "\n");
}
