// Hydra's command-line override grammar: `key=value`, `+key=value`, `++key=value`, `~key[=value]`,
// `group@package=option`, quoting and escapes, lists and dicts, casts and the sweep functions
// (`a,b,c`, choice, range, interval, glob, sort, shuffle, tag). Values are typed the way Hydra's
// grammar types them (not the YAML way): see docs/config.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config {

enum class OverrideKind { kChange, kAdd, kForceAdd, kDelete };

enum class SweepKind { kNone, kSimpleChoice, kChoice, kRange, kInterval, kGlob };

// One element of a choice sweep: its value plus the text that re-creates it in a job's
// override ("[a,b]", "\"a,b\"", "$\\{a\\}"), as Hydra's basic sweeper writes it.
struct SweepElement {
  Node value;
  std::string text;
};

struct Sweep {
  SweepKind kind = SweepKind::kNone;
  std::vector<std::string> tags;                    // from tag(...), e.g. {"log"}
  std::vector<SweepElement> choices;                // kSimpleChoice / kChoice
  Node range_start, range_stop, range_step;         // kRange: ints or floats
  double interval_start = 0.0, interval_end = 0.0;  // kInterval
  bool interval_int = false;  // kInterval under int(): sampled as integers (Hydra's Optuna sweeper)
  std::vector<std::string> glob_include, glob_exclude;  // kGlob
  bool shuffle = false;
};

struct Override {
  OverrideKind kind = OverrideKind::kChange;
  std::string key;                     // "db", "model.hidden_size", "list.0", "server/db"
  std::optional<std::string> package;  // from `key@pkg` ("" for `key@=`)
  bool has_value = false;              // false only for `~key`
  Node value;                          // the typed value when not a sweep
  Sweep sweep;                         // kind != kNone for sweeps
  std::string text;                    // the override exactly as typed
  // The (non-sweep) value as Hydra's basic sweeper writes it back into a job's override:
  // "1000.0" for `1e3`, "[1,2]" for `[1, 2]`, "$\{a\}" for `${a}`, "null" for `~key`.
  std::string value_text;

  bool is_sweep() const { return sweep.kind != SweepKind::kNone; }
  // "+", "++", "~" or "".
  const char* prefix() const;
  // key with "@pkg" when a package was given: what precedes '=' minus the prefix.
  std::string key_with_package() const;
};

// Parses one override. Throws trainer::Error naming the override, the position and the fix.
Override parse_override(std::string_view text);

// Parses the overrides of a command line (or of a job) in order. Throws one trainer::Error listing
// every override that failed, one paragraph each, so three mistakes are reported at once.
std::vector<Override> parse_overrides(const std::vector<std::string>& texts);

}  // namespace trainer::config
