#include "trainer/util/lies_within.h"

namespace fs = std::filesystem;

namespace trainer {
namespace {

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path full = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) full = fs::absolute(path, ec);
  full = full.lexically_normal();
  // "a/b/" and "a/b" are one place: drop the empty last part a trailing '/' leaves.
  if (!full.has_filename() && full.has_parent_path() && full != full.root_path()) full = full.parent_path();
  return full;
}

}  // namespace

bool lies_within(const fs::path& path, const fs::path& root) {
  const fs::path p = resolved(path);
  const fs::path r = resolved(root);
  auto pi = p.begin();
  for (auto ri = r.begin(); ri != r.end(); ++ri, ++pi) {
    if (pi == p.end() || *pi != *ri) return false;
  }
  return true;
}

bool same_place(const fs::path& a, const fs::path& b) { return resolved(a) == resolved(b); }

}  // namespace trainer
