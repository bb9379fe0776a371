#include "trainer/launch/installed_plugins.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "trainer/config/builtin_hydra_configs.h"

namespace trainer::launch {
namespace {

// Class names of the built-in configs of one group ("hydra/launcher/"): the last part of each
// `_target_`, Hydra's own (`Basic...`, scanned first by Hydra) first, then by name, each once.
std::vector<std::string> classes_of(std::string_view group, const std::string& core) {
  std::vector<std::string> names;
  for (const auto& [path, text] : config::builtin_hydra_configs()) {
    if (path.substr(0, group.size()) != group) continue;
    if (path.find('/', group.size()) != std::string_view::npos) continue;  // a nested group (the samplers)
    const std::string_view key = "_target_: ";
    const size_t at = text.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view target = text.substr(at + key.size());
    target = target.substr(0, target.find('\n'));
    const std::string name(target.substr(target.rfind('.') + 1));
    if (name != core && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  names.insert(names.begin(), core);
  return names;
}

std::string kind(const std::string& title, const std::vector<std::string>& names) {
  std::string out = "\t" + title + ":\n\t" + std::string(title.size() + 1, '-') + "\n";
  for (const std::string& name : names) out += "\t\t" + name + "\n";
  return out;
}

}  // namespace

std::string installed_plugins_text() {
  return "Installed Hydra Plugins\n"
         "***********************\n" +
         kind("ConfigSource", {"FileConfigSource", "ImportlibResourcesConfigSource", "StructuredConfigSource"}) +
         kind("CompletionPlugin", {"BashCompletion", "FishCompletion", "ZshCompletion"}) +
         kind("Launcher", classes_of("hydra/launcher/", "BasicLauncher")) +
         kind("Sweeper", classes_of("hydra/sweeper/", "BasicSweeper"));
}

}  // namespace trainer::launch
