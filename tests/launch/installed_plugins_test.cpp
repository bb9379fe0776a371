// --info plugins: Hydra's layout, with trainer's built-in launchers and sweepers by class name.
#include "trainer/launch/installed_plugins.h"

#include <catch2/catch.hpp>

TEST_CASE("the built-in launchers and sweepers are listed under their kind, Hydra's own first") {
  const std::string text = trainer::launch::installed_plugins_text();
  CHECK(text.find("Installed Hydra Plugins\n***********************\n\tConfigSource:\n\t-------------\n") == 0);
  CHECK(text.find("\tLauncher:\n\t---------\n\t\tBasicLauncher\n\t\tJoblibLauncher\n\t\tLocalLauncher\n"
                  "\t\tSlurmLauncher\n\tSweeper:\n\t--------"
                  "\n\t\tBasicSweeper\n\t\tAshaSweeper\n\t\tOptunaSweeper\n\t\tRandomSweeper\n") != std::string::npos);
}
