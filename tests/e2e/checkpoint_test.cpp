// Checkpoints load only where they fit: a model of another shape, a damaged or truncated file,
// ckpt_path=last before any checkpoint exists and a file size limit, each through the real binary.
// Skipped without the engine (TRAINER_LIBTORCH=none).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;
using namespace trainer::testing;

namespace {

std::vector<std::string> mlp_fit(const std::string& run_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "model.hidden_sizes=[32,16]",
                                   "data=synthetic",
                                   "data.num_samples=256",
                                   "data.batch_size=64",
                                   "trainer.max_epochs=2",
                                   "trainer.num_sanity_val_steps=0",
                                   "test_after_fit=false",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

fs::path best_file(const fs::path& run) {
  for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
    if (entry.path().filename().string().rfind("epoch_", 0) == 0) return entry.path();
  }
  FAIL("no epoch_*.ckpt in " << run);
  return {};
}

}  // namespace

TEST_CASE("a checkpoint of another shape is refused, naming the tensors and the config keys that differ") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(mlp_fit("run"), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const std::string last = (fs::path(dir.path()) / "run" / "checkpoints" / "last.ckpt").string();

  auto validate = run_process({TRAINER_BINARY, "validate", "ckpt_path=" + last, "model.hidden_sizes=[64]"}, dir.path());
  INFO(validate.err);
  check_clean_error(validate);
  CHECK(validate.err.find("the checkpoint does not fit this model") != std::string::npos);
  CHECK(validate.err.find("layers.1.weight: checkpoint Float [32, 784] vs model Float [64, 784]") != std::string::npos);
  CHECK(validate.err.find("model.hidden_sizes: [32, 16] in the checkpoint's run, [64] now") != std::string::npos);
  CHECK(validate.out.find("val/acc") == std::string::npos);  // no metric from a model that did not load

  // Resuming with another model is refused the same way (today's fit keeps the command's config).
  auto resume =
      run_process(mlp_fit("run", {"model.hidden_sizes=[64]", "trainer.max_epochs=3", "ckpt_path=last"}), dir.path());
  INFO(resume.err);
  check_clean_error(resume);
  CHECK(resume.err.find("layers.1.weight: checkpoint Float [32, 784] vs model Float [64, 784]") != std::string::npos);

  // Fewer layers with matching first shapes: the checkpoint's extra tensors are named.
  auto fewer = run_process({TRAINER_BINARY, "validate", "ckpt_path=" + last, "model.hidden_sizes=[32]"}, dir.path());
  INFO(fewer.err);
  check_clean_error(fewer);
  CHECK(fewer.err.find("layers.4.weight: checkpoint Float [16, 32] vs model Float [10, 32]") != std::string::npos);
  CHECK(fewer.err.find("layers.7.weight: in the checkpoint (Float [10, 16]), not in the model") != std::string::npos);
}

TEST_CASE("a damaged or truncated checkpoint is an error naming the newest intact one") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(mlp_fit("run"), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path run = fs::path(dir.path()) / "run";
  const fs::path last = run / "checkpoints" / "last.ckpt";
  const fs::path best = best_file(run);

  {  // one byte flipped inside the weights
    std::fstream file(last, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(4000);
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(4000);
    byte = static_cast<char>(byte ^ 0x5a);
    file.write(&byte, 1);
  }
  auto damaged = run_process({TRAINER_BINARY, "validate", "ckpt_path=" + last.string()}, dir.path());
  INFO(damaged.err);
  check_clean_error(damaged);
  CHECK(damaged.err.find(last.string() + ": the checkpoint is damaged") != std::string::npos);
  CHECK(damaged.err.find("The newest intact checkpoint beside it is " + best.string()) != std::string::npos);

  // Resuming from it stops with the same error before anything of the run is rewritten.
  const std::string records = read_file(run / ".hydra" / "config.yaml") + read_file(run / ".hydra" / "overrides.yaml") +
                              read_file(run / "trainer.log");
  auto resume = run_process(mlp_fit("run", {"trainer.max_epochs=3", "ckpt_path=last"}), dir.path());
  INFO(resume.err);
  check_clean_error(resume);
  CHECK(resume.err.find("the checkpoint is damaged") != std::string::npos);
  CHECK(read_file(run / ".hydra" / "config.yaml") + read_file(run / ".hydra" / "overrides.yaml") +
            read_file(run / "trainer.log") ==
        records);

  fs::resize_file(best, fs::file_size(best) / 2);
  auto truncated = run_process({TRAINER_BINARY, "test", "ckpt_path=" + best.string()}, dir.path());
  INFO(truncated.err);
  check_clean_error(truncated);
  CHECK(truncated.err.find("the checkpoint is truncated") != std::string::npos);
  CHECK(truncated.err.find("No intact checkpoint is beside it") != std::string::npos);

  std::ofstream(run / "checkpoints" / "notes.ckpt") << "not a checkpoint\n";
  auto foreign = run_process({TRAINER_BINARY, "test", "ckpt_path=run/checkpoints/notes.ckpt"}, dir.path());
  check_clean_error(foreign);
  CHECK(foreign.err.find("not a trainer checkpoint") != std::string::npos);
}

TEST_CASE("ckpt_path=last before any checkpoint exists starts afresh with a warning, as Lightning does") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(mlp_fit("run", {"ckpt_path=last", "trainer.max_epochs=1"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("ckpt_path=last: no checkpoint in") != std::string::npos);
  CHECK(fit.err.find("starting from scratch") != std::string::npos);
  CHECK(fs::exists(fs::path(dir.path()) / "run" / "checkpoints" / "last.ckpt"));
}

TEST_CASE("ckpt_path=last without last.ckpt beside an earlier run's checkpoints is refused and they stay") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // A run that saves no last.ckpt: its best checkpoint alone.
  auto first = run_process(mlp_fit("run", {"callbacks.model_checkpoint.save_last=false"}), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const fs::path checkpoints = fs::path(dir.path()) / "run" / "checkpoints";
  std::map<std::string, std::string> before;
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    before[entry.path().filename().string()] = read_file(entry.path());
  }
  REQUIRE(before.size() == 1);
  const std::string best = before.begin()->first;
  // The resume would start from scratch and overwrite (or, as fallen out of the top k, delete) it.
  auto resume = run_process(
      mlp_fit("run", {"callbacks.model_checkpoint.save_last=false", "trainer.max_epochs=4", "ckpt_path=last"}),
      dir.path());
  INFO(resume.err);
  check_clean_error(resume);
  CHECK(contains(resume.err, "holds no last.ckpt to resume from, but holds " + best + " of an earlier fit here"));
  CHECK(contains(resume.err, "ckpt_path=" + (checkpoints / best).string() + ", the newest"));
  std::map<std::string, std::string> after;
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    after[entry.path().filename().string()] = read_file(entry.path());
  }
  CHECK(after == before);
  // Its fix: resuming from that file continues the run.
  auto resumed = run_process(mlp_fit("run", {"callbacks.model_checkpoint.save_last=false", "trainer.max_epochs=3",
                                             "ckpt_path=" + (checkpoints / best).string()}),
                             dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "resumed from"));
}

TEST_CASE("a file size limit (ulimit -f) ends the fit with an error naming the checkpoint, not a silent signal") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 1000 KiB: below the default mlp's checkpoint (its weights and Adam's two moments: over 2 MB).
  std::vector<std::string> argv = {"/bin/sh", "-c", "ulimit -f 1000 && exec \"$0\" \"$@\""};
  for (const std::string& arg : mlp_fit("run", {"trainer.max_epochs=1"})) {
    if (arg.rfind("model.", 0) != 0) argv.push_back(arg);
  }
  auto fit = run_process(argv, dir.path());
  INFO(fit.err);
  CHECK(fit.exit_code == 1);  // SIGXFSZ would end it with 153 and no word
  check_clean_error(fit);
  CHECK(fit.err.find("cannot write the checkpoint: File too large") != std::string::npos);
  if (fs::exists(fs::path(dir.path()) / "run" / "checkpoints")) {
    for (const auto& entry : fs::directory_iterator(fs::path(dir.path()) / "run" / "checkpoints")) {
      CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
    }
  }

  // With epochs of 600 steps: the failed write of epoch 0's checkpoint (on its background thread)
  // stops the run within a step or so, not after a whole epoch 1 that no checkpoint could keep.
  std::vector<std::string> long_epochs = {"/bin/sh", "-c", "ulimit -f 1000 && exec \"$0\" \"$@\""};
  for (const std::string& arg : mlp_fit("long", {"trainer.max_epochs=3", "data.num_samples=48000"})) {
    if (arg.rfind("model.", 0) != 0) long_epochs.push_back(arg);
  }
  auto stopped = run_process(long_epochs, dir.path());
  INFO(stopped.err);
  CHECK(stopped.exit_code == 1);
  CHECK(stopped.err.find("cannot write the checkpoint: File too large") != std::string::npos);
  const CsvTable rows = read_csv(fs::path(dir.path()) / "long" / "metrics.csv");
  const auto epoch = std::find(rows.columns.begin(), rows.columns.end(), "epoch") - rows.columns.begin();
  const auto val_loss = std::find(rows.columns.begin(), rows.columns.end(), "val/loss") - rows.columns.begin();
  REQUIRE(static_cast<size_t>(val_loss) < rows.columns.size());
  for (const auto& row : rows.rows) {
    // epoch 0 validated (its checkpoint then failed); epoch 1 never came to its validation
    if (row.at(static_cast<size_t>(epoch)) == "1") CHECK(row.at(static_cast<size_t>(val_loss)).empty());
  }
}

TEST_CASE("a run directory copied elsewhere resumes and evaluates its own files, leaving the original alone") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // The training loss falls every epoch here, so each epoch's checkpoint replaces the best before it.
  const std::vector<std::string> by_train_loss = {"callbacks.model_checkpoint.monitor=train/loss",
                                                  "callbacks.model_checkpoint.mode=min"};
  auto fit = run_process(mlp_fit("run", by_train_loss), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path original = fs::path(dir.path()) / "run";
  const fs::path copy = fs::path(dir.path()) / "copy";
  fs::copy(original, copy, fs::copy_options::recursive);
  const fs::path original_best = best_file(original);

  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=copy"}, dir.path());
  INFO(test.err);
  REQUIRE(test.exit_code == 0);
  CHECK(test.err.find("loaded " + (copy / "checkpoints" / original_best.filename()).string()) != std::string::npos);

  // More epochs with a new best each: the copy's old best is replaced, the original's is kept.
  std::vector<std::string> more = by_train_loss;
  more.insert(more.end(), {"trainer.max_epochs=4", "ckpt_path=last"});
  auto resume = run_process(mlp_fit("copy", more), dir.path());
  INFO(resume.err);
  REQUIRE(resume.exit_code == 0);
  CHECK(fs::exists(original_best));
  CHECK_FALSE(fs::exists(copy / "checkpoints" / original_best.filename()));
  CHECK(best_file(copy).filename() == "epoch_003.ckpt");
}

TEST_CASE("a new fit into a directory that holds a training run is refused; nothing of the run changes") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(mlp_fit("run", {"trainer.max_epochs=1"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path run = fs::path(dir.path()) / "run";
  const std::string last = read_file(run / "checkpoints" / "last.ckpt");
  const std::string config = read_file(run / ".hydra" / "config.yaml");
  auto again = run_process(mlp_fit("run", {"trainer.max_epochs=1", "seed=3"}), dir.path());
  check_clean_error(again);
  CHECK(again.err.find("this directory already holds a training run") != std::string::npos);
  CHECK(again.err.find("Resume it with ckpt_path=last") != std::string::npos);
  CHECK(read_file(run / "checkpoints" / "last.ckpt") == last);
  CHECK(read_file(run / ".hydra" / "config.yaml") == config);
  // Resuming it is what the error suggests, and works.
  auto resume = run_process(mlp_fit("run", {"trainer.max_epochs=2", "ckpt_path=last"}), dir.path());
  INFO(resume.err);
  CHECK(resume.exit_code == 0);
}

TEST_CASE("a resume that watches another metric ranks its best checkpoints afresh, as Lightning does") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(mlp_fit("run", {"callbacks.model_checkpoint.save_top_k=2"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path checkpoints = fs::path(dir.path()) / "run" / "checkpoints";
  auto resume =
      run_process(mlp_fit("run", {"callbacks.model_checkpoint.save_top_k=2", "trainer.max_epochs=4", "ckpt_path=last",
                                  "callbacks.model_checkpoint.monitor=val/loss", "callbacks.model_checkpoint.mode=min",
                                  "callbacks.early_stopping.monitor=val/loss", "callbacks.early_stopping.mode=min"}),
                  dir.path());
  INFO(resume.err);
  REQUIRE(resume.exit_code == 0);
  CHECK(contains(resume.err,
                 "was written watching val/acc (mode max) with callbacks.model_checkpoint; this run "
                 "watches val/loss (mode min), so its best checkpoints are ranked afresh by val/loss"));
  CHECK(contains(resume.err,
                 "with callbacks.early_stopping; this run watches val/loss (mode min), so early "
                 "stopping starts afresh on val/loss"));
  // The old scores were val/acc's: compared with val/loss they made the first new loss an
  // "improvement by" the old accuracy, and kept the accuracy's best file as the best.
  CHECK(contains(resume.err, "Metric val/loss improved. New best score"));
  CHECK(fs::exists(checkpoints / "epoch_000.ckpt"));  // the earlier run's files stay
  CHECK(fs::exists(checkpoints / "epoch_001.ckpt"));

  // The best is the resumed epoch (2 or 3) with the lower val/loss in metrics.csv.
  const CsvTable csv = read_csv(fs::path(dir.path()) / "run" / "metrics.csv");
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(csv.columns.begin(), csv.columns.end(), name) - csv.columns.begin());
  };
  const size_t epoch_column = column("epoch");
  const size_t loss_column = column("val/loss");
  REQUIRE(loss_column < csv.columns.size());
  std::map<int, double> val_loss;
  for (const std::vector<std::string>& row : csv.rows) {
    if (row.size() > loss_column && !row[loss_column].empty()) {
      val_loss[std::stoi(row[epoch_column])] = std::stod(row[loss_column]);
    }
  }
  REQUIRE(val_loss.count(2) == 1);
  REQUIRE(val_loss.count(3) == 1);
  const std::string best = val_loss[2] < val_loss[3] ? "epoch_002.ckpt" : "epoch_003.ckpt";
  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=run"}, dir.path());
  INFO(test.err);
  REQUIRE(test.exit_code == 0);
  CHECK(contains(test.err, "loaded " + (checkpoints / best).string()));
}
