// Small file helpers on POSIX calls for code linked to LibTorch. The 2.11 wheel's libtorch.so
// exports its own unversioned copies of std::filesystem's functions; a binary linked against it
// binds std::filesystem calls to those copies, which crashed (remove_all jumped to address 0).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace trainer::engine::posix {

inline bool exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

inline std::string parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// mkdir -p; returns false if a directory could not be created.
inline bool make_directories(const std::string& path) {
  if (path.empty() || exists(path)) return true;
  if (!make_directories(parent(path))) return false;
  return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

inline void remove_file(const std::string& path) { ::unlink(path.c_str()); }

}  // namespace trainer::engine::posix
