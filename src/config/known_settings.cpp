#include "trainer/config/known_settings.h"

#include <algorithm>

#include "trainer/config/did_you_mean.h"
#include "trainer/util/error.h"

namespace trainer::config {

void refuse_unknown_settings(const Node& section, const std::string& path, const std::string& plugin,
                             const std::vector<std::string>& known) {
  if (!section.is_map()) return;
  for (const Node::Entry& entry : section.entries()) {
    if (std::find(known.begin(), known.end(), entry.key) != known.end()) continue;
    std::string list;
    for (const std::string& key : known) {
      if (key != "_target_") list += (list.empty() ? "" : ", ") + key;
    }
    const std::string closest = closest_match(entry.key, known);
    throw Error(path + "." + entry.key,
                "'" + entry.key + "' is not a setting of " + plugin + " (" +
                    (list.empty() ? std::string("it has none") : "its settings: " + list) +
                    "); it would change nothing, and Hydra refuses it too",
                closest.empty() ? "Remove it." : "Did you mean " + path + "." + closest + "?");
  }
}

void refuse_plugin_value(const Node& section, const std::string& path, const std::string& group) {
  if (section.is_map() || section.is_null()) return;
  const std::string value = section.is_string() ? section.as_string() : "the value given";
  throw Error(path,
              "is '" + value +
                  "', a value where Hydra takes the plugin's settings (a config with its _target_); Hydra " +
                  "1.3 refuses it (\"Input config does not have a `_target_` field\"), and trainer would have run " +
                  "with the default " + group.substr(group.find('/') + 1),
              "Choose the plugin with its config group, a slash rather than a dot: " + group + "=" + value +
                  "; its settings are then " + path + ".<key>=...");
}

}  // namespace trainer::config
