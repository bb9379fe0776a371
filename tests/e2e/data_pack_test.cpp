// `trainer data pack` end to end with the real binary: an image folder made at test time from
// Fashion-MNIST (its files' bytes must come back out of the shards, with their labels), the real
// Fashion-MNIST's validation split (a checkpoint validated on the shards scores what it scores on
// the IDX files), and a table (data=csv). The fit command pack prints is run as printed, and the
// mistakes a user makes get one clear error each. Skipped without the engine.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

const char* const kDataDir = "/usr/share/datasets/fashion-mnist";  // configs/paths/default.yaml

// The command pack prints on its last stdout line, run as printed by bash (with this build's
// binary for `trainer`, CHECKPOINT replaced by `checkpoint`, and `extra` words appended).
ProcessResult run_printed(const std::string& out, const std::string& extra, const std::string& cwd,
                          const std::string& checkpoint = "", const std::vector<std::string>& env = {}) {
  std::string line = out;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  line = line.substr(line.rfind('\n') + 1);
  REQUIRE(line.rfind("trainer ", 0) == 0);
  line.replace(0, 7, TRAINER_BINARY);
  const size_t placeholder = line.find("ckpt_path=CHECKPOINT");
  if (!checkpoint.empty()) {
    REQUIRE(placeholder != std::string::npos);
    line.replace(placeholder, std::string("ckpt_path=CHECKPOINT").size(), checkpoint);
  }
  return run_process({"/bin/bash", "-c", line + " " + extra}, cwd, env);
}

// Every member of the shards, extracted by GNU tar: name -> bytes.
std::map<std::string, std::string> extract(const std::vector<fs::path>& shards, const fs::path& into) {
  fs::create_directories(into);
  for (const fs::path& shard : shards) {
    const ProcessResult tar = run_process({"/usr/bin/tar", "-xf", shard.string(), "-C", into.string()});
    INFO(tar.err);
    REQUIRE(tar.exit_code == 0);
  }
  std::map<std::string, std::string> members;
  for (const auto& entry : fs::directory_iterator(into)) {
    members[entry.path().filename().string()] = read_file(entry.path());
  }
  return members;
}

std::vector<fs::path> shards_in(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tar") found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

TEST_CASE(
    "data pack: an image folder's files come out of the shards byte for byte with their labels, and the "
    "printed command trains on them",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: no Pillow to write the image folder with", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root = fs::path(dir.path()) / "photos";
  // 60 Fashion-MNIST images, PNG and JPEG, gray and RGB, several sizes, nested folders, upper-case
  // extensions.
  const ProcessResult made = run_process({python, std::string(TRAINER_SOURCE_DIR) + "/tests/data/images/make_images.py",
                                          "tree", root.string(), "--per-class", "6", "--mixed"});
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  // (bytes, label) of every image: the label is its class folder's place in name order, as ImageFolder.
  std::multiset<std::pair<std::string, std::string>> expected;
  {
    std::set<std::string> folders;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.is_directory()) folders.insert(entry.path().filename().string());
    }
    std::istringstream listing(read_file(root / "labels.txt"));
    for (std::string path, label; listing >> path >> label;) {
      const std::string folder = path.substr(0, path.find('/'));
      const auto place = std::distance(folders.begin(), folders.find(folder));
      expected.insert({read_file(root / path), std::to_string(place)});
    }
  }
  REQUIRE(expected.size() == 60);

  const std::vector<std::string> source = {
      "data=image_folder",          "data.root=" + root.string(),
      "data.val_fraction=0",        "data.channels=1",
      "data.image_size=28",         "data.normalize.mean=[0.286]",
      "data.normalize.std=[0.353]", "data.transforms.eval=[{resize: 28}, {center_crop: 28}]"};
  auto pack = [&](const std::string& run, std::vector<std::string> flags) {
    std::vector<std::string> argv = {TRAINER_BINARY, "data", "pack"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), source.begin(), source.end());
    argv.push_back("hydra.run.dir=" + run);
    return run_process(argv, dir.path());
  };
  // The README's command: at most 16 samples a shard.
  const ProcessResult packed = pack("pack", {"--maxcount", "16", "-o", "shards/train-%06d.tar"});
  INFO(packed.err);
  REQUIRE(packed.exit_code == 0);
  CHECK(packed.out.find("packed 60 samples (train split of data=image_folder) into 4 shard(s)") == 0);
  // The shards' absolute path, which works from any directory.
  CHECK(packed.out.find(": " + dir.path() + "/shards/train-{000000..000003}.tar\n") != std::string::npos);
  CHECK(packed.err.find("pack: labels (.cls) are class indices: 0=ankle_boot, 1=bag") != std::string::npos);
  const std::vector<fs::path> shards = shards_in(fs::path(dir.path()) / "shards");
  REQUIRE(shards.size() == 4);
  const std::map<std::string, std::string> members = extract(shards, fs::path(dir.path()) / "extracted");
  CHECK(members.size() == 120);  // an image and a .cls per sample
  std::multiset<std::pair<std::string, std::string>> got;
  std::vector<std::string> labels_in_order;
  for (const auto& [name, bytes] : members) {
    const std::string key = name.substr(0, name.find('.'));
    const std::string extension = name.substr(name.find('.') + 1);
    if (extension == "cls") continue;
    CHECK((extension == "png" || extension == "jpg" || extension == "jpeg"));  // lower-cased
    REQUIRE(members.count(key + ".cls") == 1);
    got.insert({bytes, members.at(key + ".cls")});
    labels_in_order.push_back(members.at(key + ".cls"));
  }
  CHECK(got == expected);
  // Shuffled from seed: the classes are mixed, not one folder after the other.
  CHECK_FALSE(std::is_sorted(labels_in_order.begin(), labels_in_order.end()));

  // --no-shuffle keeps the folder's order (class by class); --maxsize splits by bytes.
  const ProcessResult ordered =
      pack("ordered", {"--no-shuffle", "--maxsize", "20K", "-o", "ordered/s-%d.tar", "--split", "train"});
  INFO(ordered.err);
  REQUIRE(ordered.exit_code == 0);
  const std::vector<fs::path> ordered_shards = shards_in(fs::path(dir.path()) / "ordered");
  REQUIRE(ordered_shards.size() > 1);
  for (const fs::path& shard : ordered_shards) CHECK(fs::file_size(shard) <= 20000);
  std::vector<std::string> ordered_labels;
  for (const auto& [name, bytes] : extract(ordered_shards, fs::path(dir.path()) / "ordered_out")) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".cls") ordered_labels.push_back(bytes);
  }
  CHECK(ordered_labels.size() == 60);
  CHECK(std::is_sorted(ordered_labels.begin(), ordered_labels.end()));

  // The command pack printed, as printed, trains a cnn on the shards: the source's channels, size,
  // evaluation transforms and normalisation, and its class count.
  for (const char* word : {" data.channels=1", " data.image_size=28", " data.num_classes=10",
                           " \"data.transforms.eval=[{resize: 28}, {center_crop: 28}]\"",
                           " \"data.normalize.mean=[0.286]\" \"data.normalize.std=[0.353]\""}) {
    CHECK(packed.out.find(word) != std::string::npos);
  }
  const ProcessResult trained = run_printed(packed.out,
                                            "model=cnn model.channels=[4,8] model.hidden_size=16 trainer.max_epochs=1 "
                                            "trainer.enable_progress_bar=false test_after_fit=false hydra.run.dir=fit",
                                            dir.path());
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(trained.err.find("data: 60 train") != std::string::npos);
  CHECK(trained.err.find("evaluation Resize(size=28)") != std::string::npos);

  // A model trained on the folder itself names its classes: predict on the shards (which keep only
  // the indices) writes those names, as predict on the folder does.
  std::vector<std::string> on_folder = {TRAINER_BINARY,
                                        "fit",
                                        "model=cnn",
                                        "model.channels=[4,8]",
                                        "model.hidden_size=16",
                                        "trainer.max_epochs=1",
                                        "test_after_fit=false",
                                        "hydra.run.dir=named"};
  on_folder.insert(on_folder.end(), source.begin(), source.end());
  const ProcessResult named = run_process(on_folder, dir.path());
  INFO(named.err);
  REQUIRE(named.exit_code == 0);
  const ProcessResult predicted =
      run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=named", "data=webdataset",
                   "data.test_shards='" + dir.path() + "/shards/train-{000000..000003}.tar'", "data.channels=1",
                   "data.image_size=28", "data.transforms.eval=[{resize: 28}, {center_crop: 28}]",
                   "data.normalize.mean=[0.286]", "data.normalize.std=[0.353]"},
                  dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  const CsvTable predictions = read_csv(predictions_under(fs::path(dir.path()) / "named" / "eval"));
  REQUIRE(predictions.rows.size() == 60);
  std::set<std::string> classes;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory()) classes.insert(entry.path().filename().string());
  }
  for (const auto& row : predictions.rows) CHECK(classes.count(row.at(1)) == 1);  // "bag", not "1"

  // Packing again over the same shards: refused, nothing touched.
  const auto before = fs::last_write_time(shards[0]);
  const ProcessResult again = pack("again", {"--maxcount", "16", "-o", "shards/train-%06d.tar"});
  check_clean_error(again);
  CHECK(again.err.find("the first shard " + dir.path() +
                       "/shards/train-000000.tar exists already; nothing was written") != std::string::npos);
  CHECK(fs::last_write_time(shards[0]) == before);
  // A pattern without a shard number, a size that is not one, an empty split.
  const ProcessResult no_number = pack("no_number", {"-o", "out.tar"});
  check_clean_error(no_number);
  CHECK(no_number.err.find("pack.output: 'out.tar' has no shard number (%06d)") != std::string::npos);
  const ProcessResult bad_size = pack("bad_size", {"--maxsize", "12X"});
  check_clean_error(bad_size);
  CHECK(bad_size.err.find("--maxsize 12X is not a size") != std::string::npos);
  const ProcessResult empty = pack("empty", {"--split", "val"});
  check_clean_error(empty);
  CHECK(empty.err.find("the val split of data=image_folder is empty") != std::string::npos);
  CHECK(empty.err.find("data.val_fraction") != std::string::npos);

  // A file that is not an image: found when packed, as data.on_bad_sample says (the default
  // stops, naming it; skip leaves it out, says so, and the command carries the setting).
  { std::ofstream(root / "bag" / "broken.png") << "not a png"; }
  const ProcessResult bad = pack("bad", {"-o", "bad/s-%d.tar"});
  check_clean_error(bad);
  CHECK(bad.err.find((root / "bag" / "broken.png").string()) != std::string::npos);
  CHECK(bad.err.find("data.on_bad_sample=skip") != std::string::npos);
  std::vector<std::string> skipping = {TRAINER_BINARY, "data", "pack", "-o", "skip/s-%d.tar"};
  skipping.insert(skipping.end(), source.begin(), source.end());
  skipping.insert(skipping.end(), {"data.on_bad_sample=skip", "hydra.run.dir=skip"});
  const ProcessResult skipped = run_process(skipping, dir.path());
  INFO(skipped.err);
  REQUIRE(skipped.exit_code == 0);
  CHECK(skipped.out.find("packed 60 samples") == 0);
  CHECK(skipped.err.find("pack: left out " + (root / "bag" / "broken.png").string()) != std::string::npos);
  CHECK(skipped.out.find(" data.on_bad_sample=skip") != std::string::npos);
}

TEST_CASE(
    "data pack: a checkpoint validated on Fashion-MNIST's packed validation split scores what it scores on the "
    "IDX files",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  if (!fs::exists(fs::path(kDataDir) / "train-images-idx3-ubyte.gz")) {
    return skip_test(std::string(kDataDir) + " is missing: install Debian's dataset-fashion-mnist (scripts/setup.sh)",
                     Skip::unexpected_in_ci);
  }
  TempDir dir;
  const ProcessResult fit =
      run_process({TRAINER_BINARY, "fit", "trainer.max_epochs=1", "trainer.limit_train_batches=30",
                   "trainer.num_sanity_val_steps=0", "trainer.enable_progress_bar=false", "test_after_fit=false",
                   "hydra.run.dir=run"},
                  dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const ProcessResult packed =
      run_process({TRAINER_BINARY, "data", "pack", "--split", "val", "--maxcount", "2500", "-o", "val/fmnist-%03d.tar"},
                  dir.path());
  INFO(packed.err);
  REQUIRE(packed.exit_code == 0);
  CHECK(packed.out.find("packed 6000 samples (val split of data=fashion_mnist) into 3 shard(s)") == 0);
  // A validation split's command evaluates a checkpoint on it.
  CHECK(packed.out.find("\ntrainer validate ckpt_path=CHECKPOINT data=webdataset \"data.val_shards='" + dir.path() +
                        "/val/fmnist-{000..002}.tar'\"") != std::string::npos);
  CHECK(packed.out.find("\"data.normalize.mean=[0.286]\" \"data.normalize.std=[0.353]\"") != std::string::npos);
  // The 28x28 gray images as .npy of uint8 [1, 28, 28].
  const std::map<std::string, std::string> members =
      extract({fs::path(dir.path()) / "val" / "fmnist-002.tar"}, fs::path(dir.path()) / "out");
  CHECK(members.size() == 2 * 1000);
  CHECK(members.at("005999.npy").find("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 28, 28)") == 10);
  CHECK(members.at("005999.npy").size() == 128 + 784);

  const ProcessResult on_files =
      run_process({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(on_files.err);
  REQUIRE(on_files.exit_code == 0);
  // The printed command, on the same checkpoint: data=webdataset needs no training shards to validate.
  const ProcessResult validated = run_printed(packed.out, "", dir.path(), "ckpt_path=last hydra.run.dir=run");
  INFO(validated.err);
  REQUIRE(validated.exit_code == 0);
  CHECK(printed(validated.out, "val/acc") == printed(on_files.out, "val/acc"));
  CHECK(std::abs(printed(validated.out, "val/loss") - printed(on_files.out, "val/loss")) <= 1e-6);
  // Shards draw no split from the training samples: no warning about data.val_fraction.
  CHECK(validated.err.find("draw another one") == std::string::npos);
}

TEST_CASE("data pack: a table's encoded rows train from shards; what cannot be packed is refused clearly",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  {
    std::ofstream table(fs::path(dir.path()) / "t.csv");
    table << "size,colour,weight,label\n";
    for (int i = 0; i < 80; ++i) {
      table << i % 5 << "," << (i % 2 == 0 ? "red" : "blue") << "," << (i * 7) % 11 << "," << (i % 3 == 0 ? "a" : "b")
            << "\n";
    }
  }
  const std::vector<std::string> table = {"data=csv", "data.path=t.csv", "data.target=label",
                                          "data.categorical=[colour]"};
  auto run = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), TRAINER_BINARY);
    return run_process(argv, dir.path());
  };
  std::vector<std::string> pack = {"data", "pack", "-o", "rows/train-%02d.tar"};
  pack.insert(pack.end(), table.begin(), table.end());
  pack.push_back("hydra.run.dir=pack");
  const ProcessResult packed = run(pack);
  INFO(packed.err);
  REQUIRE(packed.exit_code == 0);
  CHECK(packed.out.find("packed 72 samples (train split of data=csv) into 1 shard(s)") == 0);
  // Standardised float32 rows (size, weight and the two colours one-hot): no second normalisation.
  CHECK(packed.out.find("\"data.normalize.mean=[0]\" \"data.normalize.std=[1]\" data.num_classes=2") !=
        std::string::npos);
  const std::map<std::string, std::string> members =
      extract({fs::path(dir.path()) / "rows" / "train-00.tar"}, fs::path(dir.path()) / "out");
  CHECK(members.at("000000.npy").find("{'descr': '<f4'") == 10);
  // The default output, when -o is not given: the run directory's shards/.
  std::vector<std::string> by_default = {"data", "pack", "--split", "val"};
  by_default.insert(by_default.end(), table.begin(), table.end());
  by_default.push_back("hydra.run.dir=default");
  const ProcessResult val = run(by_default);
  INFO(val.err);
  REQUIRE(val.exit_code == 0);
  CHECK(fs::exists(fs::path(dir.path()) / "default" / "shards" / "val-000000.tar"));
  CHECK(fs::exists(fs::path(dir.path()) / "default" / ".hydra" / "config.yaml"));

  const ProcessResult trained =
      run_printed(packed.out,
                  "model.hidden_sizes=[8] trainer.max_epochs=2 trainer.enable_progress_bar=false test_after_fit=false "
                  "hydra.run.dir=fit data.val_shards=" +
                      (fs::path(dir.path()) / "default" / "shards" / "val-000000.tar").string(),
                  dir.path());
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(trained.err.find("data: 72 train / 8 val") != std::string::npos);

  // A folder whose name the shell would expand ($, a space) and more shards than %01d's width: the
  // printed pattern lists each width's range, and the command, pasted, reads every shard.
  std::vector<std::string> odd = {"data", "pack", "--maxcount", "1", "-o", "odd $dir/r-%01d.tar"};
  odd.insert(odd.end(), table.begin(), table.end());
  odd.push_back("hydra.run.dir=odd");
  const ProcessResult odd_packed = run(odd);
  INFO(odd_packed.err);
  REQUIRE(odd_packed.exit_code == 0);
  CHECK(odd_packed.out.find("into 72 shard(s)") != std::string::npos);
  CHECK(odd_packed.out.find("odd $dir/r-{{0..9},{10..71}}.tar") != std::string::npos);
  CHECK(fs::exists(fs::path(dir.path()) / "odd $dir" / "r-71.tar"));
  const ProcessResult odd_trained =
      run_printed(odd_packed.out,
                  "model.hidden_sizes=[8] trainer.max_epochs=1 trainer.enable_progress_bar=false test_after_fit=false "
                  "data.shuffle_buffer=0 hydra.run.dir=odd_fit",
                  dir.path());
  INFO(odd_trained.err);
  REQUIRE(odd_trained.exit_code == 0);
  CHECK(odd_trained.err.find("data: 72 train") != std::string::npos);
  // Braces or quotes in the output would break the printed pattern: refused before reading.
  std::vector<std::string> braces = {"data", "pack", "-o", "x{1}/r-%d.tar"};
  braces.insert(braces.end(), table.begin(), table.end());
  const ProcessResult brace_refused = run(braces);
  check_clean_error(brace_refused);
  CHECK(brace_refused.err.find("pack.output: 'x{1}/r-%d.tar' holds '{'") != std::string::npos);

  // A regression's numbers, tar shards already, a typo in the action, a missing action.
  std::vector<std::string> regression = pack;
  regression.push_back("data.task=regression");
  regression.push_back("data.target=weight");
  regression.push_back("data.categorical=[colour,label]");
  regression[3] = "regression/r-%d.tar";
  const ProcessResult refused = run(regression);
  check_clean_error(refused);
  CHECK(refused.err.find("data.task: a regression's targets are numbers") != std::string::npos);
  CHECK(!fs::exists(fs::path(dir.path()) / "regression"));
  const ProcessResult shards = run({"data", "pack", "data=webdataset", "data.shards=x.tar", "hydra.run.dir=w"});
  check_clean_error(shards);
  CHECK(shards.err.find("data=webdataset is tar shards already") != std::string::npos);
  const ProcessResult typo = run({"data", "pak", "data=csv"});
  check_clean_error(typo);
  CHECK(typo.err.find("unknown action 'pak' of trainer data. Did you mean `trainer data pack data=csv`?") !=
        std::string::npos);
  const ProcessResult bare = run({"data"});
  check_clean_error(bare);
  CHECK(bare.err.find("trainer data needs an action") != std::string::npos);
}

TEST_CASE(
    "data=webdataset counts each shard once: later runs take the counts from the shard index while the shard is "
    "unchanged, and count a rewritten shard again",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  if (!fs::exists(fs::path(kDataDir) / "train-images-idx3-ubyte.gz")) {
    return skip_test(std::string(kDataDir) + " is missing: install Debian's dataset-fashion-mnist (scripts/setup.sh)",
                     Skip::unexpected_in_ci);
  }
  TempDir dir;
  const std::vector<std::string> cache = {"TRAINER_CACHE_DIR=" + dir.path() + "/cache"};
  // Fashion-MNIST's 6,000 validation images, in shards of 2,500 (2,500 + 2,500 + 1,000), and again
  // in shards of 1,000.
  std::string printed;
  for (const char* count : {"2500", "1000"}) {
    const ProcessResult packed =
        run_process({TRAINER_BINARY, "data", "pack", "--split", "val", "--maxcount", count, "-o",
                     std::string("by") + count + "/s-%d.tar", std::string("hydra.run.dir=pack") + count},
                    dir.path(), cache);
    INFO(packed.err);
    REQUIRE(packed.exit_code == 0);
    if (printed.empty()) printed = packed.out;
  }
  // The pack wrote what it knows into the index: the printed shards (as training shards here) open
  // without being read through, the first time.
  std::string as_training = printed;
  as_training.replace(as_training.find("trainer validate ckpt_path=CHECKPOINT"),
                      std::string("trainer validate ckpt_path=CHECKPOINT").size(), "trainer fit");
  as_training.replace(as_training.find("data.val_shards="), std::string("data.val_shards=").size(), "data.shards=");
  const ProcessResult from_pack = run_printed(as_training,
                                              "trainer.max_steps=2 trainer.limit_val_batches=0 "
                                              "trainer.enable_progress_bar=false test_after_fit=false "
                                              "hydra.run.dir=from_pack",
                                              dir.path(), "", cache);
  INFO(from_pack.err);
  REQUIRE(from_pack.exit_code == 0);
  CHECK(from_pack.err.find("data.shards: 6000 samples in 3 shard(s), listed in") != std::string::npos);
  CHECK(from_pack.err.find("from the shard index") != std::string::npos);
  const auto fit = [&](const std::string& run, const std::vector<std::string>& more = {}) {
    std::vector<std::string> argv = {TRAINER_BINARY,
                                     "fit",
                                     "data=webdataset",
                                     "data.shards='by2500/s-{0..2}.tar'",
                                     "data.normalize.mean=[0.286]",
                                     "data.normalize.std=[0.353]",
                                     "trainer.max_steps=2",
                                     "trainer.limit_val_batches=0",
                                     "trainer.enable_progress_bar=false",
                                     "test_after_fit=false",
                                     "hydra.run.dir=" + run};
    argv.insert(argv.end(), more.begin(), more.end());
    return run_process(argv, dir.path(), cache);
  };
  const ProcessResult first = fit("first");
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("data.shards: 6000 samples in 3 shard(s), listed in") != std::string::npos);
  CHECK(first.err.find("from the shard index") == std::string::npos);
  const ProcessResult second = fit("second");
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.find("data.shards: 6000 samples in 3 shard(s), listed in") != std::string::npos);
  CHECK(second.err.find("from the shard index (" + dir.path() + "/cache/shard-index/") != std::string::npos);
  // A validation shard that is also a training shard, a shard listed twice, and an image key set
  // for tensor samples: each said.
  const ProcessResult overlap =
      fit("overlap", {"data.val_shards=[by2500/s-2.tar,by2500/s-2.tar]", "data.channels=1", "data.image_size=32"});
  INFO(overlap.err);
  REQUIRE(overlap.exit_code == 0);
  CHECK(overlap.err.find("data.val_shards: lists by2500/s-2.tar more than once") != std::string::npos);
  CHECK(overlap.err.find("by2500/s-2.tar is also a training shard (data.shards)") != std::string::npos);
  CHECK(overlap.err.find("data.shards: the samples are tensors (1 x 28 x 28), which reach the model as they are: "
                         "data.channels=1, data.image_size=32 apply to images and do nothing here") !=
        std::string::npos);
  // Resuming on the same shards goes on.
  const ProcessResult resumed = fit("first", {"ckpt_path=last", "trainer.max_steps=4"});
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  // The first shard rewritten in place with 1,000 samples: counted again, and the run sees 4,500.
  fs::copy_file(fs::path(dir.path()) / "by1000" / "s-0.tar", fs::path(dir.path()) / "by2500" / "s-0.tar",
                fs::copy_options::overwrite_existing);
  const ProcessResult third = fit("third");
  INFO(third.err);
  REQUIRE(third.exit_code == 0);
  CHECK(third.err.find("data.shards: 4500 samples in 3 shard(s), listed in") != std::string::npos);
  CHECK(third.err.find("(2 shard(s) from the index, 1 counted)") != std::string::npos);
  // Resuming the first run on the changed shards would stream from a place it never left: refused,
  // naming the shard, and the run's checkpoint untouched.
  const fs::path last = fs::path(dir.path()) / "first" / "checkpoints" / "last.ckpt";
  REQUIRE(fs::exists(last));
  const auto before = fs::last_write_time(last);
  const ProcessResult changed = fit("first", {"ckpt_path=last", "trainer.max_steps=6"});
  check_clean_error(changed);
  CHECK(changed.err.find("by2500/s-0.tar: is not the shard the checkpoint being resumed was trained on: shard 0 of "
                         "data.shards held 2500 samples") != std::string::npos);
  CHECK(changed.err.find("1000 (") != std::string::npos);
  CHECK(fs::last_write_time(last) == before);
  // Another shard of as many samples and bytes in its place (shard 1's copy): told apart by its
  // contents.
  fs::copy_file(fs::path(dir.path()) / "by2500" / "s-1.tar", fs::path(dir.path()) / "by2500" / "s-0.tar",
                fs::copy_options::overwrite_existing);
  const ProcessResult swapped = fit("first", {"ckpt_path=last", "trainer.max_steps=6"});
  check_clean_error(swapped);
  CHECK(swapped.err.find("by2500/s-0.tar: is not the shard the checkpoint being resumed was trained on: shard 0 of "
                         "data.shards has as many samples and bytes as then (2500, ") != std::string::npos);
  CHECK(fs::last_write_time(last) == before);
}
