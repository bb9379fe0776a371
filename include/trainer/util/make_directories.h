// mkdir -p with POSIX calls only (code linked beside the torch wheel's libtorch calls it; see
// engine/posix_files.h for why not std::filesystem), reporting which part failed and why, so that
// each caller words its own error.
#pragma once

#include <string>

namespace trainer {

struct MakeDirectoriesFailure {
  std::string prefix;  // the part that could not be made
  int error = 0;       // its errno (ENOTDIR: it exists and is not a directory)
};

// Makes `directory` and its missing parents; an existing directory is fine whatever mkdir said
// (EEXIST, or EACCES/EROFS above it). Returns `error == 0` on success, else the part that failed.
MakeDirectoriesFailure make_directories(const std::string& directory);

}  // namespace trainer
