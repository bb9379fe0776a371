// Every option trainer declares (sections.h), and how a key of a job config finds its
// declaration. Sections of a group that has variants (model, data, optimizer, scheduler) apply
// when <group>.name names the variant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/node.h"
#include "trainer/options/option.h"

namespace trainer::options {

// All sections, in the order the reference lists them.
const std::vector<Section>& sections();

// The section at `path` ("trainer", "data.normalize") for `variant` (the group's name; ignored by
// sections without variants; a "*" section serves names declared nowhere else), or nullptr.
const Section* find_section(std::string_view path, std::string_view variant);
const Option* find_option(const Section& section, std::string_view key);

// The group of a path ("model" for "model", "data" for "data.normalize", "" for the root) and the
// variant names its sections are declared for (empty when the group has none).
std::string group_of(std::string_view path);
std::vector<std::string> variants_of(std::string_view group);
// True for groups whose variants are all declared here (optimizer, scheduler): another name is
// a mistake. Models and datasets may be registered by a program built on trainer.
bool group_is_closed(std::string_view group);

// The variant a job config picks for `group`: the text of <group>.name, "" when absent.
std::string variant_in(const config::Node& job_config, std::string_view group);

// The declared default, parsed as YAML (a null node for "null"; an interpolation stays a string).
const config::Node& default_node(const Option& option);

}  // namespace trainer::options
