// Named factories: what `model.name`, `data.name`, `logger.<name>` and `callbacks.<name>` in the
// config pick. One template for the four registries (models, datasets, loggers, callbacks): the
// owner of each adds its built-ins inside its accessor (static registrars in a static library
// would be dropped by the linker); users add their own from their program with the
// TRAINER_REGISTER_* macros, which expand to TRAINER_REGISTRY_ADD below. Torch-free and
// thread-safe (users register from static initialisers of several files).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/did_you_mean.h"
#include "trainer/util/error.h"

namespace trainer::config {

template <typename Factory>
class Registry {
 public:
  // What add() does with a name that is already registered.
  enum class Taken { kRefuse, kReplace };

  // `kind` names the things registered in messages ("model"); `macro` is the TRAINER_REGISTER_*
  // macro an unknown name's error points users to.
  Registry(std::string kind, std::string macro, Taken taken = Taken::kRefuse)
      : kind_(std::move(kind)), macro_(std::move(macro)), taken_(taken) {}

  // Throws trainer::Error when `name` is empty, `factory` is empty, or (kRefuse) `name` is taken.
  void add(const std::string& name, Factory factory) {
    if (name.empty()) {
      throw Error("register " + kind_, "a " + kind_ + " name must not be empty", "Give the " + kind_ + " a name.");
    }
    if (!factory) {
      throw Error("register " + kind_, "the factory for " + kind_ + " '" + name + "' is empty",
                  "Pass a function that builds the " + kind_ + ".");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (taken_ == Taken::kReplace) {
      factories_[name] = std::move(factory);
    } else if (!factories_.emplace(name, std::move(factory)).second) {
      throw Error("register " + kind_, "a " + kind_ + " named '" + name + "' is already registered",
                  "Register yours under another name.");
    }
  }

  bool contains(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return factories_.count(name) != 0;
  }

  // Sorted.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    out.reserve(factories_.size());
    for (const auto& entry : factories_) out.push_back(entry.first);
    return out;
  }

  // The factory for `name`; an unknown name throws unknown(name, where).
  Factory get(const std::string& name, const std::string& where) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = factories_.find(name);
      if (found != factories_.end()) return found->second;
    }
    throw unknown(name, where);
  }

  // The error for a name nobody registered, at `where` (the config key that named it): the known
  // names, the closest one, and how a program adds its own.
  Error unknown(const std::string& name, const std::string& where) const {
    const std::vector<std::string> known = names();
    std::string list;
    for (const std::string& entry : known) list += (list.empty() ? "" : ", ") + entry;
    const std::string hint = did_you_mean(name, known);
    return Error(where, "unknown " + kind_ + " '" + name + "'",
                 (hint.empty() ? std::string() : hint + " ") + "Known " + kind_ + "s: " + list +
                     ". A C++ program adds its own with " + macro_ + " before calling trainer::run_cli.");
  }

 private:
  std::string kind_;
  std::string macro_;
  Taken taken_;
  mutable std::mutex mutex_;
  std::map<std::string, Factory> factories_;
};

}  // namespace trainer::config

#define TRAINER_REGISTRY_CONCAT_INNER(a, b) a##b
#define TRAINER_REGISTRY_CONCAT(a, b) TRAINER_REGISTRY_CONCAT_INNER(a, b)

// At namespace scope in a user's program (not in a static library, whose unreferenced objects the
// linker drops). Variadic, so a lambda with commas in its body can be passed directly.
#define TRAINER_REGISTRY_ADD(registry, name, ...)                                                \
  [[maybe_unused]] static const bool TRAINER_REGISTRY_CONCAT(trainer_registered_, __COUNTER__) = \
      ((registry).add((name), __VA_ARGS__), true)
