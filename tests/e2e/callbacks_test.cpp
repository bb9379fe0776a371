// Callbacks, loggers and the console through the real trainer binary: early stopping, the
// learning-rate monitor, TensorBoard event files read back by TensorBoard itself, and the
// progress bar on a terminal versus plain lines elsewhere. Skipped without the engine.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

std::vector<std::string> small_fit(const std::string& run_dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=2048",
                                   "data.num_workers=0",
                                   "trainer.log_every_n_steps=5",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("early stopping ends fit when the monitored metric stops improving, not before min_epochs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // val/loss must fall by more than 10 per epoch: never, so with patience 2 fit stops after 3 epochs.
  const std::vector<std::string> strict = {"trainer.max_epochs=8", "callbacks.early_stopping.monitor=val/loss",
                                           "callbacks.early_stopping.mode=min", "callbacks.early_stopping.patience=2",
                                           "callbacks.early_stopping.min_delta=10"};
  auto stopped = run_process(small_fit("stop", strict), dir.path());
  INFO(stopped.err);
  REQUIRE(stopped.exit_code == 0);
  CHECK(stopped.err.find("did not improve in the last 2 records") != std::string::npos);
  CHECK(stopped.err.find("epoch 2 done") != std::string::npos);
  CHECK(stopped.err.find("epoch 3 done") == std::string::npos);

  std::vector<std::string> held = strict;
  held.push_back("trainer.min_epochs=5");
  auto held_back = run_process(small_fit("held", held), dir.path());
  INFO(held_back.err);
  REQUIRE(held_back.exit_code == 0);
  CHECK(held_back.err.find("held back: trainer.min_epochs=5") != std::string::npos);
  // Said once, and honoured at the end of epoch 4 as Lightning's should_stop stays set.
  CHECK(count(held_back.err, "held back") == 1);
  CHECK(held_back.err.find("trainer.min_epochs=5 reached: stopping, as asked before (Monitored metric val/loss") !=
        std::string::npos);
  CHECK(held_back.err.find("epoch 4 done") != std::string::npos);
  CHECK(held_back.err.find("epoch 5 done") == std::string::npos);

  auto unknown =
      run_process(small_fit("bad", {"callbacks.early_stopping.monitor=val/f1", "trainer.max_epochs=1"}), dir.path());
  CHECK(unknown.exit_code == 1);
  check_no_crash(unknown);
  CHECK(unknown.err.find("val/f1") != std::string::npos);
  CHECK(unknown.err.find("val/loss") != std::string::npos);  // lists what is logged
}

TEST_CASE("metrics reach metrics.csv and TensorBoard event files, with the learning rate", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto result = run_process(small_fit("run", {"trainer.max_epochs=2", "logger=many_loggers", "scheduler=cosine",
                                              "callbacks.lr_monitor.logging_interval=step"}),
                            dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CsvTable csv = read_csv(run / "metrics.csv");
  REQUIRE(csv.columns.size() > 2);
  CHECK(csv.columns[0] == "epoch");
  CHECK(csv.columns[1] == "step");
  for (const char* column : {"train/loss", "train/acc", "lr-Adam", "val/loss", "val/acc", "test/acc"}) {
    INFO(column);
    CHECK(!csv.last(column).empty());
  }
  for (const auto& row : csv.rows) CHECK(row.size() <= csv.columns.size());

  bool found_events = false;
  for (const auto& entry : fs::directory_iterator(run / "tensorboard")) {
    found_events = found_events || entry.path().filename().string().find("tfevents") != std::string::npos;
  }
  CHECK(found_events);
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: the event file was not read back with TensorBoard",
                     Skip::unexpected_in_ci);
  }
  auto read = run_process(
      {python, std::string(TRAINER_SOURCE_DIR) + "/tests/formats/read_tensorboard.py", (run / "tensorboard").string()});
  INFO(read.err);
  REQUIRE(read.exit_code == 0);
  // Every logged value: each train/loss of metrics.csv appears with its step.
  size_t train_rows = 0;
  size_t loss_column = 0;
  while (csv.columns[loss_column] != "train/loss") ++loss_column;
  for (const auto& row : csv.rows) {
    if (loss_column < row.size() && !row[loss_column].empty()) {
      ++train_rows;
      std::ostringstream line;
      line << "train/loss " << row[1] << " ";
      CHECK(read.out.find(line.str()) != std::string::npos);
    }
  }
  CHECK(train_rows >= 4);
  CHECK(count(read.out, "train/loss ") == train_rows);
  CHECK(count(read.out, "val/acc ") == 2);
  CHECK(count(read.out, "lr-Adam ") >= 4);
  CHECK(count(read.out, "test/acc ") == 1);
}

TEST_CASE("a terminal gets a live progress bar; a pipe and the log file get plain lines") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // Not a terminal: periodic lines on the console, no bar.
  auto piped = run_process(small_fit("piped", {"trainer.max_epochs=1"}), dir.path());
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err.find("step 5 batch 5/") != std::string::npos);
  CHECK(piped.err.find("\033[K") == std::string::npos);

  // A terminal (script(1) runs the command on a pseudo-terminal and copies what it shows).
  std::string command;
  for (const std::string& arg : small_fit("tty", {"trainer.max_epochs=2", "data.num_samples=8192"})) {
    command += "'" + arg + "' ";
  }
  auto tty = run_process({"/usr/bin/script", "-qefc", command, "/dev/null"}, dir.path());
  INFO(tty.out << tty.err);
  REQUIRE(tty.exit_code == 0);
  CHECK(tty.out.find("Epoch 0/1 |") != std::string::npos);
  CHECK(tty.out.find("samples/s ETA ") != std::string::npos);
  CHECK(tty.out.find("\r\033[K") != std::string::npos);
  CHECK(tty.out.find("step 5 batch 5/") == std::string::npos);  // the bar replaces them on screen...
  CHECK(tty.out.find("epoch 1 done") != std::string::npos);
  const std::string log = read_file(fs::path(dir.path()) / "tty" / "trainer.log");
  CHECK(log.find("step 5 batch 5/") != std::string::npos);  // ...and the log file keeps them
  CHECK(log.find("\033[K") == std::string::npos);
}

TEST_CASE("val_check_interval validates inside the epoch, as Lightning's val_check_batch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 12 training batches per epoch.
  const std::vector<std::string> twelve = {"trainer.max_epochs=2", "trainer.limit_train_batches=12"};

  SECTION("a share of the epoch: 0.25 of 12 batches validates after batches 3, 6 and 9, and at the end") {
    std::vector<std::string> extra = twelve;
    extra.push_back("trainer.val_check_interval=0.25");
    auto result = run_process(small_fit("quarter", extra), dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    for (const char* mark : {"batch 3/12: val/loss", "batch 6/12: val/loss", "batch 9/12: val/loss"}) {
      CHECK(count(result.err, mark) == 2);  // once in each epoch
    }
    CHECK(count(result.err, "batch 12/12: val/loss") == 0);  // the epoch's end reports it
    CHECK(count(result.err, " val/loss ") == 8);             // 4 validations x 2 epochs
    CsvTable csv = read_csv(fs::path(dir.path()) / "quarter" / "metrics.csv");
    size_t val_column = 0;
    while (csv.columns[val_column] != "val/acc") ++val_column;
    size_t val_rows = 0;
    for (const auto& row : csv.rows) val_rows += val_column < row.size() && !row[val_column].empty();
    CHECK(val_rows == 8);
  }

  SECTION("a number of batches: every 5 of 12 validates after 5 and 10, not at the epoch's end") {
    std::vector<std::string> extra = twelve;
    extra.push_back("trainer.val_check_interval=5");
    extra.push_back("callbacks.model_checkpoint.filename='e{epoch}'");  // repeats within an epoch
    extra.push_back("callbacks.model_checkpoint.save_top_k=-1");
    auto result = run_process(small_fit("five", extra), dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(count(result.err, "batch 5/12: val/loss") == 2);
    CHECK(count(result.err, "batch 10/12: val/loss") == 2);
    CHECK(count(result.err, " val/loss ") == 4);
    // Every validation wrote a top-k file; repeated names get -v1, as Lightning's do.
    const fs::path checkpoints = fs::path(dir.path()) / "five" / "checkpoints";
    for (const char* name : {"e0.ckpt", "e0-v1.ckpt", "e1.ckpt", "e1-v1.ckpt", "last.ckpt"}) {
      INFO(name);
      CHECK(fs::exists(checkpoints / name));
    }
  }

  SECTION("early stopping acts on a validation inside the epoch") {
    std::vector<std::string> extra = twelve;
    extra.push_back("trainer.val_check_interval=3");
    for (const char* o : {"callbacks.early_stopping.monitor=val/loss", "callbacks.early_stopping.mode=min",
                          "callbacks.early_stopping.patience=1", "callbacks.early_stopping.min_delta=10"}) {
      extra.push_back(o);
    }
    std::vector<std::string> no_minimum = extra;
    no_minimum.push_back("trainer.min_epochs=0");
    auto result = run_process(small_fit("early", no_minimum), dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(count(result.err, "batch 6/12: val/loss") == 1);
    CHECK(count(result.err, "batch 9/12: val/loss") == 0);  // stopped right after the second one
    CHECK(result.err.find("did not improve") != std::string::npos);

    // The shipped trainer.min_epochs=1 (the template's) holds the stop until epoch 0 ends, as
    // Lightning's fit loop does: its validations go on, and epoch 1 never starts.
    auto held = run_process(small_fit("held", extra), dir.path());
    INFO(held.err);
    REQUIRE(held.exit_code == 0);
    CHECK(count(held.err, "batch 9/12: val/loss") == 1);
    CHECK(contains(held.err, "held back: trainer.min_epochs=1 not reached yet"));
    CHECK(contains(held.err, "epoch 0 done"));
    CHECK_FALSE(contains(held.err, "epoch 1 "));
  }

  SECTION("more batches than an epoch holds is an error naming the key and the range") {
    std::vector<std::string> extra = twelve;
    extra.push_back("trainer.val_check_interval=20");
    auto result = run_process(small_fit("bad", extra), dir.path());
    CHECK(result.exit_code == 1);
    check_no_crash(result);
    CHECK(result.err.find("trainer.val_check_interval") != std::string::npos);
    CHECK(result.err.find("from 1 to 12") != std::string::npos);
  }
}

TEST_CASE("lr_monitor with logging_interval null logs at the scheduler's interval") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto lr_rows = [&](const std::string& name, const std::string& interval) {
    auto result =
        run_process(small_fit(name, {"trainer.max_epochs=2", "trainer.limit_train_batches=10", "scheduler=cosine",
                                     "scheduler.interval=" + interval, "callbacks.lr_monitor.logging_interval=null"}),
                    dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CsvTable csv = read_csv(fs::path(dir.path()) / name / "metrics.csv");
    size_t column = 0;
    while (column < csv.columns.size() && csv.columns[column] != "lr-Adam") ++column;
    size_t rows = 0;
    for (const auto& row : csv.rows) rows += column < row.size() && !row[column].empty();
    return rows;
  };
  CHECK(lr_rows("per_epoch", "epoch") == 2);  // once per epoch
  CHECK(lr_rows("per_step", "step") == 4);    // every 5 steps: 2 epochs x 10 batches
}

TEST_CASE("a step-based save and the epoch's end at one step keep one best file for that model") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 12 training batches an epoch (limit_train_batches): a save every 6 steps falls on each
  // epoch's last step too.
  auto result = run_process(
      small_fit("run", {"trainer.max_epochs=2", "trainer.limit_train_batches=12",
                        "callbacks.model_checkpoint.every_n_train_steps=6", "callbacks.model_checkpoint.save_top_k=-1",
                        "callbacks.model_checkpoint.monitor=train/loss", "callbacks.model_checkpoint.mode=min",
                        "callbacks.model_checkpoint.filename='s{step}'"}),
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(dir.path()) / "run" / "checkpoints")) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  // Steps 6, 12, 18, 24, each once (no s12-v1.ckpt: the epoch's end re-scores step 12's model).
  CHECK(names == std::vector<std::string>{"last.ckpt", "s12.ckpt", "s18.ckpt", "s24.ckpt", "s6.ckpt"});
}

TEST_CASE("a share of validation batches that rounds to none is an error naming the key, as in Lightning") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 2048 samples, 10% validation: 205 samples, 2 batches of 128; a tenth of them is no batch.
  for (const std::string& key : {std::string("trainer.limit_val_batches"), std::string("trainer.overfit_batches")}) {
    auto result = run_process(small_fit("run-" + key, {"trainer.max_epochs=1", key + "=0.1"}), dir.path());
    INFO(result.err);
    CHECK(result.exit_code == 1);
    check_clean_error(result);
    CHECK(contains(result.err, "Error: " + key +
                                   ": 0.1 of the 2 validation batch(es) is less than one batch. "
                                   "Raise it to at least 0.5"));
  }
}
