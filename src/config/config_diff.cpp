#include "trainer/config/config_diff.h"

#include "trainer/config/python_str.h"

namespace trainer::config {
namespace {

constexpr const char* kAbsent = "(absent)";

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

void compare(const Node* before, const Node* after, const std::string& path, std::vector<ValueDifference>& out) {
  if (before != nullptr && after != nullptr && before->is_map() && after->is_map()) {
    for (const Node::Entry& entry : before->entries()) {
      compare(&entry.value, after->find(entry.key), join(path, entry.key), out);
    }
    for (const Node::Entry& entry : after->entries()) {
      if (before->find(entry.key) == nullptr) compare(nullptr, &entry.value, join(path, entry.key), out);
    }
    return;
  }
  if (before != nullptr && after != nullptr && *before == *after) return;
  out.push_back(
      {path, before != nullptr ? python_str(*before) : kAbsent, after != nullptr ? python_str(*after) : kAbsent});
}

}  // namespace

std::vector<ValueDifference> config_differences(const Node& before, const Node& after) {
  std::vector<ValueDifference> out;
  compare(&before, &after, "", out);
  return out;
}

}  // namespace trainer::config
