#include "trainer/options/option_table.h"

#include <map>
#include <mutex>

#include "trainer/config/yaml.h"
#include "trainer/options/sections.h"

namespace trainer::options {

const std::vector<Section>& sections() {
  static const std::vector<Section> all = [] {
    std::vector<Section> out;
    for (auto part :
         {root_sections, trainer_sections, data_sections, model_sections, optimizer_sections, scheduler_sections,
          callbacks_sections, logger_sections, tuner_sections, predict_sections, pack_sections}) {
      for (Section& section : part()) out.push_back(std::move(section));
    }
    return out;
  }();
  return all;
}

std::string group_of(std::string_view path) { return std::string(path.substr(0, path.find('.'))); }

const Section* find_section(std::string_view path, std::string_view variant) {
  const Section* fallback = nullptr;  // the "*" section: a variant declared nowhere else
  for (const Section& section : sections()) {
    if (section.path != path) continue;
    if (section.variant.empty() || section.variant == variant) return &section;
    if (section.variant == "*" && fallback == nullptr) fallback = &section;
  }
  return fallback;
}

const Option* find_option(const Section& section, std::string_view key) {
  for (const Option& option : section.options) {
    if (option.key == key) return &option;
  }
  return nullptr;
}

std::vector<std::string> variants_of(std::string_view group) {
  std::vector<std::string> names;
  for (const Section& section : sections()) {
    if (section.variant.empty() || section.variant == "*" || section.path != group) continue;
    names.push_back(section.variant);
  }
  return names;
}

bool group_is_closed(std::string_view group) { return group == "optimizer" || group == "scheduler"; }

std::string variant_in(const config::Node& job_config, std::string_view group) {
  if (group.empty()) return {};
  const config::Node* name = config::select(job_config, std::string(group) + ".name");
  if (name == nullptr || !name->is_string()) return {};
  return name->as_string();
}

const config::Node& default_node(const Option& option) {
  // Parsed once per option; the table is never destroyed, so the addresses are stable.
  static std::mutex mutex;
  static std::map<const Option*, config::Node> parsed;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = parsed.find(&option);
  if (found != parsed.end()) return found->second;
  config::Node node;
  if (option.type != Type::kMap) {
    config::YamlDocument document = config::load_yaml_string("value: " + option.default_text, "declaration");
    if (const config::Node* value = document.root.find("value")) node = *value;
  }
  return parsed.emplace(&option, std::move(node)).first->second;
}

}  // namespace trainer::options
