#include "trainer/config/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace trainer::config {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows are enough for the transposition rule.
  const size_t n = b.size();
  std::vector<size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (size_t j = 0; j <= n; ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return {};
  // A typo changes a few characters, not most of the word: allow about one edit per three
  // characters (at least one, at most three).
  const size_t limit = std::clamp<size_t>((word.size() + 1) / 3, 1, 3);
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == word) continue;
    // Case-only differences are the most likely typo of all.
    size_t distance = equal_ignoring_case(candidate, word) ? 0 : edit_distance(word, candidate);
    // Replacing every character of a short word is no typo ('x' is not a misspelt 'y').
    if (distance >= word.size() && distance > 0) continue;
    if (distance < best_distance) {
      best_distance = distance;
      best = &candidate;
    }
  }
  return best != nullptr && best_distance <= limit ? *best : std::string();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string match = closest_match(word, candidates);
  if (match.empty()) return {};
  return "Did you mean '" + match + "'?";
}

}  // namespace trainer::config
