#include "trainer/util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "trainer/util/error.h"

namespace trainer {

MappedFile::MappedFile(const std::string& path, const std::string& key) : path_(path) {
  // Looked at before it is opened: opening a FIFO would wait for a writer, for ever.
  struct stat named {};
  if (::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) {
    throw Error(key, path + (S_ISDIR(named.st_mode) ? " is a directory" : " is not a regular file"),
                "Give the path of the file itself.");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    std::string hint = "Check the file's permissions.";
    if (error == ENOENT) {
      hint = "Check the path.";
      if (!path.empty() && path.front() != '/') {
        std::error_code ec;
        const std::string cwd = std::filesystem::current_path(ec).string();
        hint = "Check the path; a relative one is taken from the working directory, " + cwd +
               " (with hydra.job.chdir=true, the run's directory: '${hydra:runtime.cwd}/" + path +
               "' names the file where trainer was started).";
      }
    }
    throw Error(key, "cannot open " + path + ": " + std::strerror(error), hint);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error(key, path + " is not a regular file", "Give the path of the file itself.");
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw Error(key, "cannot map " + path + " into memory: " + std::strerror(error));
    }
    data_ = static_cast<const uint8_t*>(mapped);
  }
  ::close(fd);  // the mapping keeps the file open
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace trainer
