// A fit never writes into another run's checkpoints, and a resume never loads state that cannot
// fit: a new fit (no ckpt_path) whose checkpoint directory holds another run's *.ckpt files, a
// sweep whose jobs share one, and a resume with another optimizer are refused before anything is
// written. Skipped without the engine (TRAINER_LIBTORCH=none).
#include <filesystem>
#include <map>

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

}  // namespace

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
      {{"hydra.run.dir=runs/c", "callbacks.model_checkpoint.dirpath=null", "+trainer.default_root_dir=runs/a"},
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
