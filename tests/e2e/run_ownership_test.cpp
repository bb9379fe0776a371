// A fit never writes into another run's checkpoints, and a resume never loads state that cannot
// fit: a new fit (no ckpt_path) whose checkpoint directory holds another run's *.ckpt files, a
// sweep whose jobs share one, and a resume with another optimizer are refused before anything is
// written; one fit at a time holds a run directory; a resume never writes into another run's
// directory, and one the engine refuses leaves the run's record as it was. On a full disk (a small
// tmpfs the test mounts) nothing is lost without a word. Skipped without the engine
// (TRAINER_LIBTORCH=none).
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// Every directory and file under `root`, files with their bytes.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> entries;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = fs::relative(entry.path(), root).string();
    entries[name] = entry.is_directory() ? std::string("<directory>") : read_file(entry.path());
  }
  return entries;
}

std::vector<std::string> fit(std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=256",
                                   "model.hidden_sizes=[16]",
                                   "trainer.max_epochs=1",
                                   "test_after_fit=false"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Runs argv; as `line` reaches `run`/trainer.log the process is stopped, `disk` filled to its last
// byte, and the process goes on. `filled` says whether that happened before it ended.
ProcessResult run_filling_disk_at(const std::vector<std::string>& argv, const std::string& cwd, const SmallDisk& disk,
                                  const fs::path& run, const std::string& line, bool* filled) {
  const auto logged = [&] { return read_file(run / "trainer.log").find(line) != std::string::npos; };
  const auto fill = [&] {
    disk.fill_leaving(0);
    return true;
  };
  size_t sent = 0;
  ProcessResult result = run_and_signal_each(argv, cwd, {{logged, SIGSTOP}, {fill, SIGCONT}}, &sent);
  disk.empty_filler();
  *filled = sent == 2;
  return result;
}

}  // namespace

// A resume on a disk that fills as it goes: the new record is written, training runs, the
// checkpoint cannot be. The record must be put back (the checkpoints are still the first run's)
// even where the disk has no room left to write it again: it was left naming the refused
// command's settings, and only that failure was said.
TEST_CASE("a resume that fails on a full disk leaves the run's record as it was, at every fill level") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const SmallDisk disk(fs::path(dir.path()) / "disk", 8);
  if (!disk.mounted()) return skip_test("cannot mount a tmpfs here (not root)", Skip::unexpected_in_ci);
  const fs::path run = fs::path(dir.path()) / "disk" / "run";
  for (const uintmax_t free_kib : {4, 8, 12, 16, 32}) {
    INFO("free KiB " << free_kib);
    fs::remove_all(run);
    auto first = run_process(fit({"hydra.run.dir=" + run.string(), "trainer.max_epochs=2"}), dir.path());
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    const auto before = tree(run / ".hydra");
    disk.fill_leaving(free_kib * 1024);
    auto resumed = run_process(
        fit({"hydra.run.dir=" + run.string(), "ckpt_path=last", "trainer.max_epochs=4", "optimizer.lr=0.002"}),
        dir.path());
    disk.empty_filler();
    INFO(resumed.err);
    CHECK(resumed.exit_code != 0);
    check_no_crash(resumed);
    CHECK(resumed.err.find("No space left on device") != std::string::npos);
    CHECK(tree(run / ".hydra") == before);  // the settings of the run its checkpoints hold
    CHECK_FALSE(fs::exists(run / ".before-resume"));
  }
}

// A disk that fills while a fit starts: the log file's flush threw out of spdlog and aborted the
// run ("terminate called", exit 134), and class_names.txt was called a checkpoint.
TEST_CASE("a fit on a disk that fills ends with one clean error at every fill level, never an abort") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const SmallDisk disk(fs::path(dir.path()) / "disk", 4);
  if (!disk.mounted()) return skip_test("cannot mount a tmpfs here (not root)", Skip::unexpected_in_ci);
  const fs::path run = fs::path(dir.path()) / "disk" / "run";
  for (const uintmax_t free_kib : {0, 4, 8, 12, 16, 24, 48}) {
    INFO("free KiB " << free_kib);
    fs::remove_all(run);
    disk.fill_leaving(free_kib * 1024);
    auto result = run_process(fit({"hydra.run.dir=" + run.string(), "trainer.max_epochs=2"}), dir.path());
    disk.empty_filler();
    INFO(result.err);
    CHECK(result.exit_code == 1);
    check_no_crash(result);
    CHECK(result.err.find("LOG ERROR") == std::string::npos);
    CHECK(result.err.find("class_names.txt: cannot write the checkpoint") == std::string::npos);
    CHECK(result.err.find("No space left on device") != std::string::npos);
  }
}

// The disk fills after the fit's last checkpoint, while its test runs: the error said only that
// metrics.csv could not be written, as if the fit had failed. It says the fit finished, where its
// checkpoints are and the command that tests them, which then works once there is room.
TEST_CASE("a full disk in the test after fit says the fit finished and how to test its checkpoints") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const SmallDisk disk(fs::path(dir.path()) / "disk", 32);
  if (!disk.mounted()) return skip_test("cannot mount a tmpfs here (not root)", Skip::unexpected_in_ci);
  const fs::path run = fs::path(dir.path()) / "disk" / "run";
  const std::vector<std::string> argv = {TRAINER_BINARY,
                                         "fit",
                                         "data=synthetic",
                                         "model=cnn",
                                         "logger=csv",
                                         "trainer.max_epochs=1",
                                         "trainer.limit_train_batches=2",
                                         "trainer.limit_val_batches=1",
                                         "trainer.limit_test_batches=4",
                                         "hydra.run.dir=" + run.string()};
  // Filled as it logs the end of its fit, before its test's first metric.
  bool filled = false;
  auto result = run_filling_disk_at(argv, dir.path(), disk, run, "fit finished", &filled);
  INFO(result.err);
  REQUIRE(filled);
  check_clean_error(result);
  CHECK(result.err.find("No space left on device") != std::string::npos);
  CHECK(result.err.find("This was the test after fit: the fit itself finished, and its checkpoints are in " +
                        (run / "checkpoints").string()) != std::string::npos);
  const std::string command = "trainer test ckpt_path=best hydra.run.dir=" + run.string();
  CHECK(result.err.find("Then test them: " + command + ".") != std::string::npos);
  // That command, with room again.
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=" + run.string()}, dir.path());
  INFO(tested.err);
  CHECK(tested.exit_code == 0);
  CHECK(tested.out.find("test/acc=") != std::string::npos);
}

// metrics.csv's rows appended on a full disk were dropped without a word and the fit ended well
// (exit 0, a third of its rows). Rows that cannot be written end the fit with the file's error.
// The plan's job records were written one by one and left behind when the disk filled before its
// index: a later sweep into the directory then lay beside records no index listed. A run's
// half-written .hydra/ stayed without a log saying why.
TEST_CASE("a sweep plan or a run's .hydra files cut short by a full disk are taken back: no directory is left") {
  TempDir dir;
  const SmallDisk disk(fs::path(dir.path()) / "disk", 8);
  if (!disk.mounted()) return skip_test("cannot mount a tmpfs here (not root)", Skip::unexpected_in_ci);
  disk.fill_leaving(24 * 1024);  // room for a few of the 200 job records, not for all
  const fs::path sweep = fs::path(dir.path()) / "disk" / "sweep";
  auto result = run_process(
      {TRAINER_BINARY, "fit", "-m", "data=synthetic", "seed=range(0,200)", "hydra.sweep.dir=" + sweep.string()},
      dir.path());
  disk.empty_filler();
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  CHECK(contains(result.err, "No space left on device"));
  CHECK_FALSE(fs::exists(sweep));

  // A single fit whose .hydra files a full disk cuts short: the directory made for it goes again.
  disk.fill_leaving(4096);
  const fs::path run = fs::path(dir.path()) / "disk" / "run";
  auto fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "hydra.run.dir=" + run.string()}, dir.path());
  disk.empty_filler();
  INFO(fit.err);
  CHECK(fit.exit_code == 1);
  check_no_crash(fit);
  CHECK(contains(fit.err, "No space left on device"));
  CHECK_FALSE(fs::exists(run));
}

TEST_CASE("metrics.csv rows that a full disk cannot take end the fit with an error, never silently") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const SmallDisk disk(fs::path(dir.path()) / "disk", 8);
  if (!disk.mounted()) return skip_test("cannot mount a tmpfs here (not root)", Skip::unexpected_in_ci);
  const fs::path run = fs::path(dir.path()) / "disk" / "run";
  const std::vector<std::string> argv = {TRAINER_BINARY,
                                         "fit",
                                         "data=synthetic",
                                         "model.hidden_sizes=[16]",
                                         "logger=csv",
                                         "trainer.log_every_n_steps=1",
                                         "trainer.max_epochs=3",
                                         "test_after_fit=false",
                                         "callbacks.model_checkpoint.save_top_k=0",
                                         "callbacks.model_checkpoint.save_last=false",
                                         "hydra.run.dir=" + run.string()};
  bool filled = false;
  auto result = run_filling_disk_at(argv, dir.path(), disk, run, "epoch 0 done", &filled);
  INFO(result.err);
  REQUIRE(filled);
  check_clean_error(result);
  CHECK(result.err.find((run / "metrics.csv").string() + ": cannot write the metrics.csv: No space left on device") !=
        std::string::npos);
}

TEST_CASE("a new fit or a sweep never writes into another run's checkpoint directory") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path base(dir.path());
  const fs::path run = base / "runs" / "a";
  auto first = run_process(fit({"hydra.run.dir=runs/a"}), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const auto before = tree(run);
  REQUIRE(before.count("checkpoints/last.ckpt") == 1);

  // A new run directory whose checkpoints would go into the other run's: by dirpath, and by
  // trainer.default_root_dir when dirpath is null.
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"hydra.run.dir=runs/b", "callbacks.model_checkpoint.dirpath=runs/a/checkpoints"},
       "callbacks.model_checkpoint.dirpath (checkpoint directory " + (run / "checkpoints").string() + ")"},
      {{"hydra.run.dir=runs/c", "callbacks.model_checkpoint.dirpath=null", "trainer.default_root_dir=runs/a"},
       "trainer.default_root_dir (checkpoint directory " + (run / "checkpoints").string() + ")"}};
  for (const auto& [extra, where] : refused) {
    auto result = run_process(fit(extra), dir.path());
    INFO(result.err);
    check_clean_error(result);
    CHECK(result.err.find("Error: " + where + ": this directory already holds checkpoints (") != std::string::npos);
    CHECK(result.err.find("of the training run " + run.string() + ")") != std::string::npos);
    CHECK(result.err.find("Resume that run with ckpt_path=last hydra.run.dir=" + run.string() +
                          ", or give this fit another callbacks.model_checkpoint.dirpath") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(base / "runs" / "b"));
  CHECK_FALSE(fs::exists(base / "runs" / "c"));

  // A sweep whose jobs share one directory is refused when it is planned, before any job runs.
  const std::string shared = (base / "shared").string();
  auto sweep = run_process(
      fit({"-m", "seed=1,2", "callbacks.model_checkpoint.dirpath=" + shared, "hydra.sweep.dir=sw"}), dir.path());
  INFO(sweep.err);
  check_clean_error(sweep);
  CHECK(sweep.err.find("Error: callbacks.model_checkpoint.dirpath (checkpoint directory " + shared +
                       "): jobs 0 and 1 of this sweep would write their checkpoints into the same directory") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(base / "sw"));
  CHECK_FALSE(fs::exists(shared));
  // ... and so is a new sweep whose job would write into the other run's checkpoints.
  auto into_run =
      run_process(fit({"-m", "seed=3", "callbacks.model_checkpoint.dirpath=" + (run / "checkpoints").string(),
                       "hydra.sweep.dir=sw2"}),
                  dir.path());
  INFO(into_run.err);
  check_clean_error(into_run);
  CHECK(into_run.err.find("this directory already holds checkpoints") != std::string::npos);
  CHECK_FALSE(fs::exists(base / "sw2"));

  const auto after = tree(run);
  for (const auto& [name, bytes] : before) {
    INFO(name);
    REQUIRE(after.count(name) == 1);
    CHECK(after.at(name) == bytes);
  }
}

TEST_CASE("a resume with another optimizer is refused before anything is written; another scheduler is a warning") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "runs" / "a";
  auto first = run_process(fit({"hydra.run.dir=runs/a"}), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const auto before = tree(run);

  const std::string last = "runs/a/checkpoints/last.ckpt";
  auto sgd = run_process(fit({"hydra.run.dir=runs/a", "ckpt_path=" + last, "optimizer=sgd"}), dir.path());
  INFO(sgd.err);
  check_clean_error(sgd);
  CHECK(sgd.err.find("Error: optimizer=sgd: the checkpoint " + last +
                     " was trained with optimizer=adam; this run has optimizer=sgd: its optimizer state") !=
        std::string::npos);
  CHECK(sgd.err.find("Resume with optimizer=adam") != std::string::npos);
  CHECK(sgd.err.find("INTERNAL ASSERT") == std::string::npos);
  const auto after = tree(run);
  CHECK(after.size() == before.size());
  for (const auto& [name, bytes] : before) {
    INFO(name);
    REQUIRE(after.count(name) == 1);
    CHECK(after.at(name) == bytes);
  }

  // The schedule is a pure function of the step: another one resumes, with one line saying so.
  auto step = run_process(fit({"hydra.run.dir=runs/a", "ckpt_path=last", "scheduler=step", "trainer.max_epochs=2"}),
                          dir.path());
  INFO(step.err);
  CHECK(step.exit_code == 0);
  CHECK(step.err.find("ckpt_path=last: the checkpoint was trained with scheduler=none, this run has scheduler=step: "
                      "the learning rate follows step from step 2 on") != std::string::npos);
}

TEST_CASE("one fit at a time in a run directory, and a resume never writes into another run") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path base(dir.path());
  const fs::path a = base / "runs" / "a";
  const fs::path b = base / "runs" / "b";
  for (const std::string run : {"runs/a", "runs/b"}) {
    auto made =
        run_process(fit({"hydra.run.dir=" + run, "seed=" + std::to_string(run.size() + run.back())}), dir.path());
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
  }
  const auto a_before = tree(a);
  const auto b_before = tree(b);
  auto unchanged = [](const std::map<std::string, std::string>& before, const fs::path& run, bool but_log) {
    const auto after = tree(run);
    for (const auto& [name, bytes] : after) {
      INFO(name);
      REQUIRE(before.count(name) == 1);  // nothing added
      if (!(but_log && name == "trainer.log")) CHECK(before.at(name) == bytes);
    }
    CHECK(after.size() == before.size());
  };

  // Run a's checkpoint resumed in run b's directory: b's last.ckpt and metrics would be a's.
  auto foreign = run_process(
      fit({"hydra.run.dir=runs/b", "ckpt_path=runs/a/checkpoints/last.ckpt", "trainer.max_epochs=2"}), dir.path());
  INFO(foreign.err);
  check_clean_error(foreign);
  CHECK(foreign.err.find("Error: hydra.run.dir=" + b.string() + ": already holds a training run (") !=
        std::string::npos);
  CHECK(foreign.err.find("and ckpt_path=runs/a/checkpoints/last.ckpt is another run's checkpoint") !=
        std::string::npos);
  // Run a resumed with its checkpoints sent into run b's directory.
  auto elsewhere =
      run_process(fit({"hydra.run.dir=runs/a", "ckpt_path=last",
                       "callbacks.model_checkpoint.dirpath=" + (b / "checkpoints").string(), "trainer.max_epochs=2"}),
                  dir.path());
  INFO(elsewhere.err);
  check_clean_error(elsewhere);
  CHECK(elsewhere.err.find("holds the checkpoints of the training run " + b.string() +
                           ", not of hydra.run.dir=" + a.string()) != std::string::npos);
  unchanged(a_before, a, false);
  unchanged(b_before, b, false);

  // A resume the engine refuses (the checkpoint does not fit the model) leaves the run's record as
  // it was: .hydra still names the run's own model (a later ckpt_path=best follows it); only the
  // log tells the attempt.
  auto misfit = run_process(fit({"hydra.run.dir=runs/a", "ckpt_path=last", "model.hidden_sizes=[32]"}), dir.path());
  INFO(misfit.err);
  check_clean_error(misfit);
  CHECK(misfit.err.find("the checkpoint does not fit this model") != std::string::npos);
  CHECK(misfit.err.find("the run's record (.hydra, TensorBoard) is as it was") != std::string::npos);
  unchanged(a_before, a, true);
  CHECK(read_file(a / "trainer.log").size() > a_before.at("trainer.log").size());

  // Two fits into one directory at once: the second is refused while the first runs, naming it.
  BackgroundProcess running(
      fit({"hydra.run.dir=runs/c", "data.num_samples=100000", "data.batch_size=8", "trainer.max_epochs=100"}),
      dir.path(), (base / "first.log").string());
  for (int i = 0; i < 600 && !fs::exists(base / "runs" / "c" / "trainer.log"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(running.running());
  auto second = run_process(fit({"hydra.run.dir=runs/c", "seed=9"}), dir.path());
  INFO(second.err);
  check_clean_error(second);
  CHECK(second.err.find("Error: hydra.run.dir=" + (base / "runs" / "c").string() +
                        ": another trainer fit is running in this directory (pid ") != std::string::npos);
  CHECK(read_file(base / "runs" / "c" / ".hydra" / "overrides.yaml").find("seed=9") == std::string::npos);
  // A fit of its own directory whose checkpoints would go where the running one writes its own
  // (before the first epoch ends no checkpoint is there to refuse it by): refused, naming the key,
  // and the directory made for it goes again.
  const fs::path c_checkpoints = base / "runs" / "c" / "checkpoints";
  auto sharing = run_process(
      fit({"hydra.run.dir=runs/d", "callbacks.model_checkpoint.dirpath=" + c_checkpoints.string()}), dir.path());
  INFO(sharing.err);
  check_clean_error(sharing);
  CHECK(sharing.err.find("Error: callbacks.model_checkpoint.dirpath=" + c_checkpoints.string() +
                         ": another trainer fit is writing its checkpoints in this directory (pid ") !=
        std::string::npos);
  CHECK(sharing.err.find("give this fit a checkpoint directory of its own") != std::string::npos);
  CHECK_FALSE(fs::exists(base / "runs" / "d"));
  running.stop();
  // Its lock goes with it: a resume after it ended is let in.
  auto after = run_process(fit({"hydra.run.dir=runs/c", "ckpt_path=last", "data.num_samples=256"}), dir.path());
  CHECK(after.err.find("another trainer fit is running") == std::string::npos);
  // With another seed than the run's: the validation split is drawn anew, and a warning says so.
  auto reseeded =
      run_process(fit({"hydra.run.dir=runs/b", "ckpt_path=last", "seed=5", "trainer.max_epochs=2"}), dir.path());
  INFO(reseeded.err);
  CHECK(reseeded.exit_code == 0);
  CHECK(reseeded.err.find("ckpt_path=last: this resume's data or seed differs from the run that wrote the checkpoint "
                          "(seed: 104 then, 5 now)") != std::string::npos);
  // Said before the run's log was opened, and kept in it: the run's record shows the two splits.
  const std::string log = read_file(fs::path(dir.path()) / "runs" / "b" / "trainer.log");
  const std::string warning =
      "[warning] - ckpt_path=last: this resume's data or seed differs from the run that "
      "wrote the checkpoint (seed: 104 then, 5 now)";
  const size_t said = log.find(warning);
  CHECK(said != std::string::npos);
  CHECK(log.find(warning, said + 1) == std::string::npos);  // once
}

TEST_CASE("a fit forked from another run's checkpoint keeps its own best files and leaves that run's alone") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  // The fork trains with lr 0, so its val/acc ties run a's best (the last epoch's) and does not beat
  // it: a fork that kept a's top k would look for a's best file in its own checkpoints/ (the test
  // after fit failed: "checkpoint not found").
  TempDir dir;
  const fs::path base(dir.path());
  auto made = run_process(fit({"hydra.run.dir=runs/a", "trainer.max_epochs=2", "test_after_fit=true"}), dir.path());
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const auto a_before = tree(base / "runs" / "a");
  REQUIRE(a_before.count("checkpoints/epoch_001.ckpt") == 1);

  auto forked = run_process(fit({"hydra.run.dir=runs/fork", "ckpt_path=runs/a/checkpoints/last.ckpt",
                                 "trainer.max_epochs=3", "optimizer.lr=0", "test_after_fit=true"}),
                            dir.path());
  INFO(forked.err);
  REQUIRE(forked.exit_code == 0);
  CHECK(forked.err.find("resumed from a checkpoint outside this run's " +
                        (base / "runs" / "fork" / "checkpoints").string() + ": its best file (") != std::string::npos);
  CHECK(forked.err.find("runs/a/checkpoints/epoch_001.ckpt) stays where it is") != std::string::npos);
  const fs::path own_best = base / "runs" / "fork" / "checkpoints" / "epoch_002.ckpt";
  CHECK(fs::exists(own_best));
  CHECK(forked.err.find("testing the best checkpoint " + own_best.string()) != std::string::npos);
  CHECK(printed(forked.out, "test/acc") >= 0.0);
  CHECK(tree(base / "runs" / "a") == a_before);
  // ckpt_path=best of the fork is its own file.
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=best", "hydra.run.dir=runs/fork"}, dir.path());
  INFO(tested.err);
  CHECK(tested.exit_code == 0);
  CHECK(tested.err.find("checkpoint " + own_best.string()) != std::string::npos);
}

TEST_CASE("an evaluation or export never writes among a training run's files, nor over a checkpoint or a device") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path base(dir.path());
  const fs::path a = base / "runs" / "a";
  for (const std::string run : {"runs/a", "runs/b"}) {
    auto made = run_process(fit({"hydra.run.dir=" + run}), dir.path());
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
  }
  const auto before = tree(a);
  const auto other = tree(base / "runs" / "b");
  REQUIRE(::mkfifo((base / "pipe").c_str(), 0644) == 0);
  write_text(base / "afile", "not a directory\n");
  struct Case {
    std::vector<std::string> argv;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"export", "ckpt_path=last", "hydra.run.dir=runs/a", "export_path=runs/a/checkpoints/last.ckpt"},
       "Error: export_path=runs/a/checkpoints/last.ckpt: the export would write over " +
           (a / "checkpoints/last.ckpt").string() + ", one of the files of the training run " + a.string()},
      {{"export", "ckpt_path=last", "hydra.run.dir=runs/a", "export_path=runs/a/metrics.csv"},
       "the export would write over " + (a / "metrics.csv").string()},
      {{"export", "ckpt_path=last", "hydra.run.dir=runs/a", "export_path=runs/b/checkpoints/last.ckpt"},
       "Error: export_path=runs/b/checkpoints/last.ckpt: holds a trainer checkpoint: the export would write over it"},
      {{"export", "ckpt_path=last", "hydra.run.dir=runs/a", "export_path=pipe"},
       "Error: export_path=pipe: is a FIFO or pipe: the export writes a .safetensors file"},
      {{"test", "ckpt_path=runs/a/checkpoints/last.ckpt", "hydra.run.dir=runs/a/checkpoints"},
       "Error: hydra.run.dir=" + (a / "checkpoints").string() + ": lies inside the training run " + a.string()},
      {{"validate", "ckpt_path=runs/a/checkpoints/last.ckpt", "hydra.run.dir=runs/a/tensorboard"},
       "lies inside the training run"},
      // Inside another training run's own directories: its resume was refused afterwards (its
      // checkpoint directory held a run), and its TensorBoard showed the evaluation's events.
      {{"test", "ckpt_path=runs/a/checkpoints/last.ckpt", "hydra.run.dir=runs/b/checkpoints"},
       "Error: hydra.run.dir=" + (base / "runs/b/checkpoints").string() + ": lies inside the training run " +
           (base / "runs/b").string() + " (in its checkpoints/)"},
      {{"predict", "ckpt_path=runs/a/checkpoints/last.ckpt", "hydra.run.dir=runs/b/tensorboard/x"},
       "lies inside the training run " + (base / "runs/b").string() + " (in its tensorboard/)"},
      {{"fit", "data=synthetic", "data.num_samples=256", "trainer.max_epochs=1", "hydra.run.dir=runs/b/checkpoints"},
       "lies inside the training run " + (base / "runs/b").string() +
           " (in its checkpoints/): this run's .hydra, "
           "metrics and log would be written among that run's files, and that run could no longer be resumed"},
      // A file where a directory goes: said before training, naming the key (it failed after an
      // epoch at the first checkpoint, or named the checkpoint directory for hydra.run.dir).
      {{"fit", "data=synthetic", "hydra.run.dir=afile"},
       "Error: hydra.run.dir=" + (base / "afile").string() + ": is a file, not a directory; nothing was written"},
      {{"fit", "data=synthetic", "hydra.run.dir=runs/c", "callbacks.model_checkpoint.dirpath=afile"},
       "afile: is a file, not a directory; nothing was written. Set callbacks.model_checkpoint.dirpath to a "
       "directory"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {TRAINER_BINARY};
    argv.insert(argv.end(), c.argv.begin(), c.argv.end());
    auto result = run_process(argv, dir.path());
    INFO(c.message << "\n" << result.err);
    check_clean_error(result);
    CHECK(result.err.find(c.message) != std::string::npos);
  }
  const auto after = tree(a);
  CHECK(after.size() == before.size());
  for (const auto& [name, bytes] : before) {
    INFO(name);
    REQUIRE(after.count(name) == 1);
    CHECK(after.at(name) == bytes);
  }
  CHECK(tree(base / "runs" / "b") == other);
  CHECK_FALSE(fs::exists(base / "runs" / "c"));  // made for its lock, taken back
  auto resumed = run_process(fit({"hydra.run.dir=runs/b", "ckpt_path=last", "trainer.max_epochs=2"}), dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);

  // A link is written through: the file it names gets the export, the link stays.
  fs::create_symlink("model.safetensors", base / "link.safetensors");
  auto linked = run_process(
      {TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=runs/a", "export_path=link.safetensors"}, dir.path());
  INFO(linked.err);
  REQUIRE(linked.exit_code == 0);
  CHECK(fs::is_symlink(base / "link.safetensors"));
  CHECK(fs::file_size(base / "model.safetensors") > 1000);
}

// Two fits started in the same second share Hydra's default outputs/<date>/<time>: the second was
// refused as if it meant to overwrite the first ("Resume it with ckpt_path=last"). A run
// directory named by the time (${now:...}) that is taken gets _1, as an evaluation's does.
TEST_CASE("a fit whose time-named run directory another fit took gets <dir>_1, never a refusal") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path base(dir.path());
  // The year stands for the second: the same for both fits.
  const std::string by_time = "hydra.run.dir=out/${now:%Y}";
  auto first = run_process(fit({by_time}), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  auto second = run_process(fit({by_time}), dir.path());
  INFO(second.err);
  CHECK(second.exit_code == 0);
  std::vector<std::string> runs;
  for (const auto& entry : fs::directory_iterator(base / "out")) runs.push_back(entry.path().filename().string());
  std::sort(runs.begin(), runs.end());
  REQUIRE(runs.size() == 2);
  CHECK(runs[1] == runs[0] + "_1");
  CHECK(second.err.find("was taken by a run started in the same second: this one runs in") != std::string::npos);
  CHECK(fs::exists(base / "out" / runs[1] / "checkpoints" / "last.ckpt"));
  CHECK(read_file(base / "out" / runs[1] / ".hydra" / "hydra.yaml").find("dir: " + (base / "out" / runs[1]).string()) !=
        std::string::npos);
  // A directory given as it is stays refused: that is a run the user named.
  auto named = run_process(fit({"hydra.run.dir=out/" + runs[0]}), dir.path());
  CHECK(named.exit_code == 1);
  CHECK(named.err.find("this directory already holds a training run") != std::string::npos);
}

// The same for sweeps: a script starting two sweeps at once gave the second a refusal (another
// sweep is running in this directory), or had it resume the first's plan once that ended.
TEST_CASE("a sweep whose time-named directory another sweep took gets <dir>_1") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path base(dir.path());
  const std::string by_time = "hydra.sweep.dir=ms/${now:%Y}";  // the year stands for the second
  auto first = run_process(fit({"-m", "seed=1,2", by_time}), dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  auto second = run_process(fit({"-m", "seed=3,4", by_time}), dir.path());
  INFO(second.err);
  CHECK(second.exit_code == 0);
  std::vector<std::string> sweeps;
  for (const auto& entry : fs::directory_iterator(base / "ms")) sweeps.push_back(entry.path().filename().string());
  std::sort(sweeps.begin(), sweeps.end());
  REQUIRE(sweeps.size() == 2);
  CHECK(sweeps[1] == sweeps[0] + "_1");
  CHECK(contains(second.err, "was taken by a sweep started in the same second: this one runs in"));
  for (const char* job : {"0", "1"}) {
    CHECK(fs::exists(base / "ms" / sweeps[1] / job / "checkpoints" / "last.ckpt"));
    CHECK(contains(read_file(base / "ms" / sweeps[1] / job / ".hydra" / "config.yaml"), "seed: "));
  }
  CHECK(contains(read_file(base / "ms" / sweeps[1] / "1" / ".hydra" / "overrides.yaml"), "seed=4"));
  CHECK(contains(read_file(base / "ms" / sweeps[0] / "1" / ".hydra" / "overrides.yaml"), "seed=2"));
  // A directory given as it is stays the sweep the user named: the same command resumes it.
  auto named = run_process(fit({"-m", "seed=1,2", "hydra.sweep.dir=ms/" + sweeps[0]}), dir.path());
  INFO(named.err);
  CHECK(named.exit_code == 0);
  CHECK(contains(named.err, "2 of 2 jobs already ended, 0 to run"));
}

TEST_CASE("a fit (new or resumed) never writes into a sweep's own directory") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  std::vector<std::string> planned = fit({"-m", "seed=1,2", "hydra.sweep.dir=sweep"});
  auto ran = run_process(planned, dir.path());
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  const auto before = tree(sweep);
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{"hydra.run.dir=sweep"}, {"hydra.run.dir=sweep", "ckpt_path=last"}}) {
    auto refused = run_process(fit(extra), dir.path());
    INFO(refused.err);
    CHECK(refused.exit_code == 1);
    check_clean_error(refused);
    CHECK(contains(refused.err, "hydra.run.dir=" + sweep.string() + ": this is a sweep's directory (it holds .sweep/"));
    CHECK(contains(refused.err, "use trainer sweep resume " + sweep.string()));
    CHECK(tree(sweep) == before);
  }
  // A job's own directory: a single fit there (new or resumed) replaced the job's .hydra record
  // with its own config, and the sweep's plan and summary no longer described the job.
  const std::string job = (sweep / "1").string();
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{"hydra.run.dir=" + job}, {"hydra.run.dir=" + job, "ckpt_path=last"}}) {
    auto refused = run_process(fit(extra), dir.path());
    INFO(refused.err);
    CHECK(refused.exit_code == 1);
    check_clean_error(refused);
    CHECK(contains(refused.err, "this is job 1 of the sweep " + sweep.string() + " ("));
    CHECK(contains(refused.err, "seed=2): a single fit here would replace the job's .hydra record"));
    CHECK(contains(refused.err, "trainer sweep resume " + sweep.string()));
    CHECK(tree(sweep) == before);
  }
}
