// The real trainer binary fits the MLP on the real Fashion-MNIST training set (Debian's
// dataset-fashion-mnist, found through the default data=fashion_mnist / paths.data_dir), and
// `trainer test` of the checkpoint it wrote reaches a stated accuracy on the real 10,000-image test
// set: a short fit that learns, not only one that runs.
//
// The fit: the default mlp (784-256-128-10, Adam lr 1e-3), one epoch cut to its first 150 batches
// of 128 (19,200 of the 54,000 training images), 5 validation batches, no test after the fit; then
// `trainer test ckpt_path=<run>/checkpoints/last.ckpt` on the whole test set.
// Measured on the 2-core development machine (Debian's LibTorch 1.13, shared with other builds,
// load average 8 to 11), fit + test with these settings:
//   seed 1: test/acc 0.8209 (88 s), seed 2: 0.8267 (102 s), seed 3: 0.8241 (107 s);
//   100 batches instead of 150: 0.8043; the whole epoch (422 batches): 0.8441 (286 s).
// The threshold, 0.78, leaves four points of margin below the lowest; chance is 0.10, and an MLP
// that learned only the class frequencies or a few of the classes stays far below it.
//
// Without the dataset the test fails where CI=true (CI installs it: scripts/setup.sh) and reports
// itself skipped elsewhere (skip_test, docs/testing.md).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

constexpr double kMinTestAccuracy = 0.78;
const char* const kDataDir = "/usr/share/datasets/fashion-mnist";  // configs/paths/default.yaml

// The four files of Debian's dataset-fashion-mnist that data=fashion_mnist reads; "" when all are there.
std::string missing_dataset_file() {
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                           "t10k-labels-idx1-ubyte.gz"}) {
    const fs::path path = fs::path(kDataDir) / name;
    if (!fs::exists(path)) return path.string();
  }
  return "";
}

}  // namespace

TEST_CASE("a short fit on the real Fashion-MNIST reaches the stated test accuracy", "[fashion_mnist][may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string missing = missing_dataset_file();
  if (!missing.empty()) {
    return skip_test(missing + " is missing: install Debian's dataset-fashion-mnist (scripts/setup.sh)",
                     Skip::unexpected_in_ci);
  }
  TempDir dir;
  const std::string run = (fs::path(dir.path()) / "run").string();
  auto fit = run_process({TRAINER_BINARY, "fit", "data=fashion_mnist", "model=mlp", "seed=1", "trainer.max_epochs=1",
                          "trainer.limit_train_batches=150", "trainer.limit_val_batches=5", "test_after_fit=false",
                          "hydra.run.dir=" + run},
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path last = fs::path(run) / "checkpoints" / "last.ckpt";
  REQUIRE(fs::exists(last));

  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=" + last.string(),
                           "hydra.run.dir=" + (fs::path(dir.path()) / "test").string()},
                          dir.path());
  INFO(test.err);
  REQUIRE(test.exit_code == 0);
  const double accuracy = printed(test.out, "test/acc");
  std::cout << "Fashion-MNIST test/acc after 150 batches of the mlp: " << accuracy << std::endl;
  CHECK(accuracy >= kMinTestAccuracy);
  CHECK(accuracy <= 1.0);

  // The classes have torchvision's names (FashionMNIST.classes), kept with the run; trainer
  // predict writes them, on the same test set with the same accuracy.
  CHECK(read_file(fs::path(run) / "class_names.txt") ==
        "T-shirt/top\nTrouser\nPullover\nDress\nCoat\nSandal\nShirt\nSneaker\nBag\nAnkle boot\n");
  const fs::path predicted_dir = fs::path(dir.path()) / "predict";
  auto predicted = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=" + last.string(), "hydra.run.dir=" + predicted_dir.string()}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(accuracy).margin(1e-6));
  const std::string csv = read_file(predicted_dir / "predictions.csv");
  CHECK(csv.find("\n0,") != std::string::npos);
  for (const char* name : {",Ankle boot,", ",T-shirt/top,", ",Trouser,"}) CHECK(csv.find(name) != std::string::npos);
}
