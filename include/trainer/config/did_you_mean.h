// "Did you mean 'x'?" suggestions for misspelt keys, resolver names and group options, so every
// "unknown name" error can point at the closest known name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainer::config {

// Edit distance (Damerau-Levenshtein, optimal string alignment: a swap of neighbours costs 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a plausible typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "Did you mean 'x'?" for the closest candidate, or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trainer::config
