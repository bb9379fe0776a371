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

}  // namespace trainer::config
