// Where a path lies against another, as the file system resolves both: absolute, symbolic links
// followed where they exist, `.` and `..` folded; a part that does not exist yet (a directory to
// be made, a sweep moved away) is compared as written. For the checks that keep a command out of
// another run's files and that tell a moved sweep from one in place.
#pragma once

#include <filesystem>

namespace trainer {

// Whether `path` is `root` or lies under it.
bool lies_within(const std::filesystem::path& path, const std::filesystem::path& root);

// Whether `a` and `b` name one place (either may not exist yet).
bool same_place(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace trainer
