#include "trainer/image/image_folder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "trainer/util/error.h"

namespace trainer::image {
namespace {

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string extension_list() {
  std::string out;
  for (const auto& ext : image_extensions()) out += (out.empty() ? "" : " ") + ext;
  return out;
}

struct Entry {
  std::string name;
  bool is_dir = false;  // stat() through symlinks says directory
  dev_t dev = 0;
  ino_t ino = 0;
};

// The entries of `dir` except . and .., in the order readdir gives. A directory that cannot be
// opened or read is an error (torchvision's os.walk skips it silently, losing its images).
std::vector<Entry> read_directory(const std::string& dir, const std::string& where) {
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) {
    throw Error(where, "cannot read the folder '" + dir + "': " + std::generic_category().message(errno),
                "Check that it exists and that this user may list it (ls -ld '" + dir + "').");
  }
  std::vector<Entry> entries;
  errno = 0;
  while (const dirent* item = ::readdir(handle)) {
    const std::string name = item->d_name;
    if (name == "." || name == "..") continue;
    Entry entry;
    entry.name = name;
    // A regular file needs no stat() (a million of them on a network file system take minutes);
    // links and entries of unknown type are stat()ed through, as os.scandir's is_dir() and
    // os.walk(followlinks=True) do: a dangling link is a file here, as there.
    const unsigned char type = item->d_type;
    if (type == DT_DIR || type == DT_LNK || type == DT_UNKNOWN) {
      struct stat info {};
      if (::stat(join(dir, name).c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
        entry.is_dir = true;
        entry.dev = info.st_dev;
        entry.ino = info.st_ino;
      }
    }
    entries.push_back(std::move(entry));
    errno = 0;
  }
  const int read_error = errno;
  ::closedir(handle);
  if (read_error != 0) {
    throw Error(where, "cannot read the folder '" + dir + "': " + std::generic_category().message(read_error));
  }
  return entries;
}

struct Folder {
  std::string path;
  std::vector<std::string> images;  // file names with an image extension, sorted
};

// Every folder below `dir` (itself included), each with its image file names. `ancestors` holds the
// (device, inode) of the folders on the way down, so that a symlink back up is found.
void walk(const std::string& dir, std::vector<std::pair<dev_t, ino_t>>& ancestors, std::vector<Folder>& out,
          const std::string& where) {
  Folder folder;
  folder.path = dir;
  for (const Entry& entry : read_directory(dir, where)) {
    if (!entry.is_dir) {
      if (has_image_extension(entry.name)) folder.images.push_back(entry.name);
      continue;
    }
    const std::pair<dev_t, ino_t> id{entry.dev, entry.ino};
    const std::string child = join(dir, entry.name);
    if (std::find(ancestors.begin(), ancestors.end(), id) != ancestors.end()) {
      throw Error(where, "the folder '" + child + "' is a symlink to a folder that contains it, a loop",
                  "Remove the link or point it outside the tree (find -L '" + dir + "' -samefile '" + child +
                      "' shows where it leads).");
    }
    ancestors.push_back(id);
    walk(child, ancestors, out, where);
    ancestors.pop_back();
  }
  std::sort(folder.images.begin(), folder.images.end());
  out.push_back(std::move(folder));
}

// The folders below `dir` in the order sorted(os.walk(dir)) gives: by path string (byte order,
// which for UTF-8 names is Python's code-point order).
std::vector<Folder> sorted_walk(const std::string& dir, const std::string& where) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    throw Error(where, "the folder '" + dir + "' does not exist (" + std::generic_category().message(errno) + ")");
  }
  std::vector<std::pair<dev_t, ino_t>> ancestors{{info.st_dev, info.st_ino}};
  std::vector<Folder> folders;
  walk(dir, ancestors, folders, where);
  std::sort(folders.begin(), folders.end(), [](const Folder& a, const Folder& b) { return a.path < b.path; });
  return folders;
}

void require_directory(const std::string& root, const std::string& where) {
  struct stat info {};
  if (::stat(root.c_str(), &info) != 0) {
    throw Error(where,
                "the image folder '" + root + "' does not exist (" + std::generic_category().message(errno) + ")",
                "Set " + where + " to a folder laid out as <root>/<class>/<image> (torchvision's ImageFolder).");
  }
  if (!S_ISDIR(info.st_mode)) {
    throw Error(where, "'" + root + "' is a file, not a folder",
                "Set " + where + " to a folder laid out as <root>/<class>/<image>.");
  }
}

}  // namespace

const std::vector<std::string>& image_extensions() {
  static const std::vector<std::string> extensions{".jpg", ".jpeg", ".png",  ".ppm", ".bmp",
                                                   ".pgm", ".tif",  ".tiff", ".webp"};
  return extensions;
}

bool has_image_extension(std::string_view file_name) {
  const std::string lower = lower_ascii(file_name);
  return std::any_of(image_extensions().begin(), image_extensions().end(), [&](const std::string& ext) {
    return lower.size() >= ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0;
  });
}

ImageFolder scan_image_folder(const std::string& root, const std::string& where,
                              const std::optional<std::vector<std::string>>& classes) {
  require_directory(root, where);
  std::vector<std::string> found;
  for (const Entry& entry : read_directory(root, where)) {
    if (entry.is_dir) found.push_back(entry.name);
  }
  std::sort(found.begin(), found.end());

  ImageFolder folder;
  folder.root = root;
  if (classes) {
    for (const std::string& name : found) {
      if (std::find(classes->begin(), classes->end(), name) == classes->end()) {
        throw Error(where, "the class folder '" + join(root, name) + "' is not one of the training classes",
                    "Every class of a val/ or test/ split must also be a folder of train/; rename it, or add '" + name +
                        "' to train/ with its images.");
      }
    }
    folder.classes = *classes;
  } else {
    if (found.empty()) {
      throw Error(where, "no class folder in '" + root + "'",
                  "Put each class's images in a folder of its own: " + join(root, "<class>/<image>") +
                      " (torchvision's ImageFolder layout); the folder names are the class names.");
    }
    folder.classes = found;
  }

  std::vector<std::string> empty;
  for (size_t index = 0; index < folder.classes.size(); ++index) {
    const std::string class_dir = join(root, folder.classes[index]);
    if (!std::binary_search(found.begin(), found.end(), folder.classes[index])) continue;  // split lacks it
    const size_t before = folder.files.size();
    for (const Folder& sub : sorted_walk(class_dir, where)) {
      for (const std::string& name : sub.images) {
        folder.files.push_back(join(sub.path, name));
        folder.labels.push_back(static_cast<int64_t>(index));
      }
    }
    if (folder.files.size() == before) empty.push_back(class_dir);
  }
  if (!empty.empty() && !classes) {
    std::string list;
    for (const auto& dir : empty) list += (list.empty() ? "'" : ", '") + dir + "'";
    throw Error(where,
                "no image in the class folder" + std::string(empty.size() > 1 ? "s " : " ") + list +
                    " (image files end in " + extension_list() + ", in any case)",
                "Add images there or remove the folder: every class folder is a class, and a class without "
                "samples cannot be learned.");
  }
  if (folder.files.empty()) {
    throw Error(where, "no image in '" + root + "' (image files end in " + extension_list() + ", in any case)",
                "Put the images in " + join(root, "<class>/") + ".");
  }
  return folder;
}

ImageFolderSplits scan_image_folder_splits(const std::string& root, const std::string& where) {
  require_directory(root, where);
  ImageFolderSplits splits;
  const std::string train_dir = join(root, "train");
  struct stat info {};
  // The split layout is a root whose sub-folders are exactly train/ and maybe val/ and test/
  // (hidden ones, .ipynb_checkpoints/, aside). A root with train/ among other folders is a class
  // tree (a class may be called "train"), unless val/ or test/ is there too: then it is a split
  // layout with extra folders, an error rather than the test images trained on as a class. A root
  // whose folders all look like split names but are not exactly these (Train/, valid/) is an error
  // rather than ten quiet classes or a split left out.
  std::vector<std::string> folders;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    std::error_code kind;
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(kind) && name[0] != '.') folders.push_back(name);
  }
  std::sort(folders.begin(), folders.end());
  auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  bool exact = std::find(folders.begin(), folders.end(), "train") != folders.end();
  bool split_like = !folders.empty();
  for (const std::string& name : folders) {
    if (name != "train" && name != "val" && name != "test") exact = false;
    const std::string l = lower(name);
    if (l != "train" && l != "training" && l != "val" && l != "valid" && l != "validation" && l != "dev" &&
        l != "test" && l != "testing" && l != "eval") {
      split_like = false;
    }
  }
  const auto has = [&](const char* name) { return std::find(folders.begin(), folders.end(), name) != folders.end(); };
  if (!exact && has("train") && (has("val") || has("test"))) {
    std::string others;
    for (const std::string& name : folders) {
      if (name != "train" && name != "val" && name != "test") others += (others.empty() ? "" : ", ") + name + "/";
    }
    throw Error(where,
                "'" + root + "' holds train/ and " + (has("val") ? "val/" : "test/") + " beside " + others +
                    ": a split layout holds only train/, val/ and test/, and as a class tree every folder, "
                    "the test images too, would become a class",
                "Move " + others + " out of " + root +
                    " (or into train/ as a class); if these folders really are "
                    "classes, put them one level down, in train/.");
  }
  if (!exact && split_like) {
    std::string listed;
    for (const std::string& name : folders) listed += (listed.empty() ? "" : ", ") + name + "/";
    throw Error(where,
                "'" + root + "' holds " + listed +
                    ": that looks like a train/validation/test layout, but only folders named exactly train/, val/ "
                    "and test/ are read as splits (these would become classes)",
                "Rename them to train/, val/ and test/; or, if they really are classes, add the class folders one "
                "level down.");
  }
  if (!exact) {
    splits.train = scan_image_folder(root, where);
    return splits;
  }
  splits.split_layout = true;
  splits.train = scan_image_folder(train_dir, where);
  for (const char* name : {"val", "test"}) {
    const std::string dir = join(root, name);
    if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) continue;
    ImageFolder split = scan_image_folder(dir, where, splits.train.classes);
    (std::string(name) == "val" ? splits.val : splits.test) = std::move(split);
  }
  return splits;
}

std::vector<std::string> list_image_files(const std::string& root, const std::string& where) {
  require_directory(root, where);
  std::vector<std::string> files;
  for (const Folder& folder : sorted_walk(root, where)) {
    for (const std::string& name : folder.images) files.push_back(join(folder.path, name));
  }
  if (files.empty()) {
    throw Error(where, "no image file below '" + root + "' (image files end in " + extension_list() + ", in any case)",
                "Point " + where + " at a folder of images (nested folders are searched too).");
  }
  return files;
}

}  // namespace trainer::image
