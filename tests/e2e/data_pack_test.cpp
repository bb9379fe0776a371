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

// The words of the command pack prints on its last stdout line, as a shell would split them (its
// one quoted word, "data.shards='...'", loses the shell's quotes and keeps Hydra's).
std::vector<std::string> printed_command(const std::string& out) {
  std::string line = out;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  line = line.substr(line.rfind('\n') + 1);
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) {
    if (word.size() >= 2 && word.front() == '"' && word.back() == '"') word = word.substr(1, word.size() - 2);
    words.push_back(word);
  }
  REQUIRE(words.size() > 3);
  REQUIRE(words[0] == "trainer");
  words[0] = TRAINER_BINARY;
  return words;
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
      "data=image_folder",  "data.root=" + root.string(),  "data.val_fraction=0",       "data.channels=1",
      "data.image_size=28", "data.normalize.mean=[0.286]", "data.normalize.std=[0.353]"};
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
  CHECK(packed.out.find(": shards/train-{000000..000003}.tar\n") != std::string::npos);
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

  // The command pack printed, as printed, trains a cnn on the shards.
  std::vector<std::string> fit = printed_command(packed.out);
  CHECK(std::find(fit.begin(), fit.end(), "data.channels=1") != fit.end());
  CHECK(std::find(fit.begin(), fit.end(), "data.image_size=28") != fit.end());
  CHECK(std::find(fit.begin(), fit.end(), "data.num_classes=10") != fit.end());
  for (const char* extra : {"model=cnn", "model.channels=[4,8]", "model.hidden_size=16", "trainer.max_epochs=1",
                            "trainer.enable_progress_bar=false", "test_after_fit=false", "hydra.run.dir=fit"}) {
    fit.push_back(extra);
  }
  const ProcessResult trained = run_process(fit, dir.path());
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(trained.err.find("data: 60 train") != std::string::npos);

  // Packing again over the same shards: refused, nothing touched.
  const auto before = fs::last_write_time(shards[0]);
  const ProcessResult again = pack("again", {"--maxcount", "16", "-o", "shards/train-%06d.tar"});
  check_clean_error(again);
  CHECK(again.err.find("the first shard shards/train-000000.tar exists already; nothing was written") !=
        std::string::npos);
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
  CHECK(packed.out.find("\"data.val_shards='val/fmnist-{000..002}.tar'\"") != std::string::npos);
  CHECK(packed.out.find("data.normalize.mean=[0.286] data.normalize.std=[0.353]") != std::string::npos);
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
  // The printed overrides, on the same checkpoint: data=webdataset needs no training shards to validate.
  std::vector<std::string> on_shards = printed_command(packed.out);
  on_shards[1] = "validate";
  on_shards.push_back("ckpt_path=last");
  on_shards.push_back("hydra.run.dir=run");
  const ProcessResult validated = run_process(on_shards, dir.path());
  INFO(validated.err);
  REQUIRE(validated.exit_code == 0);
  CHECK(printed(validated.out, "val/acc") == printed(on_files.out, "val/acc"));
  CHECK(std::abs(printed(validated.out, "val/loss") - printed(on_files.out, "val/loss")) <= 1e-6);
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
  CHECK(packed.out.find("data.normalize.mean=[0] data.normalize.std=[1] data.num_classes=2") != std::string::npos);
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

  std::vector<std::string> fit = printed_command(packed.out);
  for (const char* extra : {"model.hidden_sizes=[8]", "trainer.max_epochs=2", "trainer.enable_progress_bar=false",
                            "test_after_fit=false", "hydra.run.dir=fit"}) {
    fit.push_back(extra);
  }
  fit.push_back("data.val_shards=" + (fs::path(dir.path()) / "default" / "shards" / "val-000000.tar").string());
  const ProcessResult trained = run_process(fit, dir.path());
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(trained.err.find("data: 72 train / 8 val") != std::string::npos);

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
