// How the engine, the data and the models read their options: through the declarations
// (option.h), so the default is the declared one, a value is checked as the schema check checks
// it (value_check.h) and a key that is not declared cannot be read (a programmer error, caught by
// the tests). Each read is recorded: TRAINER_OPTION_READS=<file> appends the keys a job read,
// which is how the tests prove that every declared key is read by the code that honours it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/options/option.h"

namespace trainer::options {

// Lightning's limit_*_batches: a share of the epoch (float) or a number of batches (int).
struct Limit {
  bool is_fraction = true;
  double fraction = 1.0;
  int64_t count = 0;
};

class OptionReader {
 public:
  // `view` is the section (its prefix is the section's path: "trainer", "model"); `variant` the
  // group's name for sections declared per variant (model.name, data.name, ...). `path` names the
  // section when the view's prefix does not (a section's own file loaded as the root).
  explicit OptionReader(config::ConfigView view, std::string variant = {}, std::optional<std::string> path = {});

  // The value of `key` (relative to the view, possibly dotted: "grad_scaler.init_scale") as a T:
  // the declared default when absent. T may be std::optional<...> for nullable options. Throws
  // trainer::Error naming the key, where its value came from and what is accepted.
  template <typename T>
  T get(std::string_view key) const {
    const config::Node* value = checked(key, false);
    if (value == nullptr) return T{};
    return config::ConfigConverter<T>::convert(*value, view_.full_path(key));
  }

  // For options whose default the code computes (declared `.computed()`): `fallback` when the
  // key is absent or null.
  template <typename T>
  T get_or(std::string_view key, T fallback) const {
    const config::Node* value = checked(key, true);
    if (value == nullptr || value->is_null()) return fallback;
    return config::ConfigConverter<T>::convert(*value, view_.full_path(key));
  }

  // An int that may also be given as a bool (fast_dev_run: true is 1, false 0).
  int64_t count(std::string_view key) const;
  // A choice's name ("" for null); an int value reads as its text (precision=16).
  std::string choice(std::string_view key) const;
  // A duration in seconds (nullopt for null).
  std::optional<double> seconds(std::string_view key) const;
  // A list of steps (Type::kSteps), its items as given; nullptr for null.
  const config::Node* steps(std::string_view key) const;
  // A limit_*_batches value.
  Limit limit(std::string_view key) const;
  // An int that may be one of its declared words instead (num_workers: auto): the word, or "".
  std::string word(std::string_view key) const;
  // A list of strings that may be given as one string (.or_one_text()); empty for null.
  std::vector<std::string> texts(std::string_view key) const;
  // True when this section's declarations have `key` (a dataset's section, for instance, declares
  // only the keys that dataset has).
  bool declares(std::string_view key) const;
  // True when the key is present with a non-null value.
  bool given(std::string_view key) const;
  // A view of a nested section (trainer.grad_scaler), read with its own declarations.
  OptionReader sub(std::string_view key) const;

  // "trainer.max_epochs (override 'trainer.max_epochs=5')": the key and where its value came from.
  std::string where(std::string_view key) const;
  const config::ConfigView& view() const { return view_; }

 private:
  // The resolved, checked value, or the declared default when absent (nullptr: computed, or a
  // nullable option whose default is null and T has no null).
  const config::Node* checked(std::string_view key, bool computed) const;
  const Option& declared(std::string_view key) const;

  config::ConfigView view_;
  std::string variant_;
  std::string path_;  // the section's path in the job config
};

// Every key read so far in this process, as "<section path>[<variant>].<key>" (the variant only
// for sections that have one).
std::vector<std::string> keys_read();
// Appends keys_read() to the file named by TRAINER_OPTION_READS, when it is set.
void write_keys_read();

}  // namespace trainer::options
