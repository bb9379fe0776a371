// data=image_folder end to end: image trees written from the real Fashion-MNIST at test time
// (tests/data/images/make_images.py, with Pillow from the test Python), trained on by the real
// binary with the cnn and the resnet; the class names kept with the run, in the checkpoint and in
// the export (read back by Python's safetensors); batches that do not depend on the number of
// loader threads; and the user's mistakes: a model that disagrees with the data, a missing root,
// damaged images with on_bad_sample=error and skip.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// make_images.py's class folders, in sorted order (a label is the position here).
const std::vector<std::string> kClasses = {"ankle_boot", "bag",   "coat",    "dress",   "pullover",
                                           "sandal",     "shirt", "sneaker", "trouser", "tshirt_top"};

// Writes an image tree (make_images.py tree OUT ARGS...) into `out`; false (after a skip) when the
// test Python or its Pillow is missing.
bool make_tree(const fs::path& out, const std::vector<std::string>& args) {
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    skip_test("TRAINER_TEST_PYTHON is empty: no Pillow to write the image tree with", Skip::unexpected_in_ci);
    return false;
  }
  std::vector<std::string> argv = {python, std::string(TRAINER_SOURCE_DIR) + "/tests/data/images/make_images.py",
                                   "tree", out.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const ProcessResult made = run_process(argv);
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  return true;
}

// A short fit of a small cnn on the gray tree at `root`, plus `extra` overrides.
std::vector<std::string> fit_command(const fs::path& root, const std::string& run_dir,
                                     const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=image_folder",
                                   "data.root=" + root.string(),
                                   "data.channels=1",
                                   "data.normalize.mean=[0.286]",
                                   "data.normalize.std=[0.353]",
                                   "data.batch_size=32",
                                   "model=cnn",
                                   "model.channels=[8,16]",
                                   "model.hidden_size=32",
                                   "trainer.max_epochs=1",
                                   "trainer.enable_progress_bar=false",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// A fit with `extra` run whole (in dir/whole), and again (in dir/killed) SIGKILLed once its
// first checkpoint exists, then resumed with ckpt_path=last: the whole run's and the resumed run's
// results.
struct KilledAndResumed {
  ProcessResult whole, resumed;
};
KilledAndResumed kill_and_resume(const fs::path& tree, const fs::path& dir, const std::vector<std::string>& extra) {
  KilledAndResumed runs;
  runs.whole = run_process(fit_command(tree, (dir / "whole").string(), extra), dir.string());
  INFO(runs.whole.err);
  REQUIRE(runs.whole.exit_code == 0);
  const fs::path last = dir / "killed" / "checkpoints" / "last.ckpt";
  bool killed = false;
  const ProcessResult first = run_and_signal(
      fit_command(tree, (dir / "killed").string(), extra), dir.string(), [&] { return fs::exists(last); }, SIGKILL,
      &killed);
  REQUIRE(killed);
  CHECK(first.exit_code == 128 + SIGKILL);
  std::vector<std::string> again = extra;
  again.push_back("ckpt_path=last");
  runs.resumed = run_process(fit_command(tree, (dir / "killed").string(), again), dir.string());
  INFO(runs.resumed.err);
  REQUIRE(runs.resumed.exit_code == 0);
  CHECK(runs.resumed.err.find("resumed from") != std::string::npos);
  CHECK(largest_difference(exported_weights(dir / "whole"), exported_weights(dir / "killed")) == 0.0);
  return runs;
}

// Each "epoch N done ...; K unreadable sample(s) left out" line's K, in order.
std::vector<int> left_out_counts(const std::string& err) {
  std::vector<int> counts;
  const std::regex line("epoch [0-9]+ done[^\n]*; ([0-9]+) unreadable sample\\(s\\) left out");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator(); ++it) {
    counts.push_back(std::stoi((*it)[1]));
  }
  return counts;
}

std::string class_lines() {
  std::string text;
  for (const std::string& name : kClasses) text += name + "\n";
  return text;
}

}  // namespace

TEST_CASE("image_folder: a cnn trains on a split tree; class names kept with the run, checkpoint and export",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "40", "--split"})) return;
  const std::string run = (fs::path(dir.path()) / "run").string();

  const ProcessResult fit = run_process(fit_command(tree, run, {"trainer.max_epochs=3"}), dir.path());
  INFO(fit.out << fit.err);
  REQUIRE(fit.exit_code == 0);
  // The split layout: train/ 400 images, val/ 100, test/ 200 (make_images.py).
  CHECK(fit.err.find("data: 400 train / 100 val / 200 test samples") != std::string::npos);
  // The loader's threads decode: num_workers=auto gives them the cores on a CPU.
  CHECK(fit.err.find("worker thread(s)") != std::string::npos);
  // Ten classes of real images: well above chance (10 %) after three short epochs.
  CHECK(printed(fit.out, "test/acc") > 0.5);

  CHECK(read_file(fs::path(run) / "class_names.txt") == class_lines());
  const std::string checkpoint = read_file(fs::path(run) / "checkpoints" / "last.ckpt");
  for (const std::string& name : kClasses) CHECK(checkpoint.find("\nclass " + name + "\n") != std::string::npos);
  CHECK(checkpoint.find("\nsample_shape 1 28 28\n") != std::string::npos);

  const fs::path file = fs::path(run) / "model.safetensors";
  const ProcessResult exported = run_process(
      {TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=" + run, "export_path=" + file.string()}, dir.path());
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const std::string python = TRAINER_TEST_PYTHON;
  REQUIRE(fs::exists(file));
  const ProcessResult read = run_process({python, "-c",
                                          "import json, sys\n"
                                          "from safetensors import safe_open\n"
                                          "with safe_open(sys.argv[1], 'pt') as f:\n"
                                          "    print('\\n'.join(json.loads(f.metadata()['trainer_class_names'])))\n",
                                          file.string()});
  INFO(read.err);
  CHECK(read.exit_code == 0);
  CHECK(read.out == class_lines());

  // trainer predict on the same checkpoint: the training root's test/ split (its folders name the
  // classes, so the accuracy is known) agrees with trainer test on that split...
  const ProcessResult tested =
      run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=" + run}, dir.path());
  INFO(tested.err);
  REQUIRE(tested.exit_code == 0);
  const ProcessResult predicted =
      run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run, "predict.top_k=3"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(tested.out, "test/acc")).margin(1e-6));
  CHECK(printed(predicted.out, "predict/count") == 200);
  fs::path csv;
  for (const auto& entry : fs::directory_iterator(fs::path(run) / "eval")) {
    if (entry.path().filename().string().rfind("predict_", 0) == 0) csv = entry.path() / "predictions.csv";
  }
  REQUIRE(fs::exists(csv));
  const std::string table = read_file(csv);
  CHECK(table.rfind("sample,prediction,probability,target,top1,top1_probability,top2,top2_probability,top3,"
                    "top3_probability\n",
                    0) == 0);
  CHECK(std::count(table.begin(), table.end(), '\n') == 201);
  CHECK(table.find((tree / "test" / "ankle_boot").string()) != std::string::npos);

  // A run on a relative data.root: the evaluation reads it in the directory the run started in,
  // so a checkpoint that does not fit names the key that changed, not data.root made absolute.
  const ProcessResult relative = run_process(fit_command("photos", "relative", {"test_after_fit=false"}), dir.path());
  INFO(relative.err);
  REQUIRE(relative.exit_code == 0);
  const ProcessResult wider = run_process(
      {TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=relative", "model.hidden_size=64"}, dir.path());
  check_clean_error(wider);
  CHECK(contains(wider.err,
                 "Config keys that differ from the run that wrote it: model.hidden_size: 32 in the "
                 "checkpoint's run, 64 now."));
  CHECK_FALSE(contains(wider.err, "data.root:"));

  // ...and on a flat folder of new images (no class folders): every file, no accuracy.
  const fs::path flat = fs::path(dir.path()) / "new_photos";
  fs::create_directories(flat);
  int copied = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tree / "val")) {
    if (entry.is_regular_file() && copied < 7) fs::copy_file(entry.path(), flat / (std::to_string(copied++) + ".png"));
  }
  // docs/data.md's form: the checkpoint's path, the folder of new images.
  const ProcessResult new_photos = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=" + run + "/checkpoints/best.ckpt", "data.root=" + flat.string()},
      dir.path());
  INFO(new_photos.err);
  REQUIRE(new_photos.exit_code == 0);
  CHECK(new_photos.out.find("predict/acc") == std::string::npos);
  CHECK(new_photos.err.find("wrote 7 predictions (top 5)") != std::string::npos);

  // ...and with an unreadable file among them, left out (data.on_bad_sample=skip) in batches of 2:
  // every row is still the prediction of the file it names, as without it (a skip moved each later
  // row onto the next file's prediction, and the last file fell off the table).
  const fs::path damaged = fs::path(dir.path()) / "damaged_photos";
  fs::copy(flat, damaged);
  write_text(damaged / "2.png", "not a png");
  std::string predict_err;
  auto predictions_of = [&](const fs::path& root, const std::string& out_dir) {
    const ProcessResult predicted = run_process(
        {TRAINER_BINARY, "predict", "ckpt_path=" + run + "/checkpoints/best.ckpt", "data.root=" + root.string(),
         "data.batch_size=2", "data.on_bad_sample=skip", "hydra.run.dir=" + out_dir},
        dir.path());
    INFO(predicted.err);
    REQUIRE(predicted.exit_code == 0);
    predict_err = predicted.err;
    std::map<std::string, std::string> by_file;  // file name -> "prediction,probability"
    const CsvTable table = read_csv(predictions_under(fs::path(dir.path()) / out_dir));
    for (const auto& row : table.rows) by_file[fs::path(row.at(0)).filename().string()] = row.at(1) + "," + row.at(2);
    return by_file;
  };
  std::map<std::string, std::string> expected = predictions_of(flat, "predict_clean");
  REQUIRE(expected.size() == 7);
  expected.erase("2.png");
  CHECK(predictions_of(damaged, "predict_damaged") == expected);
  // One pass over the files: the skip is said once, with no epochs to count it in.
  CHECK(predict_err.find("data.on_bad_sample=skip: left out " + (damaged / "2.png").string()) != std::string::npos);
  CHECK(predict_err.find("counted per epoch") == std::string::npos);

  // ...and on photos of other sizes, PNG and JPEG, gray and colour, in class folders: brought to
  // the 28 x 28 the model was trained on, every one predicted, the accuracy known again.
  const fs::path mixed = fs::path(dir.path()) / "mixed";
  if (!make_tree(mixed, {"--per-class", "2", "--mixed"})) return;
  const ProcessResult resized = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run, "data.root=" + mixed.string()}, dir.path());
  INFO(resized.err);
  REQUIRE(resized.exit_code == 0);
  CHECK(resized.err.find("brought to 28 x 28, the size the checkpoint was trained on") != std::string::npos);
  CHECK(printed(resized.out, "predict/count") == 20);
  CHECK(resized.err.find("not classes of the checkpoint") == std::string::npos);
  // A class folder added since training: predicted without a known class, said, named.
  fs::create_directories(mixed / "boot");
  for (const auto& entry : fs::recursive_directory_iterator(mixed)) {
    if (!entry.is_regular_file() || entry.path().parent_path() == mixed / "boot") continue;
    fs::copy_file(entry.path(), mixed / "boot" / entry.path().filename());
    break;
  }
  const ProcessResult added = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run, "data.root=" + mixed.string()}, dir.path());
  INFO(added.err);
  REQUIRE(added.exit_code == 0);
  CHECK(printed(added.out, "predict/count") == 20);  // the accuracy's count: the boot image has no known class
  CHECK(added.err.find("holds folders that are not classes of the checkpoint (boot)") != std::string::npos);
}

// docs/data.md's second command with two depths, and the root given as '~/mixed' (quoted: Hydra's
// grammar refuses an unquoted ~; a config file may say root: ~/mixed too), which is the home folder.
TEST_CASE("image_folder: resnet sweep on mixed RGB and gray files of several sizes, imagenet augmentation",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "mixed";
  if (!make_tree(tree, {"--per-class", "8", "--mixed"})) return;
  const std::string sweep = (fs::path(dir.path()) / "sweep").string();
  const ProcessResult fit =
      run_process({TRAINER_BINARY, "fit", "data=image_folder", "data.root='~/mixed'", "data.image_size=32",
                   "data.augment=imagenet", "-m", "model=resnet", "model.depth=18,34", "model.width=8",
                   "data.batch_size=16", "trainer.max_epochs=1", "trainer.limit_train_batches=2",
                   "trainer.enable_progress_bar=false", "test_after_fit=false", "hydra.sweep.dir=" + sweep},
                  dir.path(), {"HOME=" + dir.path()});
  INFO(fit.out << fit.err);
  REQUIRE(fit.exit_code == 0);
  // Each job's log: no train/ folder, so data.val_fraction (0.1) of the 80 images holds out 8.
  const std::string log18 = read_file(fs::path(sweep) / "0" / "trainer.log");
  const std::string log34 = read_file(fs::path(sweep) / "1" / "trainer.log");
  CHECK(log18.find("data: 72 train / 8 val / 0 test samples") != std::string::npos);
  CHECK(log18.find("model: resnet18 (width 8") != std::string::npos);
  CHECK(log34.find("model: resnet34 (width 8") != std::string::npos);
  CHECK(fs::exists(fs::path(sweep) / "0" / "checkpoints" / "last.ckpt"));
  CHECK(fs::exists(fs::path(sweep) / "1" / "checkpoints" / "last.ckpt"));
}

TEST_CASE("image_folder: augmented batches do not depend on the number of loader threads", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "6"})) return;
  const std::vector<std::string> common = {"data.image_size=24", "data.augment=imagenet", "data.batch_size=8",
                                           "trainer.max_epochs=2", "test_after_fit=false"};
  auto run_with = [&](const std::string& name, const std::string& workers) {
    std::vector<std::string> extra = common;
    extra.push_back("data.num_workers=" + workers);
    const ProcessResult fit = run_process(fit_command(tree, (fs::path(dir.path()) / name).string(), extra), dir.path());
    INFO(fit.out << fit.err);
    REQUIRE(fit.exit_code == 0);
    return exported_weights(fs::path(dir.path()) / name);
  };
  const Weights in_training_thread = run_with("w0", "0");
  const Weights three_threads = run_with("w3", "3");
  CHECK(largest_difference(in_training_thread, three_threads) == 0.0);
}

TEST_CASE("image_folder: predict with a Fashion-MNIST checkpoint normalizes the images as the model was trained",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "tree";
  if (!make_tree(tree, {"--per-class", "2"})) return;
  const fs::path flat = fs::path(dir.path()) / "photos";  // the user's own images, no class folders
  fs::create_directories(flat);
  int copied = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tree)) {
    if (entry.path().extension() == ".png") fs::copy_file(entry.path(), flat / (std::to_string(copied++) + ".png"));
  }
  REQUIRE(copied == 20);
  const ProcessResult fit = run_process(
      {TRAINER_BINARY, "fit", "model=cnn", "model.channels=[8,16]", "model.hidden_size=32", "trainer.max_epochs=1",
       "trainer.limit_train_batches=20", "test_after_fit=false", "hydra.run.dir=fm"},
      dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto predict = [&](const std::string& out_dir, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {TRAINER_BINARY,
                                     "predict",
                                     "ckpt_path=fm/checkpoints/last.ckpt",
                                     "data=image_folder",
                                     "data.root=photos",
                                     "data.channels=1",
                                     "hydra.run.dir=" + out_dir};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ProcessResult result = run_process(argv, dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result;
  };
  // data=image_folder's default normalization is ImageNet's: the checkpoint's (Fashion-MNIST's
  // 0.286/0.353) is taken in its place, as the model was trained on it. A red team followed the
  // errors' advice to ImageNet's gray mean and got other classes without a word.
  const ProcessResult carried = predict("carried", {});
  CHECK(carried.err.find("data.normalize from the checkpoint's config (mean [0.286], std [0.353])") !=
        std::string::npos);
  const ProcessResult same = predict("same", {"data.normalize.mean=[0.286]", "data.normalize.std=[0.353]"});
  CHECK(same.err.find("not as trained") == std::string::npos);
  CHECK(read_file(predictions_under(fs::path(dir.path()) / "carried")) ==
        read_file(predictions_under(fs::path(dir.path()) / "same")));
  const ProcessResult other = predict("other", {"data.normalize.mean=[0.449]", "data.normalize.std=[0.226]"});
  CHECK(other.err.find("[warning] - predict: not as trained: data.normalize here is mean [0.449], std [0.226], but the "
                       "checkpoint's model was trained on inputs normalized with mean 0.286, std 0.353") !=
        std::string::npos);
}

TEST_CASE("image_folder: predict for a model of non-square images takes data.transforms.eval alone", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "wide";
  const fs::path photos = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "4"}) || !make_tree(photos, {"--per-class", "1"})) return;
  // Every training image made 20 high and 30 wide.
  const ProcessResult widened =
      run_process({TRAINER_TEST_PYTHON, "-c",
                   "import pathlib, sys\nfrom PIL import Image\nfor p in pathlib.Path(sys.argv[1]).rglob('*.png'):\n"
                   "    Image.open(p).resize((30, 20)).save(p)\n",
                   tree.string()});
  REQUIRE(widened.exit_code == 0);
  const std::string run = (fs::path(dir.path()) / "run").string();
  const ProcessResult fit = run_process(fit_command(tree, run, {"test_after_fit=false"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  // 28 x 28 photos: the error says how to bring them to 20 x 30 (not a square data.image_size).
  const std::vector<std::string> predict = {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run,
                                            "data.root=" + photos.string()};
  const ProcessResult refused = run_process(predict, dir.path());
  check_clean_error(refused);
  CHECK(refused.err.find("Give data.transforms.eval=[{resize: [20, 30]}]") != std::string::npos);
  // Following it: the evaluation steps alone decide (the training list plays no part in predict).
  std::vector<std::string> resized = predict;
  resized.push_back("data.transforms.eval=[{resize: [20, 30]}]");
  const ProcessResult done = run_process(resized, dir.path());
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  CHECK(printed(done.out, "predict/count") == 10);
  CHECK(done.err.find("image transforms: Resize(size=(20, 30))") != std::string::npos);
  // A mistyped run directory is named as such.
  const ProcessResult typo = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run + "x", "data.root=" + photos.string()},
      dir.path());
  check_clean_error(typo);
  CHECK(typo.err.find("checkpoint not found: the folder " + run + "x does not exist") != std::string::npos);
}

// docs/data.md's data.transforms command: torchvision's steps by name, for a resnet.
TEST_CASE("image_folder: data.transforms gives each split torchvision's steps by name", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "6", "--mixed"})) return;
  const std::vector<std::string> common = {TRAINER_BINARY,         "fit",
                                           "data=image_folder",    "data.root=" + tree.string(),
                                           "model=resnet",         "model.width=8",
                                           "trainer.max_epochs=1", "trainer.enable_progress_bar=false",
                                           "test_after_fit=false", "data.batch_size=16"};
  std::vector<std::string> argv = common;
  argv.insert(argv.end(), {"data.transforms.train=[{random_resized_crop: {size: 32, scale: [0.5, 1.0]}}, "
                           "horizontal_flip, {color_jitter: 0.2}]",
                           "data.transforms.eval=[{resize: 36}, {center_crop: 32}]", "hydra.run.dir=steps"});
  const ProcessResult fit = run_process(argv, dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("image transforms: train RandomResizedCrop(size=(32, 32), scale=(0.5, 1), ratio=(0.75, "
                     "1.333)) -> RandomHorizontalFlip(p=0.5) -> ColorJitter(brightness=0.2, contrast=0, "
                     "saturation=0); evaluation Resize(size=36) -> CenterCrop(size=(32, 32)); samples 3 x 32 x 32") !=
        std::string::npos);
  // The config keeps the lists as given, for evaluation and predict to reuse.
  const std::string saved = read_file(fs::path(dir.path()) / "steps" / ".hydra" / "config.yaml");
  CHECK(saved.find("random_resized_crop:") != std::string::npos);

  // Steps that end at different sizes: one size for the model, named on both sides.
  argv = common;
  argv.insert(argv.end(), {"data.transforms.train=[{random_resized_crop: 32}]", "hydra.run.dir=sizes"});
  const ProcessResult sizes = run_process(argv, dir.path());
  check_clean_error(sizes);
  CHECK(sizes.err.find("data.transforms.eval (null: data.augment=none with data.image_size=null)") !=
        std::string::npos);
  CHECK(sizes.err.find("but data.transforms.train brings it to 32 x 32: the model takes one size") !=
        std::string::npos);
  // Lists that fix no size (a shorter-side resize) take the first image's size after their steps,
  // not before them (they used to, and every batch then failed).
  const fs::path square = fs::path(dir.path()) / "square";
  if (!make_tree(square, {"--per-class", "3"})) return;
  argv = common;
  argv[3] = "data.root=" + square.string();
  argv.insert(argv.end(),
              {"data.transforms.train=[{resize: 20}]", "data.transforms.eval=[{resize: 20}]", "hydra.run.dir=unsized"});
  const ProcessResult unsized = run_process(argv, dir.path());
  INFO(unsized.err);
  CHECK(unsized.exit_code == 0);
  CHECK(unsized.err.find("samples 3 x 20 x 20") != std::string::npos);
  // An unknown step: its place and the closest name.
  argv = common;
  argv.insert(argv.end(), {"data.transforms.train=[{random_flip: 0.5}]", "hydra.run.dir=typo"});
  const ProcessResult typo = run_process(argv, dir.path());
  check_clean_error(typo);
  CHECK(typo.err.find("item 0 (random_flip): unknown transform 'random_flip'") != std::string::npos);
  // And both augment's preset and a training list: one of them would be ignored.
  argv = common;
  argv.insert(argv.end(), {"data.transforms.train=[horizontal_flip]", "data.augment=imagenet", "data.image_size=32",
                           "hydra.run.dir=both"});
  const ProcessResult both = run_process(argv, dir.path());
  check_clean_error(both);
  CHECK(both.err.find("data.augment=imagenet and data.transforms.train both say") != std::string::npos);
}

TEST_CASE("image_folder: a data-bound run says so once, naming data.num_workers and the decode rate", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "20", "--size", "384"})) return;
  // A tiny mlp fed 64 x 64 crops of 384 x 384 PNG files made on the training thread: the step
  // takes about a millisecond, decoding and resizing the batch's 8 images ten times that.
  const std::vector<std::string> fed_slowly = {
      "model=mlp",         "model.hidden_sizes=[4]", "data.image_size=64",   "data.augment=imagenet",
      "data.batch_size=8", "data.num_workers=0",     "trainer.max_epochs=2", "test_after_fit=false"};
  std::vector<std::string> argv = fit_command(tree, (fs::path(dir.path()) / "slow").string(), fed_slowly);
  argv.erase(std::find(argv.begin(), argv.end(), "model=cnn"));
  argv.erase(std::find(argv.begin(), argv.end(), "model.channels=[8,16]"));
  argv.erase(std::find(argv.begin(), argv.end(), "model.hidden_size=32"));
  const ProcessResult slow = run_process(argv, dir.path());
  INFO(slow.err);
  REQUIRE(slow.exit_code == 0);
  const std::string warning = "data-bound: the training loop waited for batches ";
  const size_t at = slow.err.find(warning);
  REQUIRE(at != std::string::npos);
  CHECK(slow.err.find(warning, at + 1) == std::string::npos);  // once a run, not every epoch
  const std::string line = slow.err.substr(at, slow.err.find('\n', at) - at);
  CHECK(line.find("% of epoch 0 (") != std::string::npos);
  CHECK(line.find("on the training thread (data.num_workers=0), making ") != std::string::npos);
  CHECK(line.find(" samples/s per thread") != std::string::npos);
  CHECK(line.find("Raise data.num_workers (0 now; data.num_workers=auto gives ") != std::string::npos);

  // Data in memory never waits on files: no such warning, whatever the share.
  const ProcessResult tensors =
      run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=256", "data.batch_size=8",
                   "model.hidden_sizes=[4]", "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=tensors"},
                  dir.path());
  INFO(tensors.err);
  REQUIRE(tensors.exit_code == 0);
  CHECK(tensors.err.find("data-bound") == std::string::npos);
}

TEST_CASE("image_folder: 2 data-parallel ranks over an uneven split with unreadable files finish together",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  // 190 images and a truncated PNG and a corrupt JPEG (--damaged): 173 training images, which no
  // batch size splits evenly over 2 ranks, and two of them unreadable, on whichever rank draws them.
  if (!make_tree(tree, {"--per-class", "19", "--damaged"})) return;
  const ProcessResult fit = run_process(fit_command(tree, (fs::path(dir.path()) / "ddp").string(),
                                                    {"trainer.devices=2", "data.batch_size=16", "trainer.max_epochs=2",
                                                     "data.on_bad_sample=skip", "test_after_fit=false"}),
                                        dir.path());
  INFO(fit.out << fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("data parallel: 2 ranks") != std::string::npos);
  CHECK(fit.err.find("epoch 1 done") != std::string::npos);
  // Each rank gets ceil(173 / 2) = 87 samples (one repeated, as DistributedSampler pads): 6 batches.
  CHECK(fit.err.find("12 steps") != std::string::npos);
  CHECK(fit.err.find("unreadable sample(s) left out") != std::string::npos);
  CHECK(fs::exists(fs::path(dir.path()) / "ddp" / "checkpoints" / "last.ckpt"));
}

TEST_CASE("image_folder: a run killed with SIGKILL mid-epoch, augmentation on, resumes to the same weights",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "20"})) return;
  // 180 training images in batches of 16: 12 steps an epoch, a checkpoint every 5.
  const std::vector<std::string> extra = {"data.image_size=24",
                                          "data.augment=imagenet",
                                          "data.batch_size=16",
                                          "trainer.max_epochs=2",
                                          "trainer.deterministic=true",
                                          "test_after_fit=false",
                                          "callbacks.model_checkpoint.save_top_k=0",
                                          "callbacks.model_checkpoint.every_n_train_steps=5"};
  kill_and_resume(tree, fs::path(dir.path()), extra);
}

TEST_CASE("image_folder: 2 ranks skipping unreadable files resume mid-epoch to the same weights and metrics",
          "[may-skip]") {
  // A skipped file shortens one rank's batch, so that rank draws fewer dropout masks than the
  // other: the ranks' random generators part ways, and a resume must give each rank its own
  // (before they were kept, every rank resumed with rank 0's; found by a red-team run).
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "20", "--damaged"})) return;
  const std::vector<std::string> extra = {"trainer.devices=2",
                                          "data.on_bad_sample=skip",
                                          "data.image_size=24",
                                          "data.augment=imagenet",
                                          "data.batch_size=16",
                                          "trainer.max_epochs=2",
                                          "trainer.deterministic=true",
                                          "trainer.log_every_n_steps=1",
                                          "test_after_fit=false",
                                          "callbacks.model_checkpoint.save_top_k=0",
                                          "callbacks.model_checkpoint.every_n_train_steps=4"};
  const KilledAndResumed runs = kill_and_resume(tree, fs::path(dir.path()), extra);
  const ProcessResult& whole = runs.whole;
  const ProcessResult& resumed = runs.resumed;
  REQUIRE(whole.err.find("unreadable sample(s) left out") != std::string::npos);
  CHECK(resumed.err.find("at epoch 0, batch 4, step 4") != std::string::npos);
  const CsvTable a = read_csv(fs::path(dir.path()) / "whole" / "metrics.csv");
  const CsvTable b = read_csv(fs::path(dir.path()) / "killed" / "metrics.csv");
  CHECK(a.last("train/loss_epoch") == b.last("train/loss_epoch"));
  CHECK(a.last("val/loss") == b.last("val/loss"));
  // Each epoch's count of the files left out: the job's (both ranks'), and after the resume the
  // epoch's whole count (it was rank 0's alone, and after a resume only what came after it).
  const std::vector<int> counted = left_out_counts(whole.err);
  REQUIRE(counted.size() == 2);
  CHECK(left_out_counts(resumed.err) == counted);
  const ProcessResult one = run_process(
      fit_command(tree, (fs::path(dir.path()) / "one").string(),
                  {"data.on_bad_sample=skip", "data.image_size=24", "data.augment=imagenet", "test_after_fit=false"}),
      dir.path());
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const std::vector<int> single = left_out_counts(one.err);
  REQUIRE(single.size() == 1);
  // The same files; 2 ranks may read one of them twice (the sample repeated to even out the ranks).
  CHECK(counted[0] >= single[0]);
  CHECK(counted[0] <= single[0] + 1);
}

TEST_CASE("image_folder: mistakes are one-paragraph errors naming the place and the fix", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path tree = fs::path(dir.path()) / "photos";
  if (!make_tree(tree, {"--per-class", "4", "--damaged"})) return;
  const std::string run = (fs::path(dir.path()) / "run").string();

  // A model whose class count disagrees with the folders: both sides named.
  const ProcessResult classes =
      run_process(fit_command(tree, run, {"model.num_classes=3", "data.on_bad_sample=skip"}), dir.path());
  check_clean_error(classes);
  CHECK(classes.err.find("model.num_classes is 3, but the data has 10 classes (the class folders of data.root)") !=
        std::string::npos);

  // data.channels=1 makes gray samples: a model that wants 3 is told so, naming both keys.
  const ProcessResult channels = run_process(fit_command(tree, run, {"model.in_channels=3"}), dir.path());
  check_clean_error(channels);
  CHECK(channels.err.find("model.in_channels is 3") != std::string::npos);
  CHECK(channels.err.find("[1, 28, 28] (1 channels, data.channels)") != std::string::npos);

  // One mean beside three stds stands for every channel, as in torchvision's Normalize (it was
  // refused once the data had loaded); two beside three are refused before the run.
  const ProcessResult broadcast =
      run_process(fit_command(tree, run + "_rgb",
                              {"data.channels=3", "data.normalize.mean=[0.5]", "data.normalize.std=[0.2,0.3,0.4]",
                               "data.on_bad_sample=skip", "test_after_fit=false"}),
                  dir.path());
  INFO(broadcast.err);
  CHECK(broadcast.exit_code == 0);
  const ProcessResult pairs =
      run_process(fit_command(tree, run + "_pairs",
                              {"data.channels=3", "data.normalize.mean=[0.5,0.4]", "data.normalize.std=[0.2,0.3,0.4]"}),
                  dir.path());
  check_clean_error(pairs);
  CHECK(pairs.err.find("2 values beside 3 in data.normalize.std; they pair up channel by channel") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(run + "_pairs"));

  // A damaged image stops the run, naming the file.
  const ProcessResult damaged = run_process(fit_command(tree, run), dir.path());
  check_clean_error(damaged);
  CHECK(
      (damaged.err.find("truncated.png") != std::string::npos || damaged.err.find("corrupt.jpg") != std::string::npos));
  CHECK(damaged.err.find("Or set data.on_bad_sample=skip to leave such images out") != std::string::npos);

  // With on_bad_sample=skip: logged once per file, left out, and the run finishes.
  const ProcessResult skipped =
      run_process(fit_command(tree, run + "_skip", {"data.on_bad_sample=skip", "data.val_fraction=0"}), dir.path());
  INFO(skipped.out << skipped.err);
  CHECK(skipped.exit_code == 0);
  CHECK(skipped.err.find("left out " + (tree / "pullover" / "truncated.png").string()) != std::string::npos);
  CHECK(skipped.err.find("left out " + (tree / "dress" / "corrupt.jpg").string()) != std::string::npos);
  CHECK(skipped.err.find("2 unreadable sample(s) left out (data.on_bad_sample=skip)") != std::string::npos);

  // Evaluating on a tree whose classes changed since training: an error, not relabelled classes.
  fs::rename(tree / "bag", tree / "zbag");
  const ProcessResult renamed = run_process(
      {TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=" + run + "_skip", "data.on_bad_sample=skip"},
      dir.path());
  check_clean_error(renamed);
  CHECK(renamed.err.find("was trained on the classes [ankle_boot, bag, coat") != std::string::npos);
  CHECK(renamed.err.find("now holds [ankle_boot, coat") != std::string::npos);
  // ...and the failed evaluation left nothing in the training run (its eval/ directory is gone).
  CHECK_FALSE((fs::exists(fs::path(run + "_skip") / "eval") && !fs::is_empty(fs::path(run + "_skip") / "eval")));

  // A root that does not exist.
  const ProcessResult missing =
      run_process(fit_command(fs::path(dir.path()) / "no_such_folder", run + "_missing"), dir.path());
  check_clean_error(missing);
  CHECK(missing.err.find("no_such_folder") != std::string::npos);
  CHECK(missing.err.find("data.root") != std::string::npos);

  // data=image_folder without data.root: the mandatory key is named before anything runs.
  const ProcessResult no_root = run_process({TRAINER_BINARY, "fit", "data=image_folder"}, dir.path());
  check_clean_error(no_root);
  CHECK(no_root.err.find("data.root") != std::string::npos);

  // A hidden folder Jupyter left among the classes is a class, as in torchvision, and said so.
  const fs::path jupyter = fs::path(dir.path()) / "jupyter";
  fs::create_directories(jupyter);
  fs::copy(tree / "coat", jupyter / "coat");
  fs::copy(tree / "coat", jupyter / ".ipynb_checkpoints");
  fs::copy(tree / "shirt", jupyter / "shirt");
  const ProcessResult hidden = run_process(fit_command(jupyter, run + "_hidden", {"test_after_fit=false"}), dir.path());
  INFO(hidden.err);
  CHECK(hidden.exit_code == 0);
  CHECK(hidden.err.find("the hidden folder '.ipynb_checkpoints' is a class, as in torchvision's ImageFolder: its 4 "
                        "images train the model as class '.ipynb_checkpoints'") != std::string::npos);

  // predict on the class tree trained on (no train/ test/ layout): its accuracy is on seen images.
  const ProcessResult seen =
      run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run + "_hidden"}, dir.path());
  INFO(seen.err);
  CHECK(seen.exit_code == 0);
  CHECK(seen.err.find("predict: data.root " + jupyter.string() + " is the folder the checkpoint was trained on") !=
        std::string::npos);
  const fs::path held_out = fs::path(dir.path()) / "held_out";
  fs::copy(jupyter, held_out, fs::copy_options::recursive);
  const ProcessResult unseen = run_process({TRAINER_BINARY, "predict", "ckpt_path=last",
                                            "hydra.run.dir=" + run + "_hidden", "data.root=" + held_out.string()},
                                           dir.path());
  INFO(unseen.err);
  CHECK(unseen.exit_code == 0);
  CHECK(unseen.err.find("is the folder the checkpoint was trained on") == std::string::npos);
}
