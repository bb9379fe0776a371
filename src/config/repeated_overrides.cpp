#include "trainer/config/repeated_overrides.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

namespace trainer::config {
namespace {

// The values as a shell's brace expansion writes them: a shared prefix and suffix around parts of
// digits (train-000000.tar, train-000001.tar, ...), shown again as prefix{first..last}suffix.
std::string brace_pattern(const std::vector<std::string>& values) {
  if (values.size() < 2) return {};
  std::string prefix = values.front();
  std::string suffix = values.front();
  for (const std::string& v : values) {
    size_t p = 0;
    while (p < prefix.size() && p < v.size() && prefix[p] == v[p]) ++p;
    prefix.resize(p);
    size_t s = 0;
    while (s < suffix.size() && s < v.size() && suffix[suffix.size() - 1 - s] == v[v.size() - 1 - s]) ++s;
    suffix = suffix.substr(suffix.size() - s);
  }
  // The shared parts stop at the digits: train-00000{0..2}.tar is shown as train-{000000..000002}.tar.
  while (!prefix.empty() && std::isdigit(static_cast<unsigned char>(prefix.back()))) prefix.pop_back();
  while (!suffix.empty() && std::isdigit(static_cast<unsigned char>(suffix.front()))) suffix.erase(0, 1);
  std::vector<std::string> middles;
  for (const std::string& v : values) {
    if (v.size() < prefix.size() + suffix.size()) return {};
    std::string middle = v.substr(prefix.size(), v.size() - prefix.size() - suffix.size());
    if (middle.empty() ||
        !std::all_of(middle.begin(), middle.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return {};
    }
    middles.push_back(std::move(middle));
  }
  // As bash writes {first..last}: consecutive numbers, ascending.
  for (size_t i = 1; i < middles.size(); ++i) {
    if (middles[i].size() > 18 || middles[i - 1].size() > 18 ||
        std::stoll(middles[i]) != std::stoll(middles[i - 1]) + 1) {
      return {};
    }
  }
  return prefix + "{" + middles.front() + ".." + middles.back() + "}" + suffix;
}

}  // namespace

std::vector<std::string> repeated_override_warnings(const std::vector<Override>& overrides) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Override*>> by_key;
  std::map<std::string, bool> side_by_side;  // every repeat right after the one before, as a shell expands
  for (size_t index = 0; index < overrides.size(); ++index) {
    const Override& o = overrides[index];
    if (o.kind != OverrideKind::kChange || o.is_sweep() || o.package || !o.has_value) continue;
    auto& list = by_key[o.key];
    if (list.empty()) {
      order.push_back(o.key);
      side_by_side[o.key] = true;
    } else if (list.back() != &overrides[index - 1]) {
      side_by_side[o.key] = false;
    }
    list.push_back(&o);
  }
  std::vector<std::string> warnings;
  for (const std::string& key : order) {
    const auto& list = by_key[key];
    if (list.size() < 2) continue;
    std::string given;
    std::vector<std::string> values;
    for (const Override* o : list) {
      given += (given.empty() ? "" : ", ") + o->text;
      values.push_back(o->text.substr(o->text.find('=') + 1));
    }
    std::string text = key + " is set " + std::to_string(list.size()) + " times on the command line (" + given +
                       "): the last one, " + list.back()->text + ", wins, as in Hydra.";
    if (const std::string pattern = side_by_side[key] ? brace_pattern(values) : std::string(); !pattern.empty()) {
      // Numbers from a pattern (seed={1..3}, lr=0.{1..2}) were meant as one job each: quoted, the
      // pattern would be a string.
      const bool numbers = std::all_of(values.begin(), values.end(), [](const std::string& v) {
        char* end = nullptr;
        (void)std::strtod(v.c_str(), &end);
        return !v.empty() && *end == '\0';
      });
      std::string listed;
      for (const std::string& v : values) listed += (listed.empty() ? "" : ",") + v;
      text += numbers ? " If the shell expanded a brace pattern (" + key + "=" + pattern +
                            ") into these, meaning one job per value, sweep them in one override: -m " + key + "=" +
                            listed + "."
                      : " If the shell expanded a brace pattern into these, quote it to pass it whole: \"" + key +
                            "='" + pattern + "'\".";
    }
    warnings.push_back(std::move(text));
  }
  return warnings;
}

}  // namespace trainer::config
