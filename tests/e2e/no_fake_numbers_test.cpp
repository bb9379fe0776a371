// No fake numbers: zero validation batches mean no validation (no val/* metric, no "best"), zero
// test batches are an error, negative epoch counts follow Lightning, and distributed evaluation
// counts every sample exactly once. Skipped without the engine (TRAINER_LIBTORCH=none).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;
using namespace trainer::testing;

namespace {

std::vector<std::string> small_fit(const std::string& run_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {TRAINER_BINARY,         "fit",
                                   "data=synthetic",       "data.num_samples=256",
                                   "data.batch_size=64",   "model.hidden_sizes=[16]",
                                   "trainer.max_epochs=2", "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

TEST_CASE("limit_val_batches=0 runs no validation: no val metric, no best checkpoint, one warning") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(small_fit("run", {"trainer.limit_val_batches=0"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path run = fs::path(dir.path()) / "run";
  CHECK(fit.err.find("no validation in this fit: trainer.limit_val_batches leaves no batch; "
                     "callbacks.model_checkpoint.monitor=val/acc gets no value") != std::string::npos);
  CHECK(fit.err.find("val/acc 0.0") == std::string::npos);
  CHECK(read_file(run / "metrics.csv").find("val/") == std::string::npos);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
    ++files;
    CHECK(entry.path().filename() == "last.ckpt");
  }
  CHECK(files == 1);
  CHECK(printed(fit.out, "test/acc") > 0.0);  // the test still runs, on the last weights

  // An empty validation split says the same.
  auto empty = run_process(small_fit("empty", {"data.val_fraction=0.0", "trainer.max_epochs=1"}), dir.path());
  INFO(empty.err);
  REQUIRE(empty.exit_code == 0);
  CHECK(empty.err.find("no validation in this fit: the validation split is empty") != std::string::npos);
}

TEST_CASE("validate or test over zero batches is an error, not a metric of 0") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(small_fit("run", {"trainer.max_epochs=1"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto test = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "trainer.limit_test_batches=0"}, dir.path());
  check_clean_error(test);
  CHECK(test.err.find("Error: trainer.limit_test_batches: test has no batch to evaluate") != std::string::npos);
  CHECK(test.out.find("test/acc") == std::string::npos);
  auto validate = run_process(
      {TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run", "trainer.limit_val_batches=0.0"}, dir.path());
  check_clean_error(validate);
  CHECK(validate.err.find("validate has no batch to evaluate") != std::string::npos);
}

TEST_CASE("a validation interval of 0 and benchmark with deterministic are refused before the run directory") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  // Both are inside their keys' ranges; the engine refused them only after the run's directory,
  // metrics.csv and TensorBoard files existed (the red team's key audit).
  TempDir dir;
  for (const std::string interval : {"0", "0.0"}) {
    auto never = run_process(small_fit("never", {"trainer.val_check_interval=" + interval}), dir.path());
    check_clean_error(never);
    CHECK(never.err.find("trainer.val_check_interval (override 'trainer.val_check_interval=" + interval +
                         "'): validation after 0 batches") != std::string::npos);
    CHECK_FALSE(fs::exists(fs::path(dir.path()) / "never"));
  }
  auto both = run_process(small_fit("both", {"trainer.benchmark=true", "trainer.deterministic=true"}), dir.path());
  check_clean_error(both);
  CHECK(both.err.find("trainer.benchmark (override 'trainer.benchmark=true'): benchmark=true picks convolution "
                      "algorithms by timing them") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "both"));
}

TEST_CASE("epoch counts follow Lightning: -1 needs max_steps or max_time, below -1 is an error before any run") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto negative = run_process(small_fit("neg", {"trainer.max_epochs=-5"}), dir.path());
  check_clean_error(negative);
  CHECK(negative.err.find("trainer.max_epochs (override 'trainer.max_epochs=-5'): -5 is out of range") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "neg"));

  auto endless = run_process(small_fit("endless", {"trainer.max_epochs=-1"}), dir.path());
  check_clean_error(endless);
  CHECK(endless.err.find("neither trainer.max_steps nor trainer.max_time ends the run") != std::string::npos);

  auto by_steps = run_process(small_fit("steps", {"trainer.max_epochs=-1", "trainer.max_steps=7"}), dir.path());
  INFO(by_steps.err);
  REQUIRE(by_steps.exit_code == 0);
  CHECK(by_steps.err.find("fit finished in") != std::string::npos);
  CHECK(by_steps.err.find(", 7 steps") != std::string::npos);
}

TEST_CASE("testing on 2 ranks counts every sample once: the same metrics as 1 rank") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 328 samples: a test split of 41, which two ranks cannot share evenly (21 + 20).
  auto fit = run_process(small_fit("run", {"data.num_samples=328", "trainer.max_epochs=1", "test_after_fit=false"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto one =
      run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.batch_size=8"}, dir.path());
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  auto two = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.batch_size=8", "trainer.devices=2"},
      dir.path());
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  CHECK(printed(two.out, "test/acc") == printed(one.out, "test/acc"));
  CHECK(printed(two.out, "test/loss") == Approx(printed(one.out, "test/loss")).epsilon(1e-6));
}

TEST_CASE("a value out of range in one job of a sweep is refused when the sweep is planned, naming the override") {
  // Torch-free: planning composes and checks every job before any directory is made.
  TempDir dir;
  auto sweep = run_process({TRAINER_BINARY, "fit", "-m", "data=synthetic", "optimizer.lr=0.1,-1", "hydra.sweep.dir=sw"},
                           dir.path());
  check_clean_error(sweep);
  CHECK(sweep.err.find("job 1") != std::string::npos);
  CHECK(sweep.err.find("optimizer.lr (override 'optimizer.lr=-1'): -1 is out of range: the learning rate (0 freezes "
                       "the weights, as in PyTorch), at least 0") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sw"));

  auto typed = run_process({TRAINER_BINARY, "fit", "trainer.max_epochs=abc", "hydra.run.dir=run"}, dir.path());
  check_clean_error(typed);
  CHECK(typed.err.find("trainer.max_epochs (override 'trainer.max_epochs=abc'): expected an int") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));

  auto data = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.val_fraction=1.5", "data.num_samples=0", "hydra.run.dir=run"},
      dir.path());
  check_clean_error(data);
  CHECK(data.err.find("data.val_fraction (override 'data.val_fraction=1.5'): 1.5 is out of range: the share of the "
                      "training split held out for validation, in [0, 1)") != std::string::npos);
  CHECK(data.err.find("data.num_samples (override 'data.num_samples=0'): 0 is out of range") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));

  auto monitor = run_process({TRAINER_BINARY, "fit", "callbacks.model_checkpoint.monitor=val/acx", "hydra.run.dir=run"},
                             dir.path());
  check_clean_error(monitor);
  CHECK(monitor.err.find("val/acx is not one of val/acc, val/loss, train/acc, train/loss, val/mae, val/rmse, val/r2, "
                         "train/mae, train/rmse or train/r2") != std::string::npos);
  CHECK(monitor.err.find("did you mean 'val/acc'?") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));
}

TEST_CASE("a damaged Fashion-MNIST file or an out-of-range label stops fit before training, naming the file") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const fs::path debian = "/usr/share/datasets/fashion-mnist";
  REQUIRE(fs::exists(debian / "t10k-labels-idx1-ubyte.gz"));
  TempDir dir;
  const fs::path data = fs::path(dir.path()) / "data";
  fs::create_directories(data);
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"}) {
    fs::create_symlink(debian / name, data / name);
  }
  const fs::path labels = data / "t10k-labels-idx1-ubyte.gz";
  fs::copy_file(debian / "t10k-labels-idx1-ubyte.gz", labels);
  {  // one byte of the compressed stream flipped
    std::fstream file(labels, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(2500);
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(2500);
    byte = static_cast<char>(byte ^ 0x10);
    file.write(&byte, 1);
  }
  const std::vector<std::string> fit = {TRAINER_BINARY, "fit", "paths.data_dir=" + data.string(),
                                        "trainer.max_epochs=1", "hydra.run.dir=run"};
  auto damaged = run_process(fit, dir.path());
  check_clean_error(damaged);
  CHECK(damaged.err.find(labels.string()) != std::string::npos);
  CHECK(damaged.err.find("damaged") != std::string::npos);
  CHECK(damaged.err.find("first training step") == std::string::npos);

  {  // an intact file whose 6th label is 12 (plain IDX bytes: zlib reads them as they are)
    std::string bytes = {0, 0, 8, 1, 0, 0, 0x27, 0x10};  // 10000 labels
    bytes.resize(8 + 10000, 3);
    bytes[8 + 5] = 12;
    std::ofstream(labels, std::ios::binary | std::ios::trunc) << bytes;
  }
  auto label = run_process(fit, dir.path());
  check_clean_error(label);
  CHECK(label.err.find(labels.string() + ": label 12 of sample 5 is outside the 10 classes 0..9") != std::string::npos);
}

TEST_CASE("a batch norm layer given one value per channel in training stops the fit instead of NaN statistics") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 100 samples, 90 for training: in batches of 89 the last batch is one 8 x 8 image, which a
  // resnet's last stage sees at 1 x 1. PyTorch raises there; the running variance would otherwise
  // become NaN and the run end "successfully" with val/loss nan.
  const auto fit_in_batches_of = [&](const std::string& batch_size) {
    return run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=100", "data.image_shape=[3,8,8]",
                        "data.batch_size=" + batch_size, "model=resnet", "model.width=8", "trainer.max_epochs=1",
                        "hydra.run.dir=run_" + batch_size},
                       dir.path());
  };
  const auto one = fit_in_batches_of("89");
  INFO(one.err);
  CHECK(one.exit_code == 1);
  check_clean_error(one);
  CHECK(contains(one.err,
                 "Error: model: a batch norm layer of 64 channels: a training batch gave it one value per "
                 "channel (input [1, 64, 1, 1])"));
  CHECK(contains(one.err, "choose a data.batch_size that leaves it more"));
  CHECK_FALSE(contains(one.err, "val/loss nan"));
  const auto two = fit_in_batches_of("88");  // a last batch of two is fine
  INFO(two.err);
  CHECK(two.exit_code == 0);
}
