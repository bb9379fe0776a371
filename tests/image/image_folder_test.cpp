#include "trainer/image/image_folder.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

#include "skip_test.h"
#include "temp_dir.h"
#include "test_process.h"

namespace fs = std::filesystem;
using trainer::image::has_image_extension;
using trainer::image::list_image_files;
using trainer::image::scan_image_folder;
using trainer::image::scan_image_folder_splits;
using trainer::testing::command_output;
using trainer::testing::python_has;
using trainer::testing::shell_quote;
using trainer::testing::TempDir;
using trainer::testing::test_python;

namespace {

void touch(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "x";  // the scan never decodes: contents do not matter
}

// The tree of docs/data.md's ordering rules: nested folders whose names sort differently by path
// than depth-first ("x y" against "x/"), upper-case and double extensions, ignored files, a symlinked
// folder and file, a name with a space, a hidden file, and a class reached through a symlink.
void make_tree(const std::string& root, const std::string& outside) {
  touch(root + "/cat/b.png");
  touch(root + "/cat/a.JPG");
  touch(root + "/cat/x/2.jpeg");
  touch(root + "/cat/x y/1.webp");
  touch(root + "/cat/x/deeper/0.bmp");
  touch(root + "/cat/notes.txt");
  touch(root + "/cat/png");       // no dot: not an image
  touch(root + "/cat/.h.tif");    // hidden, still an image to torchvision
  touch(root + "/cat/c.tar.gz");  // ignored
  touch(root + "/dog/Z.PPM");
  touch(root + "/dog/a b.pgm");
  touch(root + "/dog/10.TIFF");
  touch(outside + "/linked/in.png");
  fs::create_directory_symlink(outside + "/linked", root + "/dog/link");
  fs::create_symlink(root + "/dog/Z.PPM", root + "/dog/zz.png");
  touch(outside + "/bird/only.jpg");
  fs::create_directory_symlink(outside + "/bird", root + "/bird");
  touch(root + "/README.md");  // a file at the root is not a class
}

std::vector<std::string> relative(const std::vector<std::string>& files, const std::string& root) {
  std::vector<std::string> out;
  for (const auto& file : files) out.push_back(file.substr(root.size() + 1));
  return out;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const trainer::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("image extensions are torchvision's, matched case-insensitively at the end", "[image]") {
  for (const char* name :
       {"a.jpg", "a.JPEG", "b.Png", "c.ppm", "d.bmp", "e.pgm", "f.tif", "g.TIFF", "h.webp", ".jpg", "x.tar.png"}) {
    CHECK(has_image_extension(name));
  }
  for (const char* name : {"a.gif", "jpg", "a.jpg.txt", "a.jpgx", "a.", "", "a.j pg"}) {
    CHECK_FALSE(has_image_extension(name));
  }
}

TEST_CASE("classes are sorted folder names and samples follow torchvision's sorted walk", "[image]") {
  TempDir temp("trainer-image-folder");
  const std::string root = temp.path + "/data", outside = temp.path + "/elsewhere";
  make_tree(root, outside);
  const auto folder = scan_image_folder(root, "data.root");
  CHECK(folder.classes == std::vector<std::string>{"bird", "cat", "dog"});
  // Folders in path order: "cat/x" < "cat/x y" < "cat/x/deeper" (' ' < '/'), so "x y" comes between
  // "x" and its sub-folder, not after both as a depth-first walk would give; files sort by name
  // within a folder (upper case first).
  CHECK(relative(folder.files, root) == std::vector<std::string>{
                                            "bird/only.jpg",
                                            "cat/.h.tif",
                                            "cat/a.JPG",
                                            "cat/b.png",
                                            "cat/x/2.jpeg",
                                            "cat/x y/1.webp",
                                            "cat/x/deeper/0.bmp",
                                            "dog/10.TIFF",
                                            "dog/Z.PPM",
                                            "dog/a b.pgm",
                                            "dog/zz.png",
                                            "dog/link/in.png",
                                        });
  CHECK(folder.labels == std::vector<int64_t>{0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2});
  // A trailing slash changes nothing but the prefix.
  CHECK(scan_image_folder(root + "/", "data.root").files.size() == folder.files.size());
}

TEST_CASE("the same classes and samples as torchvision's ImageFolder on the same tree", "[image][python]") {
  TempDir temp("trainer-image-folder");
  const std::string root = temp.path + "/data", outside = temp.path + "/elsewhere";
  make_tree(root, outside);
  const auto folder = scan_image_folder(root, "data.root");
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  int status = -1;
  if (!python_has(python, "torchvision")) {
    return trainer::testing::skip_test("torchvision comparison: no TRAINER_TEST_PYTHON with torchvision",
                                       trainer::testing::Skip::unexpected_in_ci);
  }
  const std::string script =
      "import sys, torchvision\n"
      "d = torchvision.datasets.ImageFolder(sys.argv[1], loader=lambda p: p)\n"
      "print('\\n'.join(d.classes))\n"
      "print('--')\n"
      "for path, label in d.samples: print(f'{label} {path}')\n";
  const std::string output =
      command_output(shell_quote(python) + " -c " + shell_quote(script) + " " + shell_quote(root) + " 2>&1", status);
  INFO(output);
  REQUIRE(status == 0);
  std::ostringstream mine;
  for (const auto& name : folder.classes) mine << name << "\n";
  mine << "--\n";
  for (size_t i = 0; i < folder.files.size(); ++i) mine << folder.labels[i] << " " << folder.files[i] << "\n";
  CHECK(mine.str() == output);
}

TEST_CASE("a Fashion-MNIST image tree: the same samples and labels as torchvision's ImageFolder", "[image][python]") {
  const std::string python = test_python(TRAINER_TEST_PYTHON);
  if (!python_has(python, "torchvision")) {
    return trainer::testing::skip_test("torchvision comparison: no TRAINER_TEST_PYTHON with torchvision",
                                       trainer::testing::Skip::unexpected_in_ci);
  }
  TempDir temp("trainer-image-folder");
  int status = -1;
  const std::string make = shell_quote(python) + " " +
                           shell_quote(std::string(TRAINER_SOURCE_DIR) + "/tests/data/images/make_images.py") +
                           " tree " + shell_quote(temp.path) + " --split --mixed --damaged --per-class 8 2>&1";
  INFO(command_output(make, status));
  REQUIRE(status == 0);
  const auto splits = scan_image_folder_splits(temp.path, "data.root");
  REQUIRE(splits.split_layout);
  REQUIRE(splits.test);
  // Sorted folder names, not Fashion-MNIST's label order: ankle_boot is class 0 here.
  CHECK(splits.train.classes.front() == "ankle_boot");
  CHECK(splits.train.classes.size() == 10);
  const std::string script =
      "import sys, torchvision\n"
      "d = torchvision.datasets.ImageFolder(sys.argv[1], loader=lambda p: p)\n"
      "for path, label in d.samples: print(f'{label} {path}')\n";
  for (const auto* split : {&splits.train, &*splits.test}) {
    const std::string output =
        command_output(shell_quote(python) + " -c " + shell_quote(script) + " " + shell_quote(split->root), status);
    REQUIRE(status == 0);
    std::ostringstream mine;
    for (size_t i = 0; i < split->files.size(); ++i) mine << split->labels[i] << " " << split->files[i] << "\n";
    CHECK(mine.str() == output);
  }
  // The damaged files have image extensions, so they are samples (decoding refuses them later);
  // README.txt and thumbs.db are not.
  const auto& files = splits.train.files;
  CHECK(std::count_if(files.begin(), files.end(), [](const std::string& f) {
          return f.find("truncated.png") != std::string::npos || f.find("corrupt.jpg") != std::string::npos;
        }) == 2);
  CHECK(std::none_of(files.begin(), files.end(),
                     [](const std::string& f) { return f.find("README") != std::string::npos; }));
}

TEST_CASE("train/, val/ and test/ folders are the splits, with train/'s classes", "[image]") {
  TempDir temp("trainer-image-folder");
  const std::string root = temp.path;
  touch(root + "/train/b/1.png");
  touch(root + "/train/a/1.png");
  touch(root + "/train/c/1.png");
  touch(root + "/val/c/2.png");  // val holds only some classes: their indices are train/'s
  touch(root + "/test/a/3.png");
  touch(root + "/test/b/3.png");
  auto splits = scan_image_folder_splits(root, "data.root");
  CHECK(splits.split_layout);
  CHECK(splits.train.classes == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(splits.val);
  CHECK(splits.val->classes == splits.train.classes);
  CHECK(splits.val->labels == std::vector<int64_t>{2});
  REQUIRE(splits.test);
  CHECK(splits.test->labels == std::vector<int64_t>{0, 1});

  fs::remove_all(root + "/test");
  splits = scan_image_folder_splits(root, "data.root");
  CHECK_FALSE(splits.test);

  touch(root + "/val/dog/1.png");
  const std::string message = error_of([&] { scan_image_folder_splits(root, "data.root"); });
  CHECK(message.find("data.root") != std::string::npos);
  CHECK(message.find("'" + root + "/val/dog' is not one of the training classes") != std::string::npos);

  // Without train/, the root is one training set.
  TempDir flat("trainer-image-folder");
  touch(flat.path + "/a/1.png");
  touch(flat.path + "/val/1.png");  // a class named val, then
  splits = scan_image_folder_splits(flat.path, "data.root");
  CHECK_FALSE(splits.split_layout);
  CHECK(splits.train.classes == std::vector<std::string>{"a", "val"});

  // train/ among other folders: a class tree in which one class is called train.
  TempDir vehicles("trainer-image-folder");
  touch(vehicles.path + "/bus/1.png");
  touch(vehicles.path + "/car/1.png");
  touch(vehicles.path + "/train/freight/1.png");
  splits = scan_image_folder_splits(vehicles.path, "data.root");
  CHECK_FALSE(splits.split_layout);
  CHECK(splits.train.classes == std::vector<std::string>{"bus", "car", "train"});

  // Split-like names that are not exactly train/val/test: an error, not three classes.
  TempDir almost("trainer-image-folder");
  touch(almost.path + "/Train/a/1.png");
  touch(almost.path + "/valid/a/1.png");
  const std::string almost_message = error_of([&] { scan_image_folder_splits(almost.path, "data.root"); });
  CHECK(almost_message.find("holds Train/, valid/: that looks like a train/validation/test layout") !=
        std::string::npos);
  CHECK(almost_message.find("Rename them to train/, val/ and test/") != std::string::npos);

  // train/ and test/ beside another folder: a split layout with an extra folder, an error rather
  // than a class tree whose classes are train, test and unlabeled (the test images trained on).
  TempDir extra("trainer-image-folder");
  touch(extra.path + "/train/a/1.png");
  touch(extra.path + "/test/a/2.png");
  touch(extra.path + "/unlabeled/misc/3.png");
  const std::string extra_message = error_of([&] { scan_image_folder_splits(extra.path, "data.root"); });
  CHECK(extra_message.find("holds train/ and test/ beside unlabeled/: a split layout holds only train/, val/ and "
                           "test/") != std::string::npos);
  CHECK(extra_message.find("Move unlabeled/ out of " + extra.path) != std::string::npos);

  // A hidden folder beside the splits (a notebook's checkpoints) is not a class of the root.
  fs::remove_all(extra.path + "/unlabeled");
  touch(extra.path + "/.ipynb_checkpoints/x.txt");
  splits = scan_image_folder_splits(extra.path, "data.root");
  CHECK(splits.split_layout);
  CHECK(splits.train.classes == std::vector<std::string>{"a"});
}

TEST_CASE("a tree without images, an empty class or a loop is an error naming the path and the fix", "[image]") {
  TempDir temp("trainer-image-folder");
  const std::string root = temp.path;
  std::string message = error_of([&] { scan_image_folder(root + "/missing", "data.root"); });
  CHECK(message.find("data.root") != std::string::npos);
  CHECK(message.find("'" + root + "/missing' does not exist") != std::string::npos);

  message = error_of([&] { scan_image_folder(root, "data.root"); });
  CHECK(message.find("no class folder in '" + root + "'") != std::string::npos);
  CHECK(message.find("<class>/<image>") != std::string::npos);

  touch(root + "/a/1.png");
  fs::create_directories(root + "/b/sub");
  touch(root + "/b/sub/notes.txt");
  message = error_of([&] { scan_image_folder(root, "data.root"); });
  CHECK(message.find("no image in the class folder '" + root + "/b'") != std::string::npos);
  CHECK(message.find(".jpg .jpeg .png") != std::string::npos);

  fs::remove_all(root + "/b");
  fs::create_directory_symlink(root + "/a", root + "/a/again");
  message = error_of([&] { scan_image_folder(root, "data.root"); });
  CHECK(message.find("'" + root + "/a/again' is a symlink to a folder that contains it") != std::string::npos);
  fs::remove(root + "/a/again");

  touch(root + "/a/locked/2.png");
  ::chmod((root + "/a/locked").c_str(), 0);
  if (::geteuid() != 0) {  // root reads it anyway
    message = error_of([&] { scan_image_folder(root, "data.root"); });
    CHECK(message.find("cannot read the folder '" + root + "/a/locked'") != std::string::npos);
  }
  ::chmod((root + "/a/locked").c_str(), 0755);

  touch(root + "/file.png");
  message = error_of([&] { scan_image_folder(root + "/file.png", "data.root"); });
  CHECK(message.find("is a file, not a folder") != std::string::npos);
}

TEST_CASE("prediction lists every image below a folder, flat or nested, in the same order", "[image]") {
  TempDir temp("trainer-image-folder");
  touch(temp.path + "/b.png");
  touch(temp.path + "/a.jpg");
  touch(temp.path + "/sub/c.webp");
  touch(temp.path + "/sub/skip.txt");
  CHECK(relative(list_image_files(temp.path, "data.root"), temp.path) ==
        std::vector<std::string>{"a.jpg", "b.png", "sub/c.webp"});
  TempDir empty("trainer-image-folder");
  CHECK(error_of([&] { list_image_files(empty.path, "data.root"); }).find("no image file below") != std::string::npos);
}
