#include "trainer/util/make_directories.h"

#include <errno.h>
#include <sys/stat.h>

namespace trainer {

MakeDirectoriesFailure make_directories(const std::string& directory) {
  size_t end = 0;
  while (end != std::string::npos) {
    end = directory.find('/', end + 1);
    const std::string prefix = directory.substr(0, end);
    if (prefix.empty() || ::mkdir(prefix.c_str(), 0777) == 0) continue;
    const int mkdir_errno = errno;
    struct stat info {};
    if (::stat(prefix.c_str(), &info) == 0) {
      if (S_ISDIR(info.st_mode)) continue;
      return {prefix, ENOTDIR};
    }
    return {prefix, mkdir_errno};
  }
  return {};
}

}  // namespace trainer
