// Class indices with no sample: labels counted as the largest + 1 classes (data=tensors, data=csv
// with whole-number labels) give such a class an output that never trains, usually because the
// labels start at 1 or skip values. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainer::data {

// The warning for labels whose classes 0 .. seen.size() - 1 include some never seen (`seen[k]`:
// class k has a sample), naming `key` and `path`; nullopt when every class has one.
std::optional<std::string> missing_classes_warning(const std::string& key, const std::string& path,
                                                   const std::vector<bool>& seen);

}  // namespace trainer::data
