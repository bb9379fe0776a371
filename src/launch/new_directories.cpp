#include "trainer/launch/new_directories.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace trainer::launch {

NewDirectories::NewDirectories(const std::string& run_dir) : run_dir_(fs::absolute(run_dir).lexically_normal()) {
  std::error_code ec;
  for (fs::path dir = run_dir_; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (fs::exists(dir, ec) || ec) break;
    made_.push_back(dir.string());
  }
}

bool NewDirectories::remove_if_only(const std::vector<std::string>& records) const {
  if (made_.empty() || made_.front() != run_dir_) return false;  // it was there before: not ours to remove
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(run_dir_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
    const std::string relative = fs::relative(it->path(), run_dir_, ec).string();
    if (!it->is_regular_file(ec) || std::find(records.begin(), records.end(), relative) == records.end()) return false;
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
