// The list of samples torchvision's ImageFolder builds from a directory tree, built the same way:
// classes are the root's sub-directories in sorted order (a class's index is its position),
// samples are every file with an image extension below each class folder, folders walked in
// sorted path order and files sorted within each folder, symlinks followed. Also the split layout
// (root/train, root/val, root/test) and the flat listing `trainer predict` reads. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::image {

// The extensions torchvision's ImageFolder accepts, lower case with the dot.
const std::vector<std::string>& image_extensions();

// True when `file_name`, lower-cased, ends with one of image_extensions() (".JPG" counts, "jpg"
// without a dot does not).
bool has_image_extension(std::string_view file_name);

struct ImageFolder {
  std::string root;                  // the folder as given (paths below start with it)
  std::vector<std::string> classes;  // class names; a label is an index into this list
  std::vector<std::string> files;    // one path per sample: root/class/.../file
  std::vector<int64_t> labels;       // the sample's class index, parallel to `files`
};

// Scans `root` as ImageFolder does. `classes`, when given, is the class list to use (a val/ or
// test/ split takes train/'s): a class folder of `root` not in it is an error, and a class of it
// without a folder simply has no samples here. Without `classes`, every class folder must hold at
// least one image. Throws trainer::Error, naming the path and the fix, when `root` is missing or
// not a directory, holds no class folder, a class folder holds no image, a folder cannot be
// read, or symlinks form a loop. `where` names the config key the root came from.
ImageFolder scan_image_folder(const std::string& root, const std::string& where,
                              const std::optional<std::vector<std::string>>& classes = std::nullopt);

// The split layout: a root holding a train/ folder has its splits in train/, val/ and test/ (the
// latter two optional); any other root is one training set.
struct ImageFolderSplits {
  ImageFolder train;
  std::optional<ImageFolder> val;   // root/val when it exists
  std::optional<ImageFolder> test;  // root/test when it exists
  bool split_layout = false;        // root held train/
};
ImageFolderSplits scan_image_folder_splits(const std::string& root, const std::string& where);

// Every image file below `root` (a folder of images, flat or nested), in the same sorted walk
// order, for prediction on unlabelled files. Throws trainer::Error when there is none.
std::vector<std::string> list_image_files(const std::string& root, const std::string& where);

}  // namespace trainer::image
