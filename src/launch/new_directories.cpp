#include "trainer/launch/new_directories.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace trainer::launch {

NewDirectories::NewDirectories(const std::string& run_dir) : run_dir_(fs::absolute(run_dir).lexically_normal()) {
  std::error_code ec;
  for (fs::path dir = run_dir_; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (fs::exists(dir, ec) || ec) break;
    made_.push_back(dir.string());
  }
}

bool NewDirectories::holds_no_result(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return false;
  if (size == 0) return true;
  const std::string name = fs::path(path).filename().string();
  std::ifstream in(path, std::ios::binary);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0) {
    std::string header, row;
    return std::getline(in, header) && !std::getline(in, row);
  }
  if (name.rfind("events.out.tfevents.", 0) == 0) {
    // A TFRecord: 8 bytes of length (little-endian), 4 of its CRC, the data, 4 of the data's CRC.
    unsigned char length[8] = {};
    if (!in.read(reinterpret_cast<char*>(length), sizeof(length))) return false;
    std::uintmax_t data = 0;
    for (int i = 7; i >= 0; --i) data = (data << 8) | length[i];
    return size == data + 16;
  }
  return false;
}

bool NewDirectories::remove_if_no_results(const std::vector<std::string>& records) const {
  if (made_.empty() || made_.front() != run_dir_) return false;  // it was there before: not ours to remove
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(run_dir_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
    const std::string relative = fs::relative(it->path(), run_dir_, ec).string();
    if (!it->is_regular_file(ec)) return false;
    if (std::find(records.begin(), records.end(), relative) == records.end() && !holds_no_result(it->path().string())) {
      return false;
    }
  }
  if (ec) return false;
  fs::remove_all(run_dir_, ec);
  if (ec) return false;
  for (size_t i = 1; i < made_.size(); ++i) {
    if (!fs::is_empty(made_[i], ec) || ec || !fs::remove(made_[i], ec)) break;  // another job's files keep it
  }
  return true;
}

}  // namespace trainer::launch
