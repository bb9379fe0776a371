// data=webdataset end to end: tar shards written from the real Fashion-MNIST at test time
// (tests/data/images/make_shards.py, Python's tarfile and Pillow), streamed by the real binary: a
// cnn trained on PNG shards with val and test shards, predict naming each sample shard:key;
// batches that do not depend on the number of loader threads; a SIGKILLed run resumed mid-epoch
// to the same weights; two data-parallel ranks over shards that do not split evenly; tensors with
// JSON labels; and the mistakes: a missing shard, a bad pattern, a sample without a label, a label
// out of range, a truncated tar, an undecodable image (error, then skip, logged once), an empty
// shard path or a directory, a stray huge label.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// make_shards.py OUT NAME ARGS...; false (after a skip) without the test Python.
bool make_shards(const fs::path& out, const std::string& name, const std::vector<std::string>& args) {
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    skip_test("TRAINER_TEST_PYTHON is empty: no Pillow to write the shards with", Skip::unexpected_in_ci);
    return false;
  }
  std::vector<std::string> argv = {python, std::string(TRAINER_SOURCE_DIR) + "/tests/data/images/make_shards.py",
                                   out.string(), name};
  argv.insert(argv.end(), args.begin(), args.end());
  const ProcessResult made = run_process(argv);
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  return true;
}

// A short fit of a small cnn on gray shards `train` (a pattern), plus `extra` overrides.
std::vector<std::string> fit_command(const std::string& train, const std::string& run_dir,
                                     const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=webdataset",
                                   "data.shards='" + train + "'",
                                   "data.channels=1",
                                   "data.normalize.mean=[0.286]",
                                   "data.normalize.std=[0.353]",
                                   "data.batch_size=32",
                                   "data.shuffle_buffer=64",
                                   "model=cnn",
                                   "model.channels=[8,16]",
                                   "model.hidden_size=32",
                                   "trainer.max_epochs=1",
                                   "trainer.enable_progress_bar=false",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

// docs/data.md's first and third commands: patterns for train, val and test, then predict.
TEST_CASE("webdataset: a cnn trains on PNG shards with val and test shards; predict names shard:key", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path shards = fs::path(dir.path()) / "shards";
  if (!make_shards(shards, "train", {"--count", "1200", "--per-shard", "200"})) return;
  if (!make_shards(shards, "val", {"--count", "200", "--per-shard", "100", "--offset", "1200"})) return;
  if (!make_shards(shards, "test", {"--count", "300", "--per-shard", "100", "--source", "t10k"})) return;
  const std::string run = (fs::path(dir.path()) / "run").string();
  // Hydra's grammar takes braces for a dictionary unless the value is quoted.
  const std::vector<std::string> splits = {"data.val_shards='" + (shards / "val-{000000..000001}.tar").string() + "'",
                                           "data.test_shards=['" + (shards / "test-00000{0,1}.tar").string() + "'," +
                                               (shards / "test-000002.tar").string() + "]"};
  std::vector<std::string> extra = splits;
  extra.push_back("trainer.max_epochs=3");
  const ProcessResult fit =
      run_process(fit_command((shards / "train-{000000..000005}.tar").string(), run, extra), dir.path());
  INFO(fit.out << fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("webdataset: 6 train / 2 val / 3 test shard(s); 10 classes; samples 1 x 28 x 28") !=
        std::string::npos);
  CHECK(fit.err.find("data: 1200 train / 200 val / 300 test samples") != std::string::npos);
  CHECK(fit.err.find("image transforms: train ") != std::string::npos);
  CHECK(fit.err.find("worker thread(s)") != std::string::npos);
  // Real images of ten classes: well above chance (10 %) after three short epochs.
  CHECK(printed(fit.out, "test/acc") > 0.5);

  // Evaluation reads the evaluated split's shards alone (the checkpoint gives the model's shape and
  // classes): the training shards may be gone.
  fs::create_directories(shards / "moved");
  for (int i = 0; i < 6; ++i) {
    const std::string name = "train-00000" + std::to_string(i) + ".tar";
    fs::rename(shards / name, shards / "moved" / name);
  }
  const ProcessResult validated =
      run_process({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=" + run}, dir.path());
  INFO(validated.err);
  REQUIRE(validated.exit_code == 0);
  CHECK(validated.err.find("webdataset: 2 val shard(s); 10 classes; samples 1 x 28 x 28 (the checkpoint's; the "
                           "training shards are not read)") != std::string::npos);
  CHECK(printed(validated.out, "val/acc") > 0.5);

  // trainer test and trainer predict on the test shards agree; predictions name shard:key.
  std::vector<std::string> test = {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=" + run};
  const ProcessResult tested = run_process(test, dir.path());
  INFO(tested.err);
  REQUIRE(tested.exit_code == 0);
  CHECK(tested.err.find("webdataset: 3 test shard(s)") != std::string::npos);
  const ProcessResult predicted =
      run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(tested.out, "test/acc")).margin(1e-6));
  CHECK(printed(predicted.out, "predict/count") == 300);
  const std::string table = read_file(predictions_under(fs::path(run) / "eval"));
  CHECK(std::count(table.begin(), table.end(), '\n') == 301);
  CHECK(table.find((shards / "test-000000.tar").string() + ":sample000000,") != std::string::npos);
  CHECK(table.find((shards / "test-000002.tar").string() + ":sample000299,") != std::string::npos);
}

TEST_CASE("webdataset: batches do not depend on the loader threads; a SIGKILLed run resumes to the same weights",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path shards = fs::path(dir.path()) / "shards";
  // 5 shards of 60, 60, 60, 60 and 20 samples: 260 in batches of 16, 17 steps an epoch.
  if (!make_shards(shards, "train", {"--count", "260", "--per-shard", "60"})) return;
  const std::string pattern = (shards / "train-{000000..000004}.tar").string();
  const std::vector<std::string> extra = {"data.image_size=24",
                                          "data.augment=imagenet",
                                          "data.batch_size=16",
                                          "trainer.max_epochs=2",
                                          "trainer.deterministic=true",
                                          "test_after_fit=false",
                                          "callbacks.model_checkpoint.save_top_k=0",
                                          "callbacks.model_checkpoint.every_n_train_steps=7"};
  std::vector<std::string> one_thread = extra;
  one_thread.push_back("data.num_workers=0");
  const ProcessResult whole =
      run_process(fit_command(pattern, (fs::path(dir.path()) / "whole").string(), one_thread), dir.path());
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);
  std::vector<std::string> threads = extra;
  threads.push_back("data.num_workers=3");
  const ProcessResult threaded =
      run_process(fit_command(pattern, (fs::path(dir.path()) / "threads").string(), threads), dir.path());
  INFO(threaded.err);
  REQUIRE(threaded.exit_code == 0);
  CHECK(largest_difference(exported_weights(fs::path(dir.path()) / "whole"),
                           exported_weights(fs::path(dir.path()) / "threads")) == 0.0);

  const fs::path killed_run = fs::path(dir.path()) / "killed";
  const fs::path last = killed_run / "checkpoints" / "last.ckpt";
  bool killed = false;
  const ProcessResult first = run_and_signal(
      fit_command(pattern, killed_run.string(), threads), dir.path(), [&] { return fs::exists(last); }, SIGKILL,
      &killed);
  REQUIRE(killed);
  CHECK(first.exit_code == 128 + SIGKILL);
  std::vector<std::string> again = threads;
  again.push_back("ckpt_path=last");
  const ProcessResult resumed = run_process(fit_command(pattern, killed_run.string(), again), dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("resumed from") != std::string::npos);
  CHECK(largest_difference(exported_weights(fs::path(dir.path()) / "whole"), exported_weights(killed_run)) == 0.0);
}

TEST_CASE("webdataset: 2 data-parallel ranks over shards that do not split evenly run the same steps", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path shards = fs::path(dir.path()) / "shards";
  // 250 samples in shards of 60, 60, 60, 60, 10: each rank reads ceil(250 / 2) = 125 (one repeated,
  // as DistributedSampler pads) in batches of 16: 8 steps an epoch, 16 in two.
  if (!make_shards(shards, "train", {"--count", "250", "--per-shard", "60"})) return;
  if (!make_shards(shards, "val", {"--count", "45", "--per-shard", "45", "--offset", "250"})) return;
  const ProcessResult fit =
      run_process(fit_command((shards / "train-{000000..000004}.tar").string(), (fs::path(dir.path()) / "ddp").string(),
                              {"trainer.devices=2", "data.batch_size=16", "trainer.max_epochs=2",
                               "test_after_fit=false", "data.val_shards=" + (shards / "val-000000.tar").string()}),
                  dir.path());
  INFO(fit.out << fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("data parallel: 2 ranks") != std::string::npos);
  CHECK(fit.err.find("epoch 1 done") != std::string::npos);
  CHECK(fit.err.find("16 steps") != std::string::npos);
  CHECK(fs::exists(fs::path(dir.path()) / "ddp" / "checkpoints" / "last.ckpt"));
}

// docs/data.md's second command: a list of shards, labels in .json.
TEST_CASE("webdataset: .npy tensors with labels in .json (data.label_key) train an mlp", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path shards = fs::path(dir.path()) / "shards";
  if (!make_shards(shards, "train", {"--count", "800", "--per-shard", "400", "--kind", "npy", "--label", "json"})) {
    return;
  }
  if (!make_shards(shards, "test",
                   {"--count", "200", "--per-shard", "200", "--kind", "npy", "--label", "json", "--source", "t10k"})) {
    return;
  }
  const ProcessResult fit = run_process(
      {TRAINER_BINARY, "fit", "data=webdataset",
       "data.shards=[" + (shards / "train-000000.tar").string() + "," + (shards / "train-000001.tar").string() + "]",
       "data.test_shards=" + (shards / "test-000000.tar").string(), "data.label_key=label", "data.channels=1",
       "data.normalize.mean=[0.286]", "data.normalize.std=[0.353]", "model=mlp", "trainer.max_epochs=3",
       "trainer.enable_progress_bar=false", "hydra.run.dir=" + (fs::path(dir.path()) / "run").string()},
      dir.path());
  INFO(fit.out << fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("10 classes; samples Byte 1 x 28 x 28") != std::string::npos);
  CHECK(printed(fit.out, "test/acc") > 0.5);
}

TEST_CASE("webdataset: mistakes are one-paragraph errors naming the shard and member", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path shards = fs::path(dir.path()) / "shards";
  if (!make_shards(shards, "good", {"--count", "100", "--per-shard", "50"})) return;
  if (!make_shards(shards, "nolabel", {"--count", "40", "--per-shard", "40", "--unlabelled", "7"})) return;
  if (!make_shards(shards, "range", {"--count", "40", "--per-shard", "40", "--label-value", "5:12"})) return;
  if (!make_shards(shards, "cut", {"--count", "100", "--per-shard", "50", "--truncate"})) return;
  if (!make_shards(shards, "corrupt", {"--count", "100", "--per-shard", "100", "--corrupt", "9"})) return;
  if (!make_shards(shards, "nan", {"--count", "100", "--per-shard", "100", "--kind", "npyf", "--nan", "21"})) return;
  if (!make_shards(shards, "dotted", {"--count", "40", "--per-shard", "40", "--dotted"})) return;
  if (!make_shards(shards, "rgbf", {"--count", "40", "--per-shard", "40", "--kind", "npyf3"})) return;
  if (!make_shards(shards, "st", {"--count", "40", "--per-shard", "40", "--kind", "st"})) return;
  if (!make_shards(shards, "st2", {"--count", "40", "--per-shard", "40", "--kind", "st2"})) return;
  const std::string run = (fs::path(dir.path()) / "run").string();

  // A shard that does not exist: its path named.
  const ProcessResult missing =
      run_process(fit_command((shards / "good-{000000..000002}.tar").string(), run), dir.path());
  check_clean_error(missing);
  CHECK(missing.err.find("good-000002.tar") != std::string::npos);

  // Three normalisation values for one-channel tensors: the channel count and the shape named.
  if (!make_shards(shards, "grayf", {"--count", "40", "--per-shard", "40", "--kind", "npyf"})) return;
  const ProcessResult three = run_process(
      fit_command((shards / "grayf-000000.tar").string(), run,
                  {"~data.channels", "data.normalize.mean=[0.5,0.5,0.5]", "data.normalize.std=[0.25,0.25,0.25]"}),
      dir.path());
  check_clean_error(three);
  CHECK(three.err.find("data.normalize: mean and std give 3 values, one per channel, but the samples have 1 channel "
                       "(shape [1, 28, 28]). Give 1 value(s) to each") != std::string::npos);

  // An unbalanced brace.
  const ProcessResult brace = run_process(fit_command((shards / "good-{000000..000001.tar").string(), run), dir.path());
  check_clean_error(brace);
  CHECK(brace.err.find("data.shards") != std::string::npos);
  CHECK(brace.err.find("without its '}'") != std::string::npos);

  // A sample without its label: shard and key named, before training starts.
  const ProcessResult unlabelled = run_process(fit_command((shards / "nolabel-000000.tar").string(), run), dir.path());
  check_clean_error(unlabelled);
  CHECK(unlabelled.err.find("nolabel-000000.tar: sample sample000007: has no .cls member") != std::string::npos);

  // ...unless data.on_bad_sample=skip: left out when the shards are counted, and said.
  const ProcessResult unlabelled_skipped =
      run_process(fit_command((shards / "nolabel-000000.tar").string(), run + "_nolabel",
                              {"data.on_bad_sample=skip", "test_after_fit=false"}),
                  dir.path());
  INFO(unlabelled_skipped.out << unlabelled_skipped.err);
  CHECK(unlabelled_skipped.exit_code == 0);
  CHECK(unlabelled_skipped.err.find("data.shards: 1 sample(s) left out as unreadable") != std::string::npos);
  CHECK(unlabelled_skipped.err.find("data: 39 train / 0 val / 0 test samples") != std::string::npos);
  CHECK(unlabelled_skipped.err.find("the validation split is empty (data.val_shards is null)") != std::string::npos);

  // A label out of range of data.num_classes: the member named.
  const ProcessResult range =
      run_process(fit_command((shards / "range-000000.tar").string(), run, {"data.num_classes=10"}), dir.path());
  check_clean_error(range);
  CHECK(range.err.find("range-000000.tar: member sample000005.cls") != std::string::npos);
  CHECK(range.err.find("holds label 12, but there are 10 classes") != std::string::npos);

  // A truncated tar: the shard named.
  const ProcessResult cut = run_process(fit_command((shards / "cut-{000000..000001}.tar").string(), run), dir.path());
  check_clean_error(cut);
  CHECK(cut.err.find("cut-000001.tar") != std::string::npos);

  // An image that cannot be decoded stops the run, naming shard and key...
  const ProcessResult corrupt = run_process(fit_command((shards / "corrupt-000000.tar").string(), run), dir.path());
  check_clean_error(corrupt);
  CHECK(corrupt.err.find("corrupt-000000.tar:sample000009") != std::string::npos);
  // ...and with on_bad_sample=skip it is left out, counted, and the run finishes.
  const ProcessResult skipped = run_process(
      fit_command((shards / "corrupt-000000.tar").string(), run + "_skip", {"data.on_bad_sample=skip"}), dir.path());
  INFO(skipped.out << skipped.err);
  CHECK(skipped.exit_code == 0);
  CHECK(skipped.err.find("left out " + (shards / "corrupt-000000.tar").string() + ":sample000009") !=
        std::string::npos);

  // A float tensor holding a NaN stops the run naming its sample (it made every loss NaN, blamed on
  // the learning rate); with on_bad_sample=skip it is left out and counted.
  const ProcessResult nan = run_process(fit_command((shards / "nan-000000.tar").string(), run), dir.path());
  check_clean_error(nan);
  CHECK(nan.err.find("nan-000000.tar:sample000021: holds a NaN or an infinity (element 89 of its 784)") !=
        std::string::npos);
  CHECK(nan.err.find("not finite") == std::string::npos);
  const ProcessResult nan_skipped = run_process(
      fit_command((shards / "nan-000000.tar").string(), run + "_nan", {"data.on_bad_sample=skip"}), dir.path());
  INFO(nan_skipped.out << nan_skipped.err);
  CHECK(nan_skipped.exit_code == 0);
  CHECK(nan_skipped.err.find("left out " + (shards / "nan-000000.tar").string() + ":sample000021") !=
        std::string::npos);

  // Members named dir/sample.000001.png: the key ends at the first dot, so the error says so and
  // how to rename them.
  const ProcessResult dotted = run_process(fit_command((shards / "dotted-000000.tar").string(), run), dir.path());
  check_clean_error(dotted);
  CHECK(dotted.err.find("its member dir/sample.000000.png has more than one dot in its file name") !=
        std::string::npos);
  CHECK(dotted.err.find("e.g. dir/sample_000000.png") != std::string::npos);

  // Float tensors of three channels pass with the shipped data.normalize, ImageNet's pixel
  // statistics, which suit images saved on the [0, 1] scale only: said, with the way out; not said
  // once the user gives data.normalize.
  const auto rgb_fit = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {TRAINER_BINARY,
                                     "fit",
                                     "data=webdataset",
                                     "data.shards=" + (shards / "rgbf-000000.tar").string(),
                                     "data.batch_size=20",
                                     "trainer.max_epochs=1",
                                     "test_after_fit=false",
                                     "trainer.enable_progress_bar=false",
                                     "hydra.run.dir=" + run + "_" + name};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv, dir.path());
  };
  const ProcessResult imagenet_values = rgb_fit("imagenet", {});
  INFO(imagenet_values.out << imagenet_values.err);
  CHECK(imagenet_values.exit_code == 0);
  CHECK(imagenet_values.err.find("the samples are float tensors of 3 channels (3 x 28 x 28), normalised with "
                                 "data.normalize's default, ImageNet's pixel statistics") != std::string::npos);
  CHECK(imagenet_values.err.find("give data.normalize.mean=[0] data.normalize.std=[1]") != std::string::npos);
  const ProcessResult own_values = rgb_fit("own", {"data.normalize.mean=[0]", "data.normalize.std=[1]"});
  INFO(own_values.out << own_values.err);
  CHECK(own_values.exit_code == 0);
  CHECK(own_values.err.find("float tensors of 3 channels") == std::string::npos);

  // .safetensors samples of one tensor train; of two, the probe of the first sample refuses them
  // before training starts (the probe took the first tensor and the first batch failed).
  const ProcessResult one_tensor =
      run_process(fit_command((shards / "st-000000.tar").string(), run + "_st", {"test_after_fit=false"}), dir.path());
  INFO(one_tensor.out << one_tensor.err);
  CHECK(one_tensor.exit_code == 0);
  CHECK(one_tensor.err.find("samples Float 1 x 28 x 28") != std::string::npos);
  const ProcessResult two_tensors = run_process(fit_command((shards / "st2-000000.tar").string(), run), dir.path());
  check_clean_error(two_tensors);
  CHECK(two_tensors.err.find("st2-000000.tar:sample000000: holds 2 tensors; a sample's input is one") !=
        std::string::npos);
  CHECK(two_tensors.err.find("shard(s); 10 classes; samples") == std::string::npos);  // the probe, not a batch

  // trainer predict without test shards: told which key to give.
  const ProcessResult no_test =
      run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + run + "_nolabel"}, dir.path());
  check_clean_error(no_test);
  CHECK(no_test.err.find("data.test_shards=<path or pattern>") != std::string::npos);

  // data=webdataset without data.shards: the mandatory key named before anything runs.
  const ProcessResult no_shards = run_process({TRAINER_BINARY, "fit", "data=webdataset"}, dir.path());
  check_clean_error(no_shards);
  CHECK(no_shards.err.find("data.shards") != std::string::npos);
}

TEST_CASE("webdataset: shard lists that would block or mislead are refused; a skipped sample is logged once",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path shards = fs::path(dir.path()) / "shards";
  if (!make_shards(shards, "good", {"--count", "100", "--per-shard", "100"})) return;
  if (!make_shards(shards, "huge", {"--count", "40", "--per-shard", "40", "--label-value", "3:5000000"})) return;
  if (!make_shards(shards, "corrupt", {"--count", "96", "--per-shard", "96", "--corrupt", "9"})) return;
  const std::string good = (shards / "good-000000.tar").string();
  const std::string run = (fs::path(dir.path()) / "run").string();
  const auto seconds = std::chrono::seconds(60);

  // An empty shard path would make libarchive read standard input and wait there for ever.
  const ProcessResult empty = run_process(fit_command("", run), dir.path(), {}, seconds);
  check_clean_error(empty);
  CHECK(empty.err.find("data.shards") != std::string::npos);
  CHECK(empty.err.find("empty shard path") != std::string::npos);
  const ProcessResult empty_val =
      run_process(fit_command(good, run, {"data.val_shards=['','" + good + "']"}), dir.path(), {}, seconds);
  check_clean_error(empty_val);
  CHECK(empty_val.err.find("data.val_shards") != std::string::npos);
  // A directory given for a shard: named, with the fix.
  const ProcessResult directory = run_process(fit_command(shards.string(), run), dir.path(), {}, seconds);
  check_clean_error(directory);
  CHECK(directory.err.find("which is a directory") != std::string::npos);

  // One stray label of 5,000,000 would make a 5,000,001-way output layer: refused, member named.
  const ProcessResult huge = run_process(fit_command((shards / "huge-000000.tar").string(), run), dir.path());
  check_clean_error(huge);
  CHECK(huge.err.find("huge-000000.tar: member sample000003.cls") != std::string::npos);
  CHECK(huge.err.find("would make 5000001 classes for 40 training samples") != std::string::npos);

  // With data.on_bad_sample=skip, an undecodable image is logged once and counted every epoch.
  const ProcessResult skipped =
      run_process(fit_command((shards / "corrupt-000000.tar").string(), run + "_skip",
                              {"data.on_bad_sample=skip", "trainer.max_epochs=2", "test_after_fit=false"}),
                  dir.path());
  INFO(skipped.out << skipped.err);
  REQUIRE(skipped.exit_code == 0);
  const std::string left_out = "left out " + (shards / "corrupt-000000.tar").string() + ":sample000009";
  const size_t first = skipped.err.find(left_out);
  CHECK(first != std::string::npos);
  CHECK(skipped.err.find(left_out, first + 1) == std::string::npos);
  size_t counted = 0;
  for (size_t at = skipped.err.find("1 unreadable sample(s) left out"); at != std::string::npos;
       at = skipped.err.find("1 unreadable sample(s) left out", at + 1)) {
    ++counted;
  }
  CHECK(counted == 2);
}
