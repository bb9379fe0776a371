// One declaration per config key that trainer's own code reads: its type, default, allowed range
// or choices and one line of help (DuckDB's settings table is the model). The schema check that
// runs before any job, the engine's readers (option_reader.h), `--help`, the config reference
// (docs/options.md) and the shipped-defaults test are all derived from these declarations.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace trainer::options {

enum class Type {
  kBool,
  kInt,
  kFloat,  // an int is accepted too, as OmegaConf's float does
  kString,
  kChoice,    // one of `choices` (an int is read as its text: precision=16)
  kDuration,  // "DD:HH:MM:SS" (or fewer fields) or a number of seconds
  kLimit,     // Lightning's batch limits: a float share in [0, 1] or an int count >= 0
  kIntList,
  kFloatList,
  kTextList,  // a list of strings (data.features: column names)
  kMap,       // a nested section with declarations of its own (trainer.grad_scaler)
  kSteps,     // a list of steps, each a name or {name: its parameters} (data.transforms.train); the
              // reading code checks the names and parameters
};

// "int", "float", "one of epoch|step", ... as the reference and the messages name it.
std::string type_text(Type type);

struct Option {
  std::string key;  // relative to its section: "max_epochs"
  Type type = Type::kString;
  std::string default_text;  // the default as YAML text, exactly as the shipped config has it
  bool nullable = false;     // null is a valid value (it means what `help` says)
  // The default is an interpolation (${paths.output_dir}/checkpoints) that the reading code
  // computes itself when the key is absent (the run directory, another key's value).
  bool computed_default = false;
  bool mandatory = false;  // `???` by default: the user must give it
  double minimum = -HUGE_VAL;
  double maximum = HUGE_VAL;
  bool minimum_open = false;  // minimum itself is not allowed
  bool maximum_open = false;
  bool minus_one = false;            // -1 is allowed besides the range (Lightning's "no limit")
  bool bool_as_int = false;          // true/false are read as 1/0 (fast_dev_run)
  bool one_text = false;             // kTextList: one string stands for a list of it (data.shards)
  bool file_path = false;            // a file or folder (or a list of them): an evaluation reads a relative
                                     // one from the checkpoint's config in the training run's directory
  std::vector<std::string> choices;  // kChoice: the names; kInt: words allowed instead (auto)
  std::string help;

  // Builders, so a declaration reads as one line.
  Option& at_least(double value) {
    minimum = value;
    minimum_open = false;
    return *this;
  }
  Option& above(double value) {
    minimum = value;
    minimum_open = true;
    return *this;
  }
  Option& at_most(double value) {
    maximum = value;
    maximum_open = false;
    return *this;
  }
  Option& below(double value) {
    maximum = value;
    maximum_open = true;
    return *this;
  }
  Option& or_minus_one() {
    minus_one = true;
    return *this;
  }
  Option& or_null() {
    nullable = true;
    return *this;
  }
  Option& or_words(std::vector<std::string> words) {
    choices = std::move(words);
    return *this;
  }
  Option& or_one_text() {
    one_text = true;
    return *this;
  }
  Option& computed() {
    computed_default = true;
    return *this;
  }
  Option& accepts_bool() {
    bool_as_int = true;
    return *this;
  }
  Option& a_path() {
    file_path = true;
    return *this;
  }
  Option& means(std::string text) {
    help = std::move(text);
    return *this;
  }
  bool has_range() const { return minimum != -HUGE_VAL || maximum != HUGE_VAL; }
};

Option flag(std::string key, std::string default_text);
Option integer(std::string key, std::string default_text);
Option number(std::string key, std::string default_text);
Option text(std::string key, std::string default_text);
Option choice(std::string key, std::string default_text, std::vector<std::string> names);
Option duration(std::string key, std::string default_text);
Option limit(std::string key, std::string default_text);
Option integers(std::string key, std::string default_text);
Option numbers(std::string key, std::string default_text);
Option texts(std::string key, std::string default_text);
Option section(std::string key);
Option steps(std::string key, std::string default_text);

// The options of one config section. A section may hold only in one variant of its group (the
// cnn's keys when model.name is cnn): `variant` names it; empty means always, and "*" any name
// that has no section of its own (a dataset or model registered by a program built on trainer).
struct Section {
  std::string path;     // "trainer", "callbacks.model_checkpoint", "model", "" for the root
  std::string variant;  // the value of <group>.name this section applies to ("cnn"), or empty
  bool closed = true;   // a key not declared here is a mistake (false: the user may add keys)
  std::string about;    // one line for the reference
  std::vector<Option> options;
};

}  // namespace trainer::options
