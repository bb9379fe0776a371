// Every shipped key does what Lightning (or lightning-hydra-template) says: each test sets one key
// and checks its effect against the same run without it. Skipped without the engine
// (TRAINER_LIBTORCH=none), except the config-only paths.data_dir check.
#include <filesystem>
#include <set>

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
                                   "data=synthetic",       "data.num_samples=512",
                                   "data.batch_size=32",   "model.hidden_sizes=[16]",
                                   "trainer.max_epochs=2", "trainer.num_sanity_val_steps=0",
                                   "test_after_fit=false", "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::set<std::string> checkpoint_files(const fs::path& dir) {
  std::set<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

int rows_with(const CsvTable& table, const std::string& column) {
  int n = 0;
  const auto at = std::find(table.columns.begin(), table.columns.end(), column);
  if (at == table.columns.end()) return 0;
  const size_t index = static_cast<size_t>(at - table.columns.begin());
  for (const auto& row : table.rows) n += index < row.size() && !row[index].empty();
  return n;
}

}  // namespace

TEST_CASE("trainer.overfit_batches limits training and validation to that many batches, unshuffled") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(small_fit("run", {"trainer.overfit_batches=3", "trainer.max_epochs=3"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("trainer.overfit_batches: training and validation limited to 3 batches, training shuffle off") !=
        std::string::npos);
  CHECK(fit.err.find("fit finished in") != std::string::npos);
  CHECK(fit.err.find(", 9 steps") != std::string::npos);  // 3 epochs x 3 batches (45 without the key)
  // debug=overfit (overfit_batches: 3) does the same through the shipped debug config.
  auto debug = run_process(small_fit("debug", {"debug=overfit"}), dir.path());
  INFO(debug.err);
  REQUIRE(debug.exit_code == 0);
  CHECK(debug.err.find("trainer.overfit_batches: training and validation limited to 3 batches") != std::string::npos);
}

TEST_CASE("trainer.default_root_dir holds the checkpoints and logs when their own paths are null") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto fit = run_process(small_fit("run", {"trainer.max_epochs=1", "trainer.default_root_dir=root",
                                           "callbacks.model_checkpoint.dirpath=null", "logger.csv.save_dir=null"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fs::exists(fs::path(dir.path()) / "root" / "checkpoints" / "last.ckpt"));
  CHECK(fs::exists(fs::path(dir.path()) / "root" / "metrics.csv"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / "checkpoints"));
  // The evaluation finds them there too.
  auto test = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run",
                           "trainer.default_root_dir=root", "callbacks.model_checkpoint.dirpath=null"},
                          dir.path());
  INFO(test.err);
  CHECK(test.exit_code == 0);
}

TEST_CASE("model_checkpoint.every_n_train_steps writes top-k files, not only last.ckpt") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 15 steps an epoch; train/loss has a value at every step, so each save ranks a top-k file.
  auto fit = run_process(
      small_fit("run", {"trainer.max_epochs=1", "callbacks.model_checkpoint.every_n_train_steps=5",
                        "callbacks.model_checkpoint.monitor=train/loss", "callbacks.model_checkpoint.mode=min",
                        "callbacks.model_checkpoint.save_top_k=-1", "callbacks.model_checkpoint.filename='s{step}'"}),
      dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const std::set<std::string> files = checkpoint_files(fs::path(dir.path()) / "run" / "checkpoints");
  CHECK(files.count("s5.ckpt") == 1);
  CHECK(files.count("s10.ckpt") == 1);
  CHECK(files.count("s15.ckpt") == 1);
  CHECK(files.count("last.ckpt") == 1);
}

TEST_CASE("model_checkpoint.save_on_train_epoch_end chooses between validation-time and epoch-end saves") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 16 batches an epoch, validated after batch 8 and at the end; every best file is kept, so each
  // save shows up as a file.
  const std::vector<std::string> twice = {"data.num_samples=560", "trainer.max_epochs=1",
                                          "trainer.val_check_interval=0.5", "callbacks.model_checkpoint.save_top_k=-1",
                                          "callbacks.model_checkpoint.filename='s{step}'"};
  auto by_default = run_process(small_fit("auto", twice), dir.path());
  INFO(by_default.err);
  REQUIRE(by_default.exit_code == 0);
  const auto auto_files = checkpoint_files(fs::path(dir.path()) / "auto" / "checkpoints");
  CHECK(auto_files.count("s8.ckpt") == 1);   // the validation inside the epoch saves
  CHECK(auto_files.count("s16.ckpt") == 1);  // and the one at its end

  std::vector<std::string> at_end = twice;
  at_end.push_back("callbacks.model_checkpoint.save_on_train_epoch_end=true");
  auto end_only = run_process(small_fit("end", at_end), dir.path());
  INFO(end_only.err);
  REQUIRE(end_only.exit_code == 0);
  const auto end_files = checkpoint_files(fs::path(dir.path()) / "end" / "checkpoints");
  CHECK(end_files.count("s8.ckpt") == 0);
  CHECK(end_files.count("s16.ckpt") == 1);

  // false with validation every other epoch: the epochs without one save nothing.
  auto val_only = run_process(
      small_fit("val", {"trainer.max_epochs=3", "trainer.check_val_every_n_epoch=2",
                        "callbacks.model_checkpoint.save_on_train_epoch_end=false",
                        "callbacks.model_checkpoint.save_top_k=-1", "callbacks.model_checkpoint.filename='e{epoch}'"}),
      dir.path());
  INFO(val_only.err);
  REQUIRE(val_only.exit_code == 0);
  const auto val_files = checkpoint_files(fs::path(dir.path()) / "val" / "checkpoints");
  CHECK(val_files == std::set<std::string>{"e1.ckpt", "last.ckpt"});
  CHECK(rows_with(read_csv(fs::path(dir.path()) / "val" / "metrics.csv"), "val/acc") == 1);

  // true with validation every other epoch: every epoch's end saves, the epochs without one ranked
  // by the last validation's val/acc, as Lightning's callback does (epoch 0 has none yet).
  auto every_end = run_process(small_fit("every", {"trainer.max_epochs=4", "trainer.check_val_every_n_epoch=2",
                                                   "callbacks.model_checkpoint.save_on_train_epoch_end=true",
                                                   "callbacks.model_checkpoint.save_top_k=-1",
                                                   "callbacks.model_checkpoint.filename='e{epoch}'"}),
                               dir.path());
  INFO(every_end.err);
  REQUIRE(every_end.exit_code == 0);
  CHECK(checkpoint_files(fs::path(dir.path()) / "every" / "checkpoints") ==
        std::set<std::string>{"e1.ckpt", "e2.ckpt", "e3.ckpt", "last.ckpt"});
}

TEST_CASE("data.root comes from paths.data_dir, as in lightning-hydra-template") {
  TempDir dir;
  auto shown = run_process(
      {TRAINER_BINARY, "fit", "--cfg", "job", "--resolve", "-p", "data.root", "paths.data_dir=/somewhere/else"},
      dir.path());
  INFO(shown.err);
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out == "/somewhere/else\n");
  if (!engine_built()) return;
  auto fit = run_process({TRAINER_BINARY, "fit", "paths.data_dir=" + std::string(dir.path()) + "/none",
                          "trainer.max_epochs=1", "hydra.run.dir=run"},
                         dir.path());
  CHECK(fit.exit_code == 1);
  check_no_crash(fit);
  CHECK(fit.err.find(std::string(dir.path()) + "/none") != std::string::npos);  // the data is looked for there
}

TEST_CASE("no loggers with ~logger, and callbacks=none keeps checkpointing, as docs/config.md says") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto no_loggers = run_process(small_fit("quiet", {"trainer.max_epochs=1", "~logger"}), dir.path());
  INFO(no_loggers.err);
  REQUIRE(no_loggers.exit_code == 0);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "quiet" / "metrics.csv"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "quiet" / "tensorboard"));
  auto no_callbacks = run_process(small_fit("bare", {"trainer.max_epochs=1", "callbacks=none"}), dir.path());
  INFO(no_callbacks.err);
  REQUIRE(no_callbacks.exit_code == 0);
  CHECK(fs::exists(fs::path(dir.path()) / "bare" / "checkpoints" / "last.ckpt"));
}

// A key the red team set that did nothing, without a word: each is said before the run (which
// goes on, as it would without the key), and the runs without those keys say nothing of them.
TEST_CASE("a key that would change nothing in this run says so before it starts") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"callbacks.model_checkpoint=null"}, "callbacks.model_checkpoint is null, but checkpointing stays on"},
      {{"callbacks=none"}, "no callbacks.model_checkpoint in the config: checkpointing stays on"},
      {{"+trainer.profiler_schedule.active=2"},
       "trainer.profiler_schedule picks the steps trainer.profiler=pytorch records, but trainer.profiler is null"},
      {{"trainer.cpu_float16_autocast=true"},
       "trainer.cpu_float16_autocast=true makes precision=16-mixed compute in float16 on a CPU (not bfloat16), but "
       "precision is 32, so it changes nothing"},
      {{"trainer.default_root_dir=root"},
       "trainer.default_root_dir=root is where checkpoints and logs go when their own directories are null, but "
       "callbacks.model_checkpoint.dirpath, logger.csv.save_dir, logger.tensorboard.save_dir are set"},
      {{"scheduler=onecycle", "scheduler.cycle_momentum=false", "scheduler.base_momentum=0.5"},
       "scheduler.base_momentum=0.5 bounds the momentum OneCycleLR cycles, but scheduler.cycle_momentum=false"},
      {{"+tuner.mode=binsearch"}, "this fit searches no batch size, so it changes nothing"},
      {{"trainer.benchmark=true", "trainer.accelerator=cpu"},
       "trainer.benchmark=true times cuDNN's convolution algorithms on a GPU; this run is on the CPU, so it changes "
       "nothing"},
      {{"+callbacks.device_stats_monitor.cpu_stats=false", "trainer.accelerator=cpu"},
       "callbacks.device_stats_monitor.cpu_stats=false leaves only the GPU's readings, and this run is on the CPU: "
       "the monitor logs nothing"},
      {{"data.pin_memory=true", "trainer.accelerator=cpu"},
       "(data.pin_memory pins batches for copies to a GPU: nothing to do on the CPU)"},
      {{"+experiment.trainer.max_epochs=3"},
       "'experiment' holds trainer: sections trainer reads at the top level, not under 'experiment'"},
      {{"trainer.strategy=ddp", "trainer.bucket_cap_mb=1", "trainer.dist_timeout=10"},
       "trainer.dist_timeout=10, trainer.bucket_cap_mb=1 set how a job's processes work together, but this job runs "
       "one process"},
  };
  int n = 0;
  for (const auto& [extra, said] : cases) {
    std::vector<std::string> args = extra;
    args.push_back("trainer.max_epochs=1");
    auto fit = run_process(small_fit("run" + std::to_string(n++), args), dir.path());
    INFO(fit.err);
    CHECK(fit.exit_code == 0);
    CHECK(fit.err.find(said) != std::string::npos);
  }
  // Where they do something, nothing is said: the pytorch profiler's schedule, the root directory
  // with the directories it stands for left null (float16 autocast needs LibTorch 2: precision_test).
  auto used =
      run_process(small_fit("used", {"trainer.max_epochs=1", "trainer.limit_train_batches=6",
                                     "trainer.profiler=pytorch", "+trainer.profiler_schedule.active=2",
                                     "trainer.default_root_dir=root", "callbacks.model_checkpoint.dirpath=null"}),
                  dir.path());
  INFO(used.err);
  CHECK(used.exit_code == 0);
  CHECK(used.err.find("changes nothing") == std::string::npos);
  CHECK(used.err.find("checkpointing stays on") == std::string::npos);
  CHECK(fs::exists(fs::path(dir.path()) / "root" / "checkpoints" / "last.ckpt"));
  // A key another value reads through an interpolation acts there: nothing is said of it. The
  // warnings are in the run's trainer.log too.
  auto read =
      run_process(small_fit("read", {"trainer.max_epochs=1", "trainer.default_root_dir=root2",
                                     "logger.csv.save_dir=${trainer.default_root_dir}/csv", "+tuner.init_val=16",
                                     "+tuner.max_trials=3", "data.batch_size=${tuner.init_val}"}),
                  dir.path());
  INFO(read.err);
  CHECK(read.exit_code == 0);
  CHECK(fs::exists(fs::path(dir.path()) / "root2" / "csv" / "metrics.csv"));
  CHECK(read.err.find("trainer.default_root_dir=root2 is where") == std::string::npos);
  CHECK(read.err.find("tuner.init_val is read") == std::string::npos);
  CHECK(read.err.find("tuner.init_val, ") == std::string::npos);
  CHECK(read.err.find("tuner.max_trials is read by trainer tune batch_size") != std::string::npos);
  CHECK(read_file(fs::path(dir.path()) / "read" / "trainer.log").find("tuner.max_trials is read by") !=
        std::string::npos);
  // A sweep's jobs log into their own directories: the sweep says each warning once on its console,
  // with the jobs it concerns, before any job starts (and each job's trainer.log keeps it).
  auto sweep = run_process({TRAINER_BINARY, "fit", "-m", "data=synthetic", "data.num_samples=256",
                            "model.hidden_sizes=[16]", "trainer.max_epochs=1", "test_after_fit=false",
                            "callbacks.model_checkpoint=null", "trainer.profiler=simple,pytorch",
                            "+trainer.profiler_schedule.active=2", "seed=1,2", "+precison=64", "hydra.sweep.dir=sweep"},
                           dir.path());
  INFO(sweep.err);
  CHECK(sweep.exit_code == 0);
  const std::string null_checkpoint = "[every job] callbacks.model_checkpoint is null, but checkpointing stays on";
  const size_t said_at = sweep.err.find(null_checkpoint);
  CHECK(said_at != std::string::npos);
  CHECK(sweep.err.find(null_checkpoint, said_at + 1) == std::string::npos);  // once, not once per job
  CHECK(said_at < sweep.err.find("[sweep] launching"));
  CHECK(sweep.err.find("[jobs 0, 1] trainer.profiler_schedule picks the steps") != std::string::npos);
  CHECK(sweep.err.find("[jobs 2, 3]") == std::string::npos);  // the pytorch profiler's jobs use it
  CHECK(sweep.err.find("[every job] the config's top-level key 'precison' is not one trainer reads") !=
        std::string::npos);
  CHECK(read_file(fs::path(dir.path()) / "sweep" / "3" / "trainer.log").find("callbacks.model_checkpoint is null") !=
        std::string::npos);
}

TEST_CASE("test_after_fit without a best checkpoint says which weights it tests, and why") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"trainer.limit_val_batches=0", "no checkpoint was saved with a val/acc to rank it by"},
      {"callbacks.model_checkpoint.every_n_epochs=5", "no checkpoint was saved with a val/acc to rank it by"},
      {"trainer.fast_dev_run=2", "trainer.fast_dev_run writes no checkpoint"},
      {"trainer.enable_checkpointing=false", "checkpointing is off"},
      {"callbacks.model_checkpoint.save_top_k=0", "callbacks.model_checkpoint.save_top_k=0 keeps none"}};
  int n = 0;
  for (const auto& [key, why] : cases) {
    auto fit = run_process(small_fit("run" + std::to_string(n++), {"trainer.max_epochs=1", "test_after_fit=true", key}),
                           dir.path());
    INFO(fit.err);
    CHECK(fit.exit_code == 0);
    CHECK(fit.err.find("testing the weights the fit ended with (no best checkpoint: " + why + ")") !=
          std::string::npos);
    CHECK(fit.out.find("test/acc=") != std::string::npos);
  }
}

// hydra.job.chdir=true runs the job in its run directory, where a relative path is looked up, as
// in Hydra: one that exists only where trainer started said "does not exist" and no more.
TEST_CASE("hydra.job.chdir=true with a relative data path says where it is looked up and Hydra's fix") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  std::string table = "label,a,b\n";
  for (int i = 0; i < 64; ++i)
    table += std::to_string(i % 2) + "," + std::to_string(i % 7) + "," + std::to_string(i) + "\n";
  write_text(fs::path(dir.path()) / "t.csv", table);
  const std::vector<std::string> common = {
      TRAINER_BINARY,        "fit", "data=csv", "data.target=label", "trainer.max_epochs=1", "test_after_fit=false",
      "hydra.job.chdir=true"};
  std::vector<std::string> relative = common;
  relative.insert(relative.end(), {"data.path=t.csv", "hydra.run.dir=rel"});
  auto failed = run_process(relative, dir.path());
  INFO(failed.err);
  CHECK(failed.exit_code == 1);
  const fs::path run = fs::path(dir.path()) / "rel";
  CHECK(failed.err.find("data.path=t.csv is relative, and hydra.job.chdir=true runs the job in " + run.string() +
                        ", where it does not exist (it does in " + fs::path(dir.path()).string() +
                        ", where trainer started): give data.path=${hydra:runtime.cwd}/t.csv") != std::string::npos);
  std::vector<std::string> fixed = common;
  fixed.insert(fixed.end(), {"data.path=${hydra:runtime.cwd}/t.csv", "hydra.run.dir=abs"});
  auto ran = run_process(fixed, dir.path());
  INFO(ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(ran.err.find("is relative, and hydra.job.chdir=true") == std::string::npos);

  // A checkpoint to start from, named relative to where trainer started: the same word.
  std::vector<std::string> from_checkpoint = fixed;
  from_checkpoint.back() = "hydra.run.dir=more";
  from_checkpoint.insert(from_checkpoint.end(), {"ckpt_path=abs/checkpoints/last.ckpt", "trainer.max_epochs=2"});
  auto resumed = run_process(from_checkpoint, dir.path());
  INFO(resumed.err);
  CHECK(resumed.exit_code == 1);
  CHECK(resumed.err.find("ckpt_path=abs/checkpoints/last.ckpt is relative, and hydra.job.chdir=true runs the job in " +
                         (fs::path(dir.path()) / "more").string()) != std::string::npos);
}

// An empty model file picks no model: the engine said "key 'model.name' not found" after the run's
// directory was made and its data loaded.
TEST_CASE("a model or data section without a name is refused before anything runs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  fs::create_directories(fs::path(dir.path()) / "extra" / "model");
  write_text(fs::path(dir.path()) / "extra" / "model" / "empty.yaml", "");
  auto result = run_process({TRAINER_BINARY, "fit", "-cd", "extra", "model=empty", "hydra.run.dir=run"}, dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  CHECK(result.err.find("Error: model.name: is not set: it picks the model to build; nothing was run. Pick one with "
                        "model=<option>") != std::string::npos);
  CHECK(result.err.find("data: ") == std::string::npos);  // no data was loaded
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));
}
