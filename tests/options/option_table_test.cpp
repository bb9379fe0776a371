// The declarations against the shipped configs: every key a shipped group file sets is declared
// with that file's value as its default, every declared default passes its own check, and every
// section a shipped file fills is closed against typos.
#include "trainer/options/option_table.h"

#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "trainer/config/python_str.h"
#include "trainer/config/yaml.h"
#include "trainer/options/value_check.h"

namespace fs = std::filesystem;
using namespace trainer;

namespace {

const fs::path kConfigs = fs::path(TRAINER_SOURCE_DIR) / "configs";

// Compares one shipped map with the section declared for it; recurses into nested sections.
void compare(const config::Node& shipped, const std::string& path, const std::string& variant, const std::string& file,
             int& compared) {
  const options::Section* section = options::find_section(path, variant);
  INFO(file << ": section " << path << " (" << variant << ")");
  REQUIRE(section != nullptr);
  for (const auto& entry : shipped.entries()) {
    INFO("key " << entry.key);
    const options::Option* option = options::find_option(*section, entry.key);
    if (option == nullptr) {
      CHECK_FALSE(section->closed);  // a closed section declares every key its shipped file has
      continue;
    }
    if (option->type == options::Type::kMap) {
      if (entry.value.is_map())
        compare(entry.value, path.empty() ? entry.key : path + "." + entry.key, variant, file, compared);
      continue;
    }
    ++compared;
    const config::Node& declared = options::default_node(*option);
    CHECK(config::python_str(declared) == config::python_str(entry.value));
    CHECK(declared.type() == entry.value.type());
  }
}

}  // namespace

TEST_CASE("every key of a shipped group file is declared with the shipped value as its default") {
  struct Shipped {
    std::string file;  // under configs/
    std::string path;  // the section it fills
  };
  const std::vector<Shipped> files = {
      {"config.yaml", ""},
      {"trainer/default.yaml", "trainer"},
      {"callbacks/default.yaml", "callbacks"},
      {"logger/csv.yaml", "logger"},
      {"logger/tensorboard.yaml", "logger"},
      {"data/fashion_mnist.yaml", "data"},
      {"data/synthetic.yaml", "data"},
      {"model/mlp.yaml", "model"},
      {"model/cnn.yaml", "model"},
      {"model/resnet.yaml", "model"},
      {"model/torchscript.yaml", "model"},
      {"optimizer/adam.yaml", "optimizer"},
      {"optimizer/adamw.yaml", "optimizer"},
      {"optimizer/sgd.yaml", "optimizer"},
      {"scheduler/none.yaml", "scheduler"},
      {"scheduler/step.yaml", "scheduler"},
      {"scheduler/cosine.yaml", "scheduler"},
      {"scheduler/warmup_cosine.yaml", "scheduler"},
      {"scheduler/onecycle.yaml", "scheduler"},
  };
  int compared = 0;
  for (const Shipped& shipped : files) {
    config::YamlDocument document = config::load_yaml_file((kConfigs / shipped.file).string());
    config::Node root = document.root;
    root.erase("defaults");
    const config::Node* name = root.find("name");
    const std::string variant = name != nullptr && name->is_string() ? name->as_string() : "";
    compare(root, shipped.path, variant, shipped.file, compared);
  }
  CHECK(compared > 100);
}

TEST_CASE("every group option shipped in configs/ has its own declared section") {
  for (const char* group : {"data", "model", "optimizer", "scheduler"}) {
    std::set<std::string> shipped;
    for (const auto& entry : fs::directory_iterator(kConfigs / group)) shipped.insert(entry.path().stem().string());
    const std::vector<std::string> declared = options::variants_of(group);
    CHECK(std::set<std::string>(declared.begin(), declared.end()) == shipped);
  }
}

TEST_CASE("every declared default passes its own declaration's check") {
  for (const options::Section& section : options::sections()) {
    for (const options::Option& option : section.options) {
      INFO(section.path << "[" << section.variant << "]." << option.key << " = " << option.default_text);
      CHECK_FALSE(option.help.empty());
      if (option.type == options::Type::kMap || option.computed_default) continue;
      CHECK(options::check_value(option, options::default_node(option)) == "");
    }
  }
}

TEST_CASE("a section is found by its path and its group's variant") {
  REQUIRE(options::find_section("model", "cnn") != nullptr);
  CHECK(options::find_option(*options::find_section("model", "cnn"), "hidden_size") != nullptr);
  CHECK(options::find_option(*options::find_section("model", "mlp"), "hidden_size") == nullptr);
  // A registered model or dataset of a program built on trainer falls back to the open "*" section.
  const options::Section* registered = options::find_section("data", "quadrants");
  REQUIRE(registered != nullptr);
  CHECK(registered->variant == "*");
  CHECK_FALSE(registered->closed);
  CHECK(options::find_section("trainer", "anything") == options::find_section("trainer", ""));
  CHECK(options::find_section("nowhere", "") == nullptr);
  CHECK(options::group_is_closed("optimizer"));
  CHECK_FALSE(options::group_is_closed("model"));
}
