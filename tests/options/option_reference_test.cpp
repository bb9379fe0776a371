// docs/options.md is the declarations, printed: a key added, removed or changed in src/options/
// without the page fails here. TRAINER_UPDATE_DOCS=1 rewrites the page.
#include "trainer/options/option_reference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"

using namespace trainer;

TEST_CASE("docs/options.md is what the declarations say") {
  const std::string path = std::string(TRAINER_SOURCE_DIR) + "/docs/options.md";
  const std::string expected = options::reference_markdown();
  const char* update = std::getenv("TRAINER_UPDATE_DOCS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << expected;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  INFO("regenerate with TRAINER_UPDATE_DOCS=1 "
       << "build/<variant>/tests/options_option_reference_test");
  CHECK(text.str() == expected);
  CHECK(expected.find("| `trainer.max_epochs` | `10` | an int at least 0 or -1 |") != std::string::npos);
}

TEST_CASE("--help's options section lists the keys of the variants a config picks") {
  config::YamlDocument document =
      config::load_yaml_string("model:\n  name: cnn\noptimizer:\n  name: sgd\ntrainer:\n  max_epochs: 3\n", "job.yaml");
  const std::string help = options::help_text(document.root);
  CHECK(help.find("  model.hidden_size = 128  (an int at least 1): width of the hidden linear layer\n") !=
        std::string::npos);
  CHECK(help.find("model.hidden_sizes") == std::string::npos);  // the mlp's key
  CHECK(help.find("optimizer.momentum") != std::string::npos);
  CHECK(help.find("optimizer.betas") == std::string::npos);
  CHECK(help.find("data.") == std::string::npos);  // no data section in this config
}
