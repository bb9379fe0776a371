#include "trainer/options/option_reference.h"

#include "trainer/options/option_table.h"
#include "trainer/options/value_check.h"

namespace trainer::options {
namespace {

std::string full_key(const Section& section, const Option& option) {
  return section.path.empty() ? option.key : section.path + "." + option.key;
}

std::string section_title(const Section& section) {
  std::string title = section.path.empty() ? "the primary config" : "`" + section.path + "`";
  if (section.variant == "*") return title + " (any other registered name)";
  if (!section.variant.empty()) title += " (`" + group_of(section.path) + ".name: " + section.variant + "`)";
  return title;
}

// A table cell: pipes would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string reference_markdown() {
  std::string out =
      "# Option reference\n\n"
      "Every key that trainer's own code reads, made from the declarations in `src/options/` (one\n"
      "file per config group); a test fails when this page and the declarations differ\n"
      "(`TRAINER_UPDATE_DOCS=1 build/debian/tests/options_option_reference_test` rewrites it). The same declarations "
      "check every job before anything runs (type, range,\n"
      "choices; unknown keys in a closed section, with a did-you-mean) and give the engine its\n"
      "defaults, so a key listed here is always read (absent, it takes the default shown), and a key\n"
      "not listed is refused. A key the shipped YAML files leave out (the `tuner` and `pack` sections,\n"
      "`trainer.profiler_schedule`, `callbacks.device_stats_monitor`, `data.augment` and `data.normalize`\n"
      "for `data=synthetic`) is not in the composed config, so, as in Hydra, it is added with a leading `+`\n"
      "(`+tuner.max_memory_mb=512`, or `++`, which also replaces a value that is there); `--cfg job` shows\n"
      "which keys the config holds.\n\n"
      "A section marked *open* also takes keys of your own (a registered dataset's, a tag for\n"
      "interpolations); the keys listed in it are still checked. Sections per variant apply when\n"
      "the group's `name` picks that variant (`model=cnn` sets `model.name: cnn`). *computed*: when\n"
      "the key is absent, trainer computes the default as described (the shipped configs spell it\n"
      "as the interpolation shown).\n";
  for (const Section& section : sections()) {
    out += "\n## " + section_title(section) + "\n" + section.about + (section.closed ? "." : " (open).") + "\n\n";
    out += "| key | default | accepts | meaning |\n|---|---|---|---|\n";
    for (const Option& option : section.options) {
      out += "| `" + full_key(section, option) + "` | `" +
             cell(option.type == Type::kMap ? "{...}" : option.default_text) + "`" +
             (option.computed_default ? " (computed)" : "") + " | " + cell(accepted(option)) + " | " +
             cell(option.help) + " |\n";
    }
  }
  return out;
}

std::string help_text(const config::Node& job_config) {
  std::string out;
  for (const Section& declared : sections()) {
    const std::string group = group_of(declared.path);
    const std::string variant = variant_in(job_config, group);
    if (find_section(declared.path, variant) != &declared) continue;  // another variant's keys
    if (!declared.path.empty() && config::select(job_config, declared.path) == nullptr) continue;
    for (const Option& option : declared.options) {
      if (option.type == Type::kMap) continue;
      out += "  " + full_key(declared, option) + " = " + option.default_text + "  (" + accepted(option) +
             "): " + option.help + "\n";
    }
  }
  return out;
}

}  // namespace trainer::options
