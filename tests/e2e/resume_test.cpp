// Killed runs resume exactly: the real trainer binary is SIGKILLed (or interrupted) in the middle
// of a deterministic CPU run, resumed with ckpt_path=last, and must end with the same weights and
// metrics as a run that was never interrupted. Skipped without the engine.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <regex>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// 4096 synthetic samples, 10% held out, batch 128: 29 batches an epoch, 3 epochs; loader workers
// on, as by default.
std::vector<std::string> run_command(const std::string& run_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=4096",
                                   "trainer.max_epochs=3",
                                   "trainer.deterministic=true",
                                   "trainer.log_every_n_steps=7",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

struct Resumed {
  ProcessResult result;
  int64_t epoch = -1, batch = -1;
};

Resumed resume(const std::string& run_dir, const std::string& cwd, std::vector<std::string> extra) {
  extra.push_back("ckpt_path=last");
  Resumed resumed;
  resumed.result = run_process(run_command(run_dir, extra), cwd);
  std::smatch match;
  std::regex pattern("resumed from .* at epoch ([0-9]+), batch ([0-9]+)");
  if (std::regex_search(resumed.result.err, match, pattern)) {
    resumed.epoch = std::stoll(match[1]);
    resumed.batch = std::stoll(match[2]);
  }
  return resumed;
}

// The final weights as bytes: last.ckpt exported to .safetensors (tensors plus epoch and step).
std::string final_weights(const fs::path& run) {
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=" + run.string(),
                               "export_path=" + (run / "final.safetensors").string()});
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  return read_file(run / "final.safetensors");
}

// Each row's step and its values of `columns`, for the rows that have any of them.
std::vector<std::string> logged_values(const CsvTable& table, const std::vector<std::string>& columns) {
  std::vector<size_t> at;
  size_t step = table.columns.size();
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i] == "step") step = i;
    if (std::find(columns.begin(), columns.end(), table.columns[i]) != columns.end()) at.push_back(i);
  }
  REQUIRE(step < table.columns.size());
  REQUIRE(at.size() == columns.size());
  std::vector<std::string> rows;
  for (const auto& row : table.rows) {
    std::string values;
    bool any = false;
    for (size_t i : at) {
      const std::string cell = i < row.size() ? row[i] : "";
      any = any || !cell.empty();
      values += "," + cell;
    }
    if (any) rows.push_back(row[step] + values);
  }
  return rows;
}

// Same final weights, bit for bit; the same test metrics of the final model and the same last
// validation metrics (full precision in metrics.csv).
void check_same_end(const std::string& out_a, const fs::path& run_a, const std::string& out_b, const fs::path& run_b) {
  const std::string weights_a = final_weights(run_a);
  CHECK(weights_a.size() > 900000);  // 235,146 float32 parameters
  CHECK((weights_a == final_weights(run_b)));
  CHECK(printed(out_a, "test/loss") == printed(out_b, "test/loss"));
  CHECK(printed(out_a, "test/acc") == printed(out_b, "test/acc"));
  CsvTable a = read_csv(run_a / "metrics.csv");
  CsvTable b = read_csv(run_b / "metrics.csv");
  REQUIRE(!a.last("val/loss").empty());
  CHECK(a.last("val/loss") == b.last("val/loss"));
  CHECK(a.last("train/loss_epoch") == b.last("train/loss_epoch"));
  // Every logged value too, the resumed epoch's included: its step lines (a line's interval may
  // cross the checkpoint) and its epoch means (the sums of the batches before the checkpoint
  // are kept in it). Before they were, the resumed epoch's mean covered only the batches after it.
  const std::vector<std::string> metrics = {"train/loss",      "train/acc", "train/loss_epoch",
                                            "train/acc_epoch", "val/loss",  "val/acc"};
  const std::vector<std::string> logged_a = logged_values(a, metrics);
  CHECK(logged_a.size() == 15);  // 3 epochs: 12 step lines, 3 rows of epoch means and validation
  CHECK(logged_a == logged_values(b, metrics));
}

}  // namespace

TEST_CASE("a run killed with SIGKILL resumes exactly: at an epoch boundary and mid-epoch") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // Test the best checkpoint's weights would hide differences in the last epoch: test the final model.
  const std::vector<std::string> final_model = {"callbacks.model_checkpoint.save_top_k=0"};
  auto whole = run_process(run_command("whole", final_model), dir.path());
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);

  SECTION("killed after the first epoch's checkpoint: resumes at the next epoch's first batch") {
    const fs::path last = root / "boundary" / "checkpoints" / "last.ckpt";
    bool killed = false;
    auto first = run_and_signal(
        run_command("boundary", final_model), dir.path(), [&] { return fs::exists(last); }, SIGKILL, &killed);
    REQUIRE(killed);
    CHECK(first.exit_code == 128 + SIGKILL);
    Resumed resumed = resume("boundary", dir.path(), final_model);
    INFO(resumed.result.err);
    REQUIRE(resumed.result.exit_code == 0);
    CHECK(resumed.epoch >= 1);
    CHECK(resumed.batch == 0);
    check_same_end(whole.out, root / "whole", resumed.result.out, root / "boundary");
  }

  SECTION("killed after a mid-epoch checkpoint (every 10 steps): resumes inside the epoch") {
    std::vector<std::string> extra = final_model;
    extra.push_back("callbacks.model_checkpoint.every_n_train_steps=10");
    const fs::path last = root / "mid" / "checkpoints" / "last.ckpt";
    bool killed = false;
    auto first = run_and_signal(
        run_command("mid", extra), dir.path(), [&] { return fs::exists(last); }, SIGKILL, &killed);
    REQUIRE(killed);
    CHECK(first.exit_code == 128 + SIGKILL);
    Resumed resumed = resume("mid", dir.path(), extra);
    INFO(resumed.result.err);
    REQUIRE(resumed.result.exit_code == 0);
    CHECK(resumed.batch > 0);  // inside an epoch: steps 10, 20 (epoch 0) or 30 (epoch 1, batch 1)...
    CHECK(resumed.batch < 29);
    check_same_end(whole.out, root / "whole", resumed.result.out, root / "mid");
  }
}

TEST_CASE("SIGINT finishes the step, writes a checkpoint, exits non-zero saying how to resume") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const fs::path log = root / "run" / "trainer.log";
  bool interrupted = false;
  // Interrupt once training has logged its first steps.
  auto first = run_and_signal(
      run_command("run"), dir.path(), [&] { return read_file(log).find(" step 7 ") != std::string::npos; }, SIGINT,
      &interrupted);
  INFO(first.err);
  REQUIRE(interrupted);
  CHECK(first.exit_code != 0);
  check_no_crash(first);
  CHECK(first.exit_code != 128 + SIGINT);  // handled, not killed
  CHECK(first.err.find("ckpt_path=last") != std::string::npos);
  CHECK(first.err.find("hydra.run.dir=") != std::string::npos);
  CHECK(fs::exists(root / "run" / "checkpoints" / "last.ckpt"));

  // What a fit killed in the middle of a checkpoint write leaves: its temporary file. The resume
  // removes those of processes that are gone (pid_max is no process's), not a live one's (this
  // test's).
  const fs::path checkpoints = root / "run" / "checkpoints";
  const std::string dead_pid =
      read_file("/proc/sys/kernel/pid_max").substr(0, read_file("/proc/sys/kernel/pid_max").find('\n'));
  const fs::path abandoned = checkpoints / ("last.ckpt.tmp." + dead_pid + ".3");
  const fs::path live = checkpoints / ("epoch_000.ckpt.tmp." + std::to_string(getpid()) + ".0");
  write_text(abandoned, std::string(3 * 1024 * 1024, 'x'));
  write_text(live, "being written");

  Resumed resumed = resume("run", dir.path(), {});
  INFO(resumed.result.err);
  CHECK(resumed.result.exit_code == 0);
  CHECK(resumed.epoch >= 0);
  CHECK_FALSE(fs::exists(abandoned));
  CHECK(fs::exists(live));
  CHECK(resumed.result.err.find("fit: removed 1 unfinished write(s) a killed process left in " + checkpoints.string() +
                                " (3 MiB): last.ckpt.tmp." + dead_pid + ".3") != std::string::npos);

  // With trainer.enable_checkpointing=false there is nothing to resume from: the error says so (it
  // named a last.ckpt that was never written, and the resume it advised started from scratch).
  const fs::path unsaved_log = root / "unsaved" / "trainer.log";
  bool stopped = false;
  auto unsaved = run_and_signal(
      run_command("unsaved", {"trainer.enable_checkpointing=false"}), dir.path(),
      [&] { return read_file(unsaved_log).find(" step 7 ") != std::string::npos; }, SIGTERM, &stopped);
  INFO(unsaved.err);
  REQUIRE(stopped);
  check_clean_error(unsaved);
  CHECK(contains(unsaved.err, "no checkpoint was written (trainer.enable_checkpointing=false)"));
  CHECK_FALSE(contains(unsaved.err, "ckpt_path=last"));
  CHECK_FALSE(fs::exists(root / "unsaved" / "checkpoints" / "last.ckpt"));
  // The run's log ends with the error too (it ended mid-run, without a word of why).
  const std::string log_text = read_file(unsaved_log);
  CHECK(contains(log_text.substr(log_text.rfind("\n", log_text.size() - 2)), "Error: signal 15: stopped after step"));
}

TEST_CASE("a second Ctrl-C quits at once; the first waits for fit's validation to finish") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  const fs::path log = run / "trainer.log";
  // Two steps, then 6,000 validation batches of one image through a wide mlp: seconds in which
  // the first Ctrl-C only waits.
  const std::vector<std::string> argv = {TRAINER_BINARY,
                                         "fit",
                                         "model.hidden_sizes=[2048,2048]",
                                         "data.batch_size=1",
                                         "trainer.max_epochs=1",
                                         "trainer.limit_train_batches=2",
                                         "trainer.log_every_n_steps=1",
                                         "trainer.num_sanity_val_steps=0",
                                         "hydra.run.dir=run"};
  std::chrono::steady_clock::time_point first_sent;
  const auto after_step_2 = [&] {
    if (!contains(read_file(log), " step 2 ")) return false;
    first_sent = std::chrono::steady_clock::now();
    return true;
  };
  const auto half_a_second_later = [&] {
    return std::chrono::steady_clock::now() - first_sent > std::chrono::milliseconds(500);
  };
  size_t sent = 0;
  const auto quit =
      run_and_signal_each(argv, dir.path(), {{after_step_2, SIGINT}, {half_a_second_later, SIGINT}}, &sent);
  INFO(quit.out << quit.err);
  REQUIRE(sent == 2);
  CHECK(quit.exit_code == 128 + SIGINT);  // the signal's default action, as the user asked
  CHECK(contains(quit.err, "stopping after the current step or batch"));
  CHECK(contains(quit.err, "Press Ctrl-C again to quit at once without saving."));
  CHECK(contains(quit.err, "second Ctrl-C (SIGINT): quitting now; nothing more is saved."));
  CHECK_FALSE(contains(read_file(log), "epoch 0 done"));  // the validation never ended
  CHECK_FALSE(fs::exists(run / "checkpoints" / "last.ckpt"));

  // The dead process holds nothing: the same run directory takes a new fit.
  std::vector<std::string> again = argv;
  again.insert(again.end() - 1, {"trainer.limit_val_batches=2", "test_after_fit=false"});
  const auto rerun = run_process(again, dir.path());
  INFO(rerun.err);
  CHECK(rerun.exit_code == 0);
  CHECK(fs::exists(run / "checkpoints" / "last.ckpt"));
}

TEST_CASE("trainer.max_time stops with Lightning's message after a validation, and counts a resume's earlier time") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "timed";
  // Fashion-MNIST's 422 batches an epoch take about a second here: 1 second ends the fit early,
  // inside an epoch with trainer.min_epochs=0 (the shipped 1 holds the stop until epoch 0 ends).
  const std::vector<std::string> timed = {TRAINER_BINARY,          "fit",
                                          "trainer.max_epochs=50", "test_after_fit=false",
                                          "trainer.min_epochs=0",  "hydra.run.dir=timed"};
  const auto fit_steps = [](const std::string& err) {
    std::smatch match;
    static const std::regex pattern("fit finished in [0-9.]+ s, ([0-9]+) steps");
    return std::regex_search(err, match, pattern) ? std::stoll(match[1]) : int64_t{-1};
  };
  std::vector<std::string> first = timed;
  first.push_back("trainer.max_time=1");
  auto stopped = run_process(first, dir.path());
  INFO(stopped.err);
  REQUIRE(stopped.exit_code == 0);
  CHECK(contains(stopped.err, "Time limit reached. Elapsed time is 0:00:01. Signaling Trainer to stop."));
  const int64_t steps = fit_steps(stopped.err);
  REQUIRE(steps > 0);
  CHECK(steps < 50 * 422);
  // The stop validated at its step, as Lightning validates when its Timer stops the fit.
  const CsvTable csv = read_csv(run / "metrics.csv");
  size_t step_column = 0, acc_column = 0;
  for (size_t i = 0; i < csv.columns.size(); ++i) {
    if (csv.columns[i] == "step") step_column = i;
    if (csv.columns[i] == "val/acc") acc_column = i;
  }
  REQUIRE(acc_column > 0);
  CHECK(csv.rows.back()[step_column] == std::to_string(steps));
  CHECK_FALSE(csv.rows.back()[acc_column].empty());

  // Resumed with the same limit: the time was spent, so not one more step (it trained a second more).
  std::vector<std::string> again = first;
  again.push_back("ckpt_path=last");
  auto spent = run_process(again, dir.path());
  INFO(spent.err);
  REQUIRE(spent.exit_code == 0);
  CHECK(contains(spent.err, "Time limit reached."));
  CHECK(fit_steps(spent.err) == steps);

  // A longer limit trains on from there, for the time left. 4 s, not 2: the first fit's elapsed
  // time counts its closing validation, which took 1.2 s (2.2 s in all) on a loaded machine.
  std::vector<std::string> longer = timed;
  longer.insert(longer.end(), {"trainer.max_time=4", "ckpt_path=last"});
  auto more = run_process(longer, dir.path());
  INFO(more.err);
  REQUIRE(more.exit_code == 0);
  CHECK(fit_steps(more.err) > steps);
  CHECK(contains(more.err, "Time limit reached. Elapsed time is 0:00:04."));
}

TEST_CASE("trainer.max_time waits for trainer.min_epochs, as Lightning's Timer does, on a resume too") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // An epoch of Fashion-MNIST's 422 batches takes about a second here: 1 second is spent in epoch
  // 0 or 1, and the fit goes on to the end of epoch 2 (min_epochs=3), not one step more.
  const std::vector<std::string> timed = {TRAINER_BINARY,          "fit",
                                          "trainer.max_epochs=50", "trainer.max_time=1",
                                          "test_after_fit=false",  "trainer.min_epochs=3",
                                          "hydra.run.dir=held"};
  const auto fit_steps = [](const std::string& err) {
    std::smatch match;
    static const std::regex pattern("fit finished in [0-9.]+ s, ([0-9]+) steps");
    return std::regex_search(err, match, pattern) ? std::stoll(match[1]) : int64_t{-1};
  };
  auto held = run_process(timed, dir.path());
  INFO(held.err);
  REQUIRE(held.exit_code == 0);
  CHECK(contains(held.err, "Time limit reached."));
  CHECK(contains(held.err, "Trainer was signaled to stop but the required trainer.min_epochs=3 has not been met"));
  CHECK(contains(held.err, "Training will continue to the end of epoch 2."));
  CHECK(fit_steps(held.err) == 3 * 422);

  // Resumed after the time was spent, with a higher minimum: one more whole epoch.
  std::vector<std::string> again = timed;
  again.insert(again.end(), {"trainer.min_epochs=4", "ckpt_path=last"});
  auto more = run_process(again, dir.path());
  INFO(more.err);
  REQUIRE(more.exit_code == 0);
  CHECK(contains(more.err, "has not been met (3 epoch(s) done)"));
  CHECK(fit_steps(more.err) == 4 * 422);
  CHECK(contains(read_file(fs::path(dir.path()) / "held" / "trainer.log"), "epoch 3 done"));
}

TEST_CASE("a resume inside an epoch with another data.batch_size says samples are skipped or seen twice") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> base = {TRAINER_BINARY,         "fit",
                                         "data=synthetic",       "data.num_samples=2048",
                                         "trainer.max_epochs=1", "test_after_fit=false",
                                         "hydra.run.dir=run"};
  std::vector<std::string> first = base;
  first.insert(first.end(), {"data.batch_size=64", "trainer.max_steps=10"});
  auto stopped = run_process(first, dir.path());
  INFO(stopped.err);
  REQUIRE(stopped.exit_code == 0);

  std::vector<std::string> bigger = base;
  bigger.insert(bigger.end(), {"data.batch_size=128", "ckpt_path=last"});
  auto resumed = run_process(bigger, dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "stopped inside epoch 0 after 10 batch(es) of 64 samples; this run's batches hold 128"));
  CHECK(contains(resumed.err, "at sample 1280 of the epoch's order, not 640: samples of this epoch are skipped"));
  CHECK(contains(resumed.err, "Resume with data.batch_size=64 to go on exactly"));
}

TEST_CASE("a resume that finds metrics.csv damaged keeps it aside, says so, and logs into a new one") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> base = {
      TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=512", "test_after_fit=false", "hydra.run.dir=run"};
  std::vector<std::string> first = base;
  first.push_back("trainer.max_epochs=1");
  auto done = run_process(first, dir.path());
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  const fs::path metrics = fs::path(dir.path()) / "run" / "metrics.csv";
  write_text(metrics, "epoch,step,val/acc\n0,4,not-a-number\n");  // edited by hand, or another tool's

  std::vector<std::string> more = base;
  more.insert(more.end(), {"trainer.max_epochs=2", "ckpt_path=last"});
  auto resumed = run_process(more, dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "metrics.csv is damaged (line 2's val/acc is 'not-a-number', not a number)"));
  CHECK(contains(resumed.err, "the file is kept as "));
  CHECK(read_file(fs::path(metrics.string() + ".damaged")) == "epoch,step,val/acc\n0,4,not-a-number\n");
  // The new file holds the second epoch's rows, under a header of trainer's.
  const std::string text = read_file(metrics);
  CHECK(text.rfind("epoch,step,", 0) == 0);
  CHECK(contains(text, "\n1,"));
  CHECK_FALSE(contains(text, "not-a-number"));
}

TEST_CASE("a resume that finds metrics.csv deleted says the rows before the checkpoint are lost") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> base = {
      TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=512", "test_after_fit=false", "hydra.run.dir=run"};
  std::vector<std::string> first = base;
  first.push_back("trainer.max_epochs=1");
  auto done = run_process(first, dir.path());
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  const fs::path metrics = fs::path(dir.path()) / "run" / "metrics.csv";
  const std::string before = read_file(metrics);
  const auto rows = std::count(before.begin(), before.end(), '\n') - 1;
  REQUIRE(rows > 0);
  fs::remove(metrics);

  std::vector<std::string> more = base;
  more.insert(more.end(), {"trainer.max_epochs=2", "ckpt_path=last"});
  auto resumed = run_process(more, dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "metrics.csv holds no row, but it held " + std::to_string(rows) +
                                  " when the checkpoint (step 4) was written: the file was deleted or emptied since"));
  // The new file holds the second epoch's rows only.
  const std::string text = read_file(metrics);
  CHECK(text.rfind("epoch,step,", 0) == 0);
  CHECK(contains(text, "\n1,"));
  CHECK_FALSE(contains(text, "\n0,"));
}
