#include "trainer/launch/shell_completion.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "trainer/config/key_completion.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;
using trainer::config::Node;

namespace trainer::launch {
namespace {

const std::vector<std::string> kCommands = {"data", "export", "fit", "predict", "sweep", "test", "tune", "validate"};
const std::vector<std::string> kCfgKinds = {"all", "hydra", "job"};
const std::vector<std::string> kInfoKinds = {"all", "config", "defaults", "defaults-tree", "plugins", "searchpath"};

// trainer's flags (Hydra's, as cli_args.cpp declares them) and what their value is.
enum class FlagValue { kNone, kRequired, kOptional };
enum class ValueKind { kFree, kChoice, kDirectory, kConfigName };
struct Flag {
  std::vector<std::string> names;
  FlagValue value = FlagValue::kNone;
  ValueKind kind = ValueKind::kFree;
  const std::vector<std::string>* choices = nullptr;
};

const std::vector<Flag>& flags() {
  static const std::vector<Flag> all = {
      {{"--help", "-h"}},
      {{"--hydra-help"}},
      {{"--version"}},
      {{"--cfg", "-c"}, FlagValue::kRequired, ValueKind::kChoice, &kCfgKinds},
      {{"--resolve"}},
      {{"--package", "-p"}, FlagValue::kRequired},
      {{"--run", "-r"}},
      {{"--multirun", "-m"}},
      {{"--shell-completion", "-sc"}},
      {{"--config-path", "-cp"}, FlagValue::kRequired, ValueKind::kDirectory},
      {{"--config-name", "-cn"}, FlagValue::kRequired, ValueKind::kConfigName},
      {{"--config-dir", "-cd"}, FlagValue::kRequired, ValueKind::kDirectory},
      {{"--info", "-i"}, FlagValue::kOptional, ValueKind::kChoice, &kInfoKinds},
  };
  return all;
}

const Flag* find_flag(const std::string& name) {
  for (const Flag& flag : flags()) {
    for (const std::string& spelling : flag.names) {
      if (spelling == name) return &flag;
    }
  }
  return nullptr;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// A word argparse reads as an option: a dash, not a negative number ("-1", "-.5").
bool looks_like_flag(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  bool number = true;
  for (size_t i = 1; i < word.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(word[i])) && word[i] != '.') number = false;
  }
  return !number;
}

std::vector<std::string> with_prefix(const std::vector<std::string>& names, const std::string& prefix,
                                     const std::string& before = "") {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (starts_with(name, prefix)) out.push_back(before + name);
  }
  return out;
}

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
    size_t end = at;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    if (end > at) words.emplace_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

// Python's os.path.dirname and os.path.join, which Hydra's file completion is made of.
std::string python_dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string head = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  if (!head.empty() && head.find_first_not_of('/') != std::string::npos) {
    while (!head.empty() && head.back() == '/') head.pop_back();
  }
  return head;
}

std::string python_join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::vector<std::string> entries_of(const std::string& dir, bool directories_only) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (directories_only && !it->is_directory(ec)) continue;
    names.push_back(it->path().filename().string());
  }
  return names;
}

// Hydra's file completion: a value after `key=` that starts with `.` or `/` (or `\`) is a path;
// the entries of its directory that start with what follows the last slash.
std::optional<std::vector<std::string>> file_candidates(const std::string& word) {
  const size_t eq = word.rfind('=');
  if (eq == std::string::npos) return std::nullopt;
  const std::string key_eq = word.substr(0, eq + 1);
  const std::string path = word.substr(eq + 1);
  if (path.empty() || (path[0] != '.' && path[0] != '/' && path[0] != '\\')) return std::nullopt;
  std::error_code ec;
  std::string dir = path;
  std::string prefix;
  if (!fs::is_directory(path, ec)) {
    dir = python_dirname(path);
    prefix = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  }
  std::vector<std::string> out;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  for (const std::string& name : entries_of(dir, false)) {
    if (starts_with(name, prefix)) out.push_back(key_eq + python_join(dir, name));
  }
  return out;
}

// Directories for a flag's value or `trainer sweep resume DIR`: "conf" -> "configs/".
std::vector<std::string> directory_candidates(const std::string& word) {
  const size_t slash = word.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : word.substr(0, slash + 1);
  const std::string prefix = word.substr(dir.size());
  std::vector<std::string> out;
  for (const std::string& name : entries_of(dir.empty() ? "." : dir, true)) {
    if (name[0] == '.' && (prefix.empty() || prefix[0] != '.')) continue;
    if (starts_with(name, prefix)) out.push_back(dir + name + "/");
  }
  return out;
}

// --- Hydra's _query_config_groups ---

struct GroupMatches {
  std::vector<std::string> names;
  bool exact = false;  // the word names a group's option: no config keys then
};

GroupMatches group_matches(const config::Composer& composer, std::string word) {
  std::string prefix;
  const bool deletion = starts_with(word, "~");
  if (starts_with(word, "+") || deletion) {
    prefix = word.substr(0, 1);
    word = word.substr(1);
  }
  GroupMatches out;
  const size_t eq = word.rfind('=');
  if (eq != std::string::npos) {
    const std::string parent = word.substr(0, eq);
    for (const std::string& option : composer.configs_in(parent)) {
      const std::string name = parent.empty() ? option : parent + "=" + option;
      if (starts_with(name, word)) out.names.push_back(prefix + name);
      out.exact = true;  // as in Hydra: any option of the group, matching or not
    }
    return out;
  }
  const size_t slash = word.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : word.substr(0, slash);
  for (const std::string& group : composer.subgroups(parent)) {
    std::string name = parent.empty() ? group : parent + "/" + group;
    if (!starts_with(name, word)) continue;
    const bool has_configs = !composer.configs_in(name).empty();
    const bool has_groups = !composer.subgroups(name).empty();
    if (!has_groups && has_configs && !deletion) name += "=";
    if (has_groups && !has_configs) name += "/";
    out.names.push_back(prefix + name);
  }
  return out;
}

// Hydra's _query: the overrides of the line (the last one being completed unless the line ends
// with a space), then files, groups and config keys.
std::vector<std::string> override_candidates(std::vector<std::string> words, bool new_word, bool multirun,
                                             const CompletionTree& tree, const ComposerForLine& composer_for) {
  std::string word;
  if (!new_word && !words.empty()) {
    word = words.back();
    words.pop_back();
  }
  if (auto files = file_candidates(word)) return *files;
  std::vector<config::Override> overrides;
  overrides.reserve(words.size());
  for (const std::string& text : words) overrides.push_back(config::parse_override(text));
  config::Composer composer = composer_for(tree, overrides);
  GroupMatches groups = group_matches(composer, word);
  std::vector<std::string> out = groups.names;
  if (!groups.exact) {
    std::optional<config::ComposeResult> composed;
    try {
      if (multirun) {
        composed = composer.compose(overrides, config::RunMode::kMultirun);
        // Hydra's loader leaves hydra.mode as the configs set it.
        if (!composer.configured_mode(overrides)) {
          if (Node* hydra = composed->config.find("hydra")) hydra->set("mode", Node());
        }
      } else {
        composed = composer.compose(overrides, config::RunMode::kShow);
      }
    } catch (const Error&) {
      composed.reset();  // a config that does not compose offers no keys (Hydra's rule)
    }
    if (composed) {
      for (std::string& match : config::key_completions(composed->config, word)) {
        out.push_back(std::move(match));
      }
    }
  }
  return out;
}

std::vector<std::string> flag_value_candidates(const Flag& flag, const std::string& before, const std::string& value,
                                               const CompletionTree& tree, const ComposerForLine& composer_for) {
  switch (flag.kind) {
    case ValueKind::kChoice:
      return with_prefix(*flag.choices, value, before);
    case ValueKind::kDirectory: {
      std::vector<std::string> out;
      for (const std::string& dir : directory_candidates(value)) out.push_back(before + dir);
      return out;
    }
    case ValueKind::kConfigName: {
      CompletionTree without_name = tree;
      without_name.config_name = std::string();
      return with_prefix(composer_for(without_name, {}).configs_in(""), value, before);
    }
    case ValueKind::kFree:
      break;
  }
  return {};
}

std::vector<std::string> flag_names(const std::string& prefix) {
  std::vector<std::string> names;
  for (const Flag& flag : flags()) {
    for (const std::string& name : flag.names) names.push_back(name);
  }
  return with_prefix(names, prefix);
}

// The words a command still needs before its overrides: an action for tune, data and sweep, a
// directory for sweep's. Candidates for the next one, or nullopt when the command is whole.
std::optional<std::vector<std::string>> command_word_candidates(const std::vector<std::string>& command,
                                                                const std::string& current) {
  if (command.empty()) return with_prefix(kCommands, current);
  if (command[0] == "tune") {
    if (command.size() == 1) return with_prefix({"batch_size"}, current);
    if (command[1] != "batch_size") return std::vector<std::string>{};
    return std::nullopt;
  }
  if (command[0] == "data") {
    if (command.size() == 1) return with_prefix({"pack"}, current);
    if (command[1] != "pack") return std::vector<std::string>{};
    return std::nullopt;
  }
  if (command[0] == "sweep") {
    if (command.size() == 1) return with_prefix({"resume", "summary"}, current);
    if (command[1] != "resume" && command[1] != "summary") return std::vector<std::string>{};
    if (command.size() == 2) return directory_candidates(current);
    return std::vector<std::string>{};  // sweep resume|summary DIR takes nothing more
  }
  if (!contains(kCommands, command[0])) return std::vector<std::string>{};
  return std::nullopt;
}

bool command_is_whole(const std::vector<std::string>& command) {
  if (command.empty()) return false;
  if (command[0] == "tune" || command[0] == "data") return command.size() >= 2;
  if (command[0] == "sweep") return command.size() >= 3;
  return true;
}

std::vector<std::string> candidates_for(std::string_view line, CompletionTree tree,
                                        const ComposerForLine& composer_for) {
  std::vector<std::string> tokens = split_words(line);
  if (tokens.empty()) return {};
  tokens.erase(tokens.begin());  // the program
  const bool new_word = tokens.empty() || std::isspace(static_cast<unsigned char>(line.back()));
  const std::string current = new_word ? "" : tokens.back();
  if (!new_word) tokens.pop_back();

  // The words before `current`, read as trainer's parser reads them.
  std::vector<std::string> command;  // "fit" / "tune", "batch_size" / "sweep", "resume", DIR
  std::vector<std::string> overrides;
  bool multirun = false;
  const Flag* pending = nullptr;  // a flag still waiting for its value
  auto take_value = [&](const Flag& flag, const std::string& value) {
    if (flag.names[0] == "--config-path") tree.config_path = value;
    if (flag.names[0] == "--config-name") tree.config_name = value;
    if (flag.names[0] == "--config-dir") tree.config_dir = value;
  };
  for (const std::string& token : tokens) {
    if (pending != nullptr) {
      const Flag* flag = std::exchange(pending, nullptr);
      if (flag->value == FlagValue::kRequired) {
        take_value(*flag, token);
        continue;
      }
      if (contains(*flag->choices, token)) continue;  // --info KIND; any other word is an override
    }
    if (!looks_like_flag(token)) {
      (command_is_whole(command) ? overrides : command).push_back(token);
      continue;
    }
    const size_t eq = starts_with(token, "--") ? token.find('=') : std::string::npos;
    const Flag* flag = find_flag(token.substr(0, eq));
    if (flag == nullptr) continue;  // Hydra's parser gives up here; trainer's reads on
    if (flag->names[0] == "--multirun") multirun = true;
    if (flag->value == FlagValue::kNone) continue;
    if (eq != std::string::npos) {
      take_value(*flag, token.substr(eq + 1));
    } else {
      pending = flag;
    }
  }

  // Where Hydra's parser would fail (a flag's value missing or half typed, a half-typed flag),
  // the values and flags themselves.
  bool completes_override = !new_word;
  if (pending != nullptr) {
    const bool exact = pending->choices != nullptr && contains(*pending->choices, current);
    if (pending->value == FlagValue::kRequired) {
      if (new_word || !exact) return flag_value_candidates(*pending, "", current, tree, composer_for);
      completes_override = false;  // `-c job`: Hydra completes the last override, as below
    } else if (exact) {
      completes_override = false;
    } else if (!new_word && !with_prefix(*pending->choices, current).empty()) {
      // `--info def`: a kind being typed, or an override (trainer's parser reads it as one).
      std::vector<std::string> out = with_prefix(*pending->choices, current);
      if (command_is_whole(command)) {
        overrides.push_back(current);
        for (std::string& match : override_candidates(overrides, false, multirun, tree, composer_for)) {
          out.push_back(std::move(match));
        }
      }
      return out;
    }
  }
  if (completes_override && looks_like_flag(current)) {
    const size_t eq = starts_with(current, "--") ? current.find('=') : std::string::npos;
    const Flag* flag = find_flag(current.substr(0, eq));
    if (eq != std::string::npos) {
      if (flag == nullptr || flag->value == FlagValue::kNone) return {};
      return flag_value_candidates(*flag, current.substr(0, eq + 1), current.substr(eq + 1), tree, composer_for);
    }
    // A flag that still needs its value, like one half typed, is where Hydra's parser fails.
    if (flag == nullptr || flag->value == FlagValue::kRequired || !command_is_whole(command)) {
      return flag_names(current);
    }
    if (flag->names[0] == "--multirun") multirun = true;
    completes_override = false;  // a whole flag: Hydra completes the last override
  }
  if (auto words = command_word_candidates(command, completes_override || new_word ? current : "")) {
    return *words;
  }
  if (completes_override) overrides.push_back(current);
  return override_candidates(overrides, new_word, multirun, tree, composer_for);
}

}  // namespace

std::vector<std::string> completion_candidates(std::string_view line, const CompletionTree& tree,
                                               const ComposerForLine& composer_for) {
  std::vector<std::string> found;
  try {
    found = candidates_for(line, tree, composer_for);
  } catch (const std::exception&) {
    return {};  // where Hydra's completion fails, it offers nothing
  }
  std::set<std::string> unique(found.begin(), found.end());
  return {unique.begin(), unique.end()};
}

}  // namespace trainer::launch
