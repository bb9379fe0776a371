// Whether two paths name one file (the same device and inode: through links, `./` and other
// spellings too), for the warnings that a test split is the training data.
#pragma once

#include <string>

namespace trainer {

// True when both paths exist and are the same file; false otherwise (either missing included).
bool same_file(const std::string& a, const std::string& b);

}  // namespace trainer
