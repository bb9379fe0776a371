#include "trainer/models/pipeline_split.h"

#include <algorithm>
#include <limits>

#include "trainer/config/did_you_mean.h"
#include "trainer/util/error.h"

namespace trainer::models {
namespace {

std::string name_list(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 1; i < names.size(); ++i) text += (text.empty() ? "" : ", ") + names[i];
  return text;
}

}  // namespace

std::vector<size_t> split_by_parameters(const std::vector<int64_t>& sizes, int stages, const std::string& model) {
  const size_t n = sizes.size();
  const auto p = static_cast<size_t>(stages);
  if (n < p) {
    throw Error(
        "trainer.pipeline.stages",
        "the " + model + " model cuts into " + std::to_string(n) + " pieces at most, not " + std::to_string(stages) +
            " stages",
        "Use trainer.pipeline.stages=" + std::to_string(std::max<size_t>(2, n)) + " or fewer, or a deeper model.");
  }
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + sizes[i];
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  // best[k][j]: the smallest largest-stage sum cutting pieces j.. into k stages.
  std::vector<std::vector<int64_t>> best(p + 1, std::vector<int64_t>(n + 1, kNone));
  best[0][n] = 0;
  for (size_t k = 1; k <= p; ++k) {
    for (size_t j = 0; j + k <= n; ++j) {
      for (size_t end = j + 1; end + (k - 1) <= n; ++end) {
        if (best[k - 1][end] == kNone) continue;
        best[k][j] = std::min(best[k][j], std::max(prefix[end] - prefix[j], best[k - 1][end]));
      }
    }
  }
  std::vector<size_t> first{0};
  size_t j = 0;
  for (size_t k = p; k > 1; --k) {
    // The longest first run that keeps the optimum.
    size_t cut = j + 1;
    for (size_t end = j + 1; end + (k - 1) <= n; ++end) {
      if (best[k - 1][end] != kNone && std::max(prefix[end] - prefix[j], best[k - 1][end]) == best[k][j]) cut = end;
    }
    first.push_back(cut);
    j = cut;
  }
  return first;
}

std::vector<size_t> split_at_names(const std::vector<std::string>& names, const std::vector<std::string>& split_points,
                                   const std::string& model) {
  std::vector<size_t> first{0};
  for (const std::string& point : split_points) {
    const auto found = std::find(names.begin(), names.end(), point);
    if (found == names.end() || found == names.begin()) {
      // Suggested from the points a stage may start at (not the first module, where none is cut).
      const std::string hint = config::did_you_mean(point, std::vector<std::string>(names.begin() + 1, names.end()));
      throw Error("trainer.pipeline.split_points",
                  found == names.begin()
                      ? "'" + point + "' is where the " + model + " model begins: the first stage starts there anyway"
                      : "'" + point + "' is not a module where the " + model + " model can be cut" +
                            (hint.empty() ? "" : " (" + hint + ")"),
                  "Name modules where a stage may start, in forward order: " + name_list(names) + ".");
    }
    const auto index = static_cast<size_t>(found - names.begin());
    if (index <= first.back()) {
      throw Error("trainer.pipeline.split_points",
                  "'" + point + "' does not come after '" + names[first.back()] + "' in the " + model +
                      " model's forward order",
                  "List the split points in forward order: " + name_list(names) + ".");
    }
    first.push_back(index);
  }
  return first;
}

}  // namespace trainer::models
