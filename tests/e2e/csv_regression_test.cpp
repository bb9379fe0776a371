// data=csv data.task=regression end to end with the real trainer binary: scikit-learn's diabetes
// table (written out at test time by the test Python, beside the r2 of scikit-learn's own linear
// regression on the same split), a table whose target is an exact linear function of its inputs,
// and the mistakes a user makes, each a clean error.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

std::vector<std::string> regression_fit(const std::string& run, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY, "fit", "data=csv", "data.task=regression", "hydra.run.dir=" + run};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

ProcessResult run_ok(const std::vector<std::string>& argv, const fs::path& dir) {
  ProcessResult run = run_process(argv, dir.string());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  return run;
}

size_t column(const CsvTable& table, const std::string& name) {
  const auto found = std::find(table.columns.begin(), table.columns.end(), name);
  REQUIRE(found != table.columns.end());
  return static_cast<size_t>(found - table.columns.begin());
}

}  // namespace

TEST_CASE(
    "data.task=regression trains on scikit-learn's diabetes table to the r2 of a linear regression, keeps the "
    "checkpoint with the lowest val/loss, and tests, validates and predicts in the target's units",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: no scikit-learn to take its tables from", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  // train.csv / test.csv: the 442 patients in the raw units (age in years, bmi, ...; the target a
  // disease progression score 25 .. 346), split 80/20; new_rows.csv: the test rows without the
  // target. reference.txt: scikit-learn's LinearRegression r2 on the test rows, and the train
  // target's population standard deviation.
  auto made = run_process({python, "-c", R"(
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
f = load_diabetes(as_frame=True, scaled=False).frame
train, test = train_test_split(f, test_size=0.2, random_state=0)
train.to_csv('train.csv', index=False)
test.to_csv('test.csv', index=False)
test.drop(columns=['target']).to_csv('new_rows.csv', index=False)
x = [c for c in f.columns if c != 'target']
r2 = LinearRegression().fit(train[x], train['target']).score(test[x], test['target'])
open('reference.txt', 'w').write('%.6f %.6f\n' % (r2, train['target'].std(ddof=0)))
)"},
                          root.string());
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  double linear_r2 = 0.0, target_std = 0.0;
  {
    std::ifstream in(root / "reference.txt");
    in >> linear_r2 >> target_std;
  }
  REQUIRE(linear_r2 > 0.2);

  // docs/data.md's command.
  auto fit = run_ok(
      regression_fit("run", {"data.path=train.csv", "data.test_path=test.csv", "data.target=target",
                             "model.hidden_sizes=[64]", "trainer.max_epochs=60", "data.batch_size=32", "seed=3"}),
      root);
  CHECK(fit.err.find("mlp 10-64-1") != std::string::npos);  // ten inputs, one output
  CHECK(fit.err.find("callbacks.model_checkpoint.monitor: data.task=regression logs no val/acc; watching val/loss "
                     "(mode min)") != std::string::npos);
  CHECK(fit.err.find("val/mae") != std::string::npos);
  CHECK(fit.err.find("train/acc") == std::string::npos);
  // The best checkpoint's, by a tenth of the training rows: within 0.1 of the linear model's r2.
  const double fit_r2 = printed(fit.out, "test/r2");
  CHECK(fit_r2 >= linear_r2 - 0.1);
  // mae and rmse are in the target's units; the loss is the MSE of the target standardised with
  // the training rows' statistics, which the checkpoint keeps.
  const std::string checkpoint = read_file(root / "run" / "checkpoints" / "last.ckpt");
  const size_t std_at = checkpoint.find("\"target_std\":");
  REQUIRE(std_at != std::string::npos);
  const double kept_std = std::strtod(checkpoint.c_str() + std_at + 13, nullptr);
  CHECK(kept_std == Approx(target_std).epsilon(0.05));  // of 90% of train.csv's rows
  const double rmse = printed(fit.out, "test/rmse");
  CHECK(rmse == Approx(std::sqrt(printed(fit.out, "test/loss")) * kept_std).epsilon(1e-4));
  CHECK(printed(fit.out, "test/mae") > 20.0);
  CHECK(printed(fit.out, "test/mae") < rmse);

  // The best checkpoint is the epoch of the lowest val/loss (mode min), not the highest.
  const CsvTable metrics = read_csv(root / "run" / "metrics.csv");
  const size_t val_loss = column(metrics, "val/loss");
  const size_t epoch = column(metrics, "epoch");
  CHECK(!metrics.last("val/r2").empty());
  CHECK(!metrics.last("train/rmse_epoch").empty());
  CHECK(metrics.last("val/acc").empty());
  double lowest = std::numeric_limits<double>::infinity();
  int best_epoch = -1;
  for (const auto& row : metrics.rows) {
    if (row.size() <= val_loss || row[val_loss].empty()) continue;
    if (const double loss = std::stod(row[val_loss]); loss < lowest) {
      lowest = loss;
      best_epoch = std::stoi(row[epoch]);
    }
  }
  REQUIRE(best_epoch >= 0);
  char best[32];
  std::snprintf(best, sizeof(best), "epoch_%03d.ckpt", best_epoch);
  CHECK(fs::exists(root / "run" / "checkpoints" / best));

  // validate and test read the checkpoint's encoding (the target's mean and std among it).
  auto validate = run_ok({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run"}, root);
  CHECK(std::isfinite(printed(validate.out, "val/r2")));
  CHECK(validate.out.find("val/acc") == std::string::npos);
  auto test = run_ok({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run"}, root);
  const double test_rmse = printed(test.out, "test/rmse");

  // predict on the test rows: the values in the target's units, the same rmse as test's.
  auto on_test =
      run_ok({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run", "data.test_path=test.csv"}, root);
  CHECK(printed(on_test.out, "predict/rmse") == Approx(test_rmse).epsilon(1e-4));
  CHECK(printed(on_test.out, "predict/count") == 89);
  // An evaluation watches no monitor and steps no optimizer: neither is logged as if it did.
  CHECK(on_test.err.find("logs no val/acc; watching") == std::string::npos);
  CHECK(on_test.err.find("optimizer adam") == std::string::npos);
  const CsvTable scored = read_csv(predictions_under(root / "run" / "eval"));
  REQUIRE(scored.columns == std::vector<std::string>{"sample", "prediction", "target"});
  REQUIRE(scored.rows.size() == 89);
  double squares = 0.0;
  for (const auto& row : scored.rows) {
    const double error = std::stod(row[1]) - std::stod(row[2]);
    squares += error * error;
  }
  CHECK(std::sqrt(squares / 89.0) == Approx(test_rmse).epsilon(1e-3));
  // The target column is test.csv's own values, exactly (not brought back from their scaled float32).
  const CsvTable given = read_csv(root / "test.csv");
  const auto target_at = std::find(given.columns.begin(), given.columns.end(), "target") - given.columns.begin();
  REQUIRE(static_cast<size_t>(target_at) < given.columns.size());
  for (size_t i = 0; i < scored.rows.size(); ++i) {
    INFO("row " << i << ": " << scored.rows[i][2] << " against " << given.rows[i][static_cast<size_t>(target_at)]);
    CHECK(std::stod(scored.rows[i][2]) == std::stod(given.rows[i][static_cast<size_t>(target_at)]));
  }

  // predict on rows without the target column.
  fs::remove_all(root / "run" / "eval");
  auto on_new =
      run_ok({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run", "data.test_path=new_rows.csv"}, root);
  CHECK(on_new.out.find("predict/rmse") == std::string::npos);
  const CsvTable fresh = read_csv(predictions_under(root / "run" / "eval"));
  REQUIRE(fresh.rows.size() == 89);
  for (size_t i = 0; i < fresh.rows.size(); ++i) {
    CHECK(fresh.rows[i][0] == std::to_string(i));
    CHECK(fresh.rows[i][1] == scored.rows[i][1]);  // the same rows, the same predictions
    CHECK(fresh.rows[i][2].empty());
  }
}

TEST_CASE(
    "data.task=regression learns an exact linear target in its own units, ranked by a chosen monitor, with or "
    "without standardisation",
    "") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // y = 300 a - 200 b + 1000 over a grid: the target's scale is far from the inputs'.
  std::string table = "a,b,y\n";
  for (int i = 0; i < 20; ++i) {
    for (int j = 0; j < 20; ++j) {
      const double a = i / 19.0, b = j / 19.0;
      table += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(300 * a - 200 * b + 1000) + "\n";
    }
  }
  write_text(root / "line.csv", table);
  for (const std::string standardize : {"true", "false"}) {
    const std::string run = "run_" + standardize;
    auto fit = run_ok(
        regression_fit(run, {"data.path=line.csv", "data.target=y", "data.test_path=line.csv",
                             "data.standardize=" + standardize, "model.hidden_sizes=[16]", "trainer.max_epochs=150",
                             "data.batch_size=32", "optimizer.lr=0.01", "callbacks.model_checkpoint.monitor=val/r2",
                             "callbacks.model_checkpoint.mode=max", "callbacks.early_stopping=null"}),
        root);
    INFO("data.standardize=" << standardize << "\n" << fit.err);
    CHECK(fit.err.find("model_checkpoint.monitor: data.task=regression") == std::string::npos);  // kept as set
    if (standardize == "true") {
      CHECK(printed(fit.out, "test/r2") > 0.99);
      CHECK(printed(fit.out, "test/mae") < 10.0);  // of a target spread over 500
    } else {
      // Raw targets near 1000 train, if slower: the metrics are still in the target's units.
      CHECK(printed(fit.out, "test/rmse") == Approx(std::sqrt(printed(fit.out, "test/loss"))).epsilon(1e-3));
    }
    const std::string json = read_file(root / run / "checkpoints" / "last.ckpt");
    CHECK(json.find("\"task\":\"regression\"") != std::string::npos);
  }

  // Mixed precision on the CPU: the MSE of float targets under autocast.
  auto mixed = run_ok(regression_fit("bf16", {"data.path=line.csv", "data.target=y", "precision=bf16-mixed",
                                              "trainer.max_epochs=2", "model.hidden_sizes=[16]"}),
                      root);
  CHECK(mixed.err.find("precision bf16-mixed") != std::string::npos);
  CHECK(mixed.err.find("fit finished") != std::string::npos);
  // validate re-splits data.path: the same table, no word; a changed one is said (its validation
  // split is not the rows training held out).
  auto same = run_ok({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run_true"}, root);
  CHECK(same.err.find("is not the table the checkpoint was trained on") == std::string::npos);
  write_text(root / "line.csv", table + "0.5,0.5,1050\n");
  auto changed = run_ok({TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run_true"}, root);
  // (The checkpoint's relative data.path is read in the training run's working directory.)
  CHECK(changed.err.find("data.path: " + (fs::canonical(root) / "line.csv").string() +
                         " is not the table the checkpoint was trained on (400 rows then, 401 now; its checksum "
                         "differs)") != std::string::npos);
}

TEST_CASE("data.task=regression: a bad target or a classification key is a clean error before training", "") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  write_text(root / "good.csv", "a,b,y\n1,2,0.5\n3,4,1.5\n5,6,2.5\n7,8,3.5\n");
  write_text(root / "word.csv", "a,b,y\n1,2,0.5\n3,4,high\n");
  write_text(root / "hole.csv", "a,b,y\n1,2,0.5\n3,4,\n");
  write_text(root / "names.csv", "a,b,y\n1,2,x\n3,4,z\n");
  write_text(root / "fraction.csv", "a,b,y\n1,2,0\n3,4,1.5\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"data.task=regression", "data.path=word.csv", "data.target=y"},
       "data.path: word.csv:3:3 (y): 'high' is not a number, in a column of numbers"},
      {{"data.task=regression", "data.path=hole.csv", "data.target=y"},
       "data.path: hole.csv:3:3 (y): the cell is empty (a missing value)"},
      {{"data.task=regression", "data.path=names.csv", "data.target=y"}, "data.path: names.csv:2:3 (y): 'x' is not"},
      {{"data.task=regression", "data.path=good.csv", "data.target=y", "data.num_classes=3"},
       "data.num_classes: is 3, but data.task=regression predicts one number, not classes"},
      {{"data.task=regresion", "data.path=good.csv", "data.target=y"}, "regression"},
      {{"data.path=fraction.csv", "data.target=y"}, "Set data.task=regression to predict the numbers themselves"},
      {{"data.path=names.csv", "data.target=y", "callbacks.model_checkpoint.monitor=val/rmse",
        "callbacks.model_checkpoint.mode=min"},
       "callbacks.model_checkpoint.monitor (override 'callbacks.model_checkpoint.monitor=val/rmse'): val/rmse is "
       "logged only by a regression (data.task=regression)"},
      {{"data.path=names.csv", "data.target=y", "callbacks.early_stopping.monitor=val/r2"},
       "callbacks.early_stopping.monitor (override 'callbacks.early_stopping.monitor=val/r2'): val/r2 is logged only "
       "by a regression"},
      // A mode that would keep the worst value: an error (callbacks/default.yaml's mode is max).
      {{"data.task=regression", "data.path=good.csv", "data.target=y", "callbacks.model_checkpoint.monitor=val/rmse"},
       "callbacks/default.yaml:5): mode=max would keep the highest val/rmse, the worst (lower is better); set "
       "callbacks.model_checkpoint.mode=min"},
      {{"data.task=regression", "data.path=good.csv", "data.target=y", "callbacks.early_stopping.monitor=val/r2",
        "callbacks.early_stopping.mode=min"},
       "callbacks.early_stopping.mode (override 'callbacks.early_stopping.mode=min'): mode=min would keep the lowest "
       "val/r2, the worst (higher is better); set callbacks.early_stopping.mode=max"},
      {{"data.path=names.csv", "data.target=y", "callbacks.model_checkpoint.monitor=val/loss"},
       "mode=max would keep the highest val/loss, the worst (lower is better)"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {TRAINER_BINARY, "fit", "data=csv", "hydra.run.dir=run", "trainer.max_epochs=1"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto run = run_process(args, root.string());
    INFO(c.args.front() + " " + c.args.back() + "\n" + run.err);
    CHECK(run.exit_code != 0);
    check_clean_error(run);
    CHECK(run.err.find(c.message) != std::string::npos);
    CHECK(!fs::exists(root / "run" / "checkpoints"));  // nothing trained
  }
}
