// Named factories: what `logger.<name>` and `callbacks.<name>` in the config pick. The built-ins
// are added by the owner of each registry; users add their own from their binary with the
// TRAINER_REGISTER_* macros (see metric_logger.h, callback.h).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/did_you_mean.h"
#include "trainer/util/error.h"

namespace trainer::engine {

template <typename Factory>
class Registry {
 public:
  // `kind` names the things registered ("logger", "callback") in messages.
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Throws trainer::Error when `name` is empty or taken, or `factory` is empty.
  void add(const std::string& name, Factory factory) {
    if (name.empty() || !factory) {
      throw Error("register " + kind_, "a " + kind_ + " needs a name and a factory",
                  "Pass a non-empty name and a function that builds it.");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!factories_.emplace(name, std::move(factory)).second) {
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
    for (const auto& entry : factories_) out.push_back(entry.first);
    return out;
  }

  // The factory for `name`; an unknown name throws trainer::Error at `where` listing the known
  // names with a did-you-mean suggestion.
  Factory get(const std::string& name, const std::string& where) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = factories_.find(name);
    if (found != factories_.end()) return found->second;
    std::vector<std::string> known;
    std::string list;
    for (const auto& entry : factories_) {
      known.push_back(entry.first);
      list += (list.empty() ? "" : ", ") + entry.first;
    }
    std::string hint = config::did_you_mean(name, known);
    throw Error(where, "unknown " + kind_ + " '" + name + "'" + (hint.empty() ? "" : " (" + hint + ")"),
                "Known: " + list + ". A C++ program can add its own with TRAINER_REGISTER_" + upper(kind_) +
                    " before calling trainer::run_cli.");
  }

 private:
  static std::string upper(std::string text) {
    for (char& c : text) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return text;
  }

  std::string kind_;
  mutable std::mutex mutex_;
  std::map<std::string, Factory> factories_;
};

}  // namespace trainer::engine

#define TRAINER_ENGINE_CONCAT_INNER(a, b) a##b
#define TRAINER_ENGINE_CONCAT(a, b) TRAINER_ENGINE_CONCAT_INNER(a, b)
