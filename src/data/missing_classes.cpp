#include "trainer/data/missing_classes.h"

namespace trainer::data {

std::optional<std::string> missing_classes_warning(const std::string& key, const std::string& path,
                                                   const std::vector<bool>& seen) {
  std::vector<int64_t> missing;
  for (size_t k = 0; k < seen.size(); ++k) {
    if (!seen[k]) missing.push_back(static_cast<int64_t>(k));
  }
  if (missing.empty()) return std::nullopt;
  std::string listed;
  for (size_t i = 0; i < missing.size() && i < 5; ++i) listed += (i == 0 ? "" : ", ") + std::to_string(missing[i]);
  if (missing.size() > 5) listed += ", ... (" + std::to_string(missing.size()) + " in all)";
  const auto classes = static_cast<int64_t>(seen.size());
  return key + ": the labels of " + path + " run up to " + std::to_string(classes - 1) + ", but class" +
         (missing.size() == 1 ? " " : "es ") + listed + (missing.size() == 1 ? " has" : " have") +
         " no sample, so the model gets " + std::to_string(classes) + " outputs (the largest label + 1) of which " +
         std::to_string(missing.size()) + (missing.size() == 1 ? " never trains" : " never train") +
         ". If the labels start at 1 or skip values, map them to 0 .. K-1 (numpy: numpy.unique(labels, "
         "return_inverse=True)[1]); if those classes are meant, set data.num_classes to say so";
}

}  // namespace trainer::data
