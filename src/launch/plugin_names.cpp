#include "trainer/launch/plugin_names.h"

#include <algorithm>

#include "trainer/config/did_you_mean.h"
#include "trainer/launch/job_run.h"
#include "trainer/options/option_table.h"
#include "trainer/util/error.h"

namespace trainer::launch {
namespace {

using config::Node;

struct Kind {
  const char* name;   // as the engine's registry names it: "model"
  const char* macro;  // how a program adds its own
  std::vector<std::string> shipped;
};

// The variants the option declarations name for a group ("*" serves the rest, not a name).
std::vector<std::string> shipped_variants(const std::string& group) {
  std::vector<std::string> names = options::variants_of(group);
  names.erase(std::remove(names.begin(), names.end(), "*"), names.end());
  return names;
}

// The entries a section declares (callbacks.early_stopping, logger.csv, ...).
std::vector<std::string> shipped_entries(const std::string& section_path) {
  std::vector<std::string> names;
  if (const options::Section* section = options::find_section(section_path, "")) {
    for (const options::Option& option : section->options) names.push_back(option.key);
  }
  return names;
}

void check_name(const std::string& name, const std::string& path, const Node& at, const Kind& kind,
                const RegisteredNames& registered) {
  if (std::find(kind.shipped.begin(), kind.shipped.end(), name) != kind.shipped.end()) return;
  const std::vector<std::string> known = registered(kind.name);
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string list;
  for (const std::string& entry : known) list += (list.empty() ? "" : ", ") + entry;
  const std::string hint = config::did_you_mean(name, known);
  throw Error(at.origin().describe_key(path), "unknown " + std::string(kind.name) + " '" + name + "'; nothing was run",
              (hint.empty() ? std::string() : hint + " ") + "Known " + kind.name + "s: " + list +
                  ". A C++ program adds its own with " + kind.macro + " before calling trainer::run_cli.");
}

void check_entries(const Node& job, const std::string& section, const Kind& kind, const RegisteredNames& registered) {
  const Node* entries = job.find(section);
  if (entries == nullptr || !entries->is_map()) return;
  for (const auto& entry : entries->entries()) {
    // A null entry switches a shipped one off; the checkpoint callback is the loop's own.
    if (entry.value.is_null() || (section == "callbacks" && entry.key == "model_checkpoint")) continue;
    check_name(entry.key, section + "." + entry.key, entry.value, kind, registered);
  }
}

void check_variant(const Node& job, const std::string& group, const Kind& kind, const RegisteredNames& registered) {
  const Node* name = config::select(job, group + ".name");
  if (name != nullptr && name->is_string()) {
    check_name(name->as_string(), group + ".name", *name, kind, registered);
    return;
  }
  if (name != nullptr && !name->is_null()) return;  // another type: the schema check names it
  // No name (an empty group file, a section of one's own without it): the engine refused it only
  // after the data was loaded, with "key not found".
  const Node* section = job.find(group);
  const std::string from = section != nullptr ? section->origin().describe() : std::string();
  const std::vector<std::string> known = kind.shipped;
  std::string list;
  for (const std::string& entry : known) list += (list.empty() ? "" : ", ") + entry;
  throw Error(group + ".name",
              "is not set" + (from.empty() ? std::string() : " (the " + group + " section comes from " + from + ")") +
                  ": it picks the " + kind.name + " to build; nothing was run",
              "Pick one with " + group + "=<option> (a group file that sets name:), or give " + group +
                  ".name=<name> (trainer's: " + list + "; a program's own registered ones too).");
}

}  // namespace

void check_plugin_names(const Node& resolved_job, const std::string& command, const RegisteredNames& registered) {
  // What each command builds: a fit or a batch-size search its model and data (an evaluation takes
  // them from its checkpoint); fit, validate and test their loggers and callbacks.
  const bool trains = command == "fit" || command == "tune_batch_size";
  if (trains) {
    check_variant(resolved_job, "model", {"model", "TRAINER_REGISTER_MODEL", shipped_variants("model")}, registered);
  }
  if (trains || command == "data_pack") {
    check_variant(resolved_job, "data", {"dataset", "TRAINER_REGISTER_DATASET", shipped_variants("data")}, registered);
  }
  if (command == "fit" || command == "validate" || command == "test") {
    check_entries(resolved_job, "logger", {"logger", "TRAINER_REGISTER_LOGGER", shipped_entries("logger")}, registered);
    check_entries(resolved_job, "callbacks", {"callback", "TRAINER_REGISTER_CALLBACK", shipped_entries("callbacks")},
                  registered);
  }
}

void check_plugin_names(const Node& resolved_job, const std::string& command) {
  check_plugin_names(resolved_job, command, [](const std::string& kind) { return process_engine().registered(kind); });
}

}  // namespace trainer::launch
