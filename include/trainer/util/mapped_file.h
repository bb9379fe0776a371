// A file mapped read-only into memory: opening costs no RAM; pages are read from disk (or the page
// cache) when they are first touched, and can be dropped again by the kernel under pressure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace trainer {

class MappedFile {
 public:
  // Maps the whole of `path`. Throws trainer::Error at `key` (the config key that named the file)
  // when it is missing, not a regular file or cannot be mapped; an empty file maps to no bytes.
  MappedFile(const std::string& path, const std::string& key);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace trainer
