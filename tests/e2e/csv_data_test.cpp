// data=csv end to end with the real trainer binary: the tables scikit-learn ships (iris with its
// species names, wine as a TSV), written out at test time by the test Python; Fashion-MNIST written
// as a CSV; a table whose label only a one-hot category tells; evaluation and prediction from the
// checkpoint's encoding; and the mistakes a user makes in a table, each a clean error naming
// file:line:column.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

const char* const kDataDir = "/usr/share/datasets/fashion-mnist";

std::vector<std::string> csv_fit(const std::string& run, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY, "fit", "data=csv", "hydra.run.dir=" + run};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// The test Python with scikit-learn, running `script` in `dir`; false (after a skip) without one.
bool run_python(const std::string& script, const fs::path& dir) {
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    skip_test("TRAINER_TEST_PYTHON is empty: no scikit-learn to take its tables from", Skip::unexpected_in_ci);
    return false;
  }
  auto made = run_process({python, "-c", script}, dir.string());
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  return true;
}

}  // namespace

TEST_CASE(
    "data=csv trains on scikit-learn's iris table by its species names, tests and predicts rows without labels "
    "from the checkpoint's encoding, and exports it",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // iris.csv as a user keeps it: four measurements and the species by name. new_rows.csv: 40 shuffled
  // rows without the species (their names in truth.txt); scaled.csv: every measurement x 10.
  if (!run_python(R"(
from sklearn.datasets import load_iris
d = load_iris(as_frame=True)
f = d.frame.drop(columns=['target'])
f['species'] = [d.target_names[i] for i in d.target]
f.to_csv('iris.csv', index=False)
s = f.sample(n=40, random_state=1)
s.drop(columns=['species']).to_csv('new_rows.csv', index=False)
open('truth.txt', 'w').write('\n'.join(s['species']) + '\n')
h = s.copy()
h.loc[h.index[20:], 'species'] = ''
h.to_csv('some_labels.csv', index=False)
h.loc[h.index[20:], 'species'] = 'NA'
h.to_csv('na_labels.csv', index=False)
g = f.copy()
for c in g.columns[:4]: g[c] = g[c] * 10
g.to_csv('scaled.csv', index=False)
)",
                  root)) {
    return;
  }
  // docs/data.md's command.
  auto fit = run_process(csv_fit("run", {"data.path=iris.csv", "data.target=species", "data.test_path=iris.csv",
                                         "trainer.max_epochs=40", "data.batch_size=16", "seed=2"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("data: 135 train / 15 val / 150 test samples") != std::string::npos);
  CHECK(fit.err.find("mlp 4-") != std::string::npos);  // four inputs, from the table
  CHECK(printed(fit.out, "test/acc") >= 0.75);         // the best checkpoint's, by 15 validation rows
  auto last = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(last.err);
  REQUIRE(last.exit_code == 0);
  const double test_acc = printed(last.out, "test/acc");
  CHECK(test_acc >= 0.9);
  // Its test table is the one it trained on (as the fit's): said outside fit too.
  CHECK(last.err.find("is the table the checkpoint was trained on (data.path)") != std::string::npos);
  CHECK(read_file(root / "run" / "class_names.txt") == "setosa\nversicolor\nvirginica\n");
  // The target, task and columns are the checkpoint's: others given are ignored, said as a
  // warning, and the evaluation's record names what it used (it named the override).
  auto other_target = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run",
                                   "data.target=sepal_length", "data.task=regression"},
                                  dir.path());
  INFO(other_target.err);
  REQUIRE(other_target.exit_code == 0);
  CHECK(printed(other_target.out, "test/acc") == test_acc);
  CHECK(other_target.err.find("ignored, the checkpoint's as trained") != std::string::npos);
  CHECK(other_target.err.find("data.target=sepal_length, data.task=regression") != std::string::npos);
  CHECK(other_target.err.find("from the command line instead: data.target") == std::string::npos);
  int records = 0;
  for (const auto& entry : fs::directory_iterator(root / "run" / "eval")) {
    const fs::path record = entry.path() / ".hydra" / "config.yaml";
    if (read_file(entry.path() / ".hydra" / "overrides.yaml").find("sepal_length") == std::string::npos) continue;
    ++records;
    CHECK(read_file(record).find("target: species") != std::string::npos);
    CHECK(read_file(record).find("task: classification") != std::string::npos);
  }
  CHECK(records == 1);

  // Predicting rows without a species column: names, from the checkpoint alone.
  auto predicted = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run", "data.test_path=new_rows.csv"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  // The default predict.top_k (5) lists the 3 classes without a word; a k asked for is answered.
  CHECK(predicted.err.find("predict.top_k") == std::string::npos);
  const CsvTable rows = read_csv(predictions_under(root / "run" / "eval"));
  REQUIRE(rows.rows.size() == 40);
  std::vector<std::string> truth;
  {
    std::ifstream in(root / "truth.txt");
    for (std::string line; std::getline(in, line);) truth.push_back(line);
  }
  REQUIRE(truth.size() == 40);
  int correct = 0;
  for (size_t i = 0; i < rows.rows.size(); ++i) {
    CHECK(rows.rows[i][0] == std::to_string(i));  // the row of new_rows.csv
    CHECK(rows.rows[i][3].empty());               // no target column: no known class
    if (rows.rows[i][1] == truth[i]) ++correct;
  }
  CHECK(correct >= 36);

  // The same rows with the species known for the first 20 only: every row predicted, the accuracy
  // over the 20 (an empty label cell was refused).
  auto some = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run",
                           "data.test_path=some_labels.csv", "predict.top_k=4"},
                          dir.path());
  INFO(some.err);
  REQUIRE(some.exit_code == 0);
  CHECK(some.err.find("predict.top_k=4 is more than the 3 classes: predictions.csv lists all 3") != std::string::npos);
  CHECK(printed(some.out, "predict/count") == 20);
  CHECK(some.err.find("on the 20 with a known class") != std::string::npos);
  // pandas' NA for the unknown species is a missing label too, as docs/data.md says (a red team got
  // "label 'NA' is not one of the 3 classes").
  auto na = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run",
                         "data.test_path=na_labels.csv", "predict.top_k=4"},
                        dir.path());
  INFO(na.err);
  REQUIRE(na.exit_code == 0);
  CHECK(printed(na.out, "predict/count") == 20);
  CHECK(printed(na.out, "predict/acc") == printed(some.out, "predict/acc"));
  // trainer test needs every label: the empty cell is named.
  auto some_tested = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.test_path=some_labels.csv"}, dir.path());
  check_clean_error(some_tested);
  CHECK(some_tested.err.find("some_labels.csv:22:5 (species): the cell is empty") != std::string::npos);

  // The statistics are the checkpoint's: a training table now scaled x 10 changes nothing ...
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.path=scaled.csv",
                             "data.test_path=iris.csv"},
                            dir.path());
  INFO(tested.err);
  REQUIRE(tested.exit_code == 0);
  CHECK(printed(tested.out, "test/acc") == Approx(test_acc).margin(1e-9));
  // ... nor does a training table that is gone: test reads data.test_path alone, as predict does.
  auto alone = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.path=moved.csv", "data.test_path=iris.csv"},
      dir.path());
  INFO(alone.err);
  REQUIRE(alone.exit_code == 0);
  CHECK(printed(alone.out, "test/acc") == Approx(test_acc).margin(1e-9));
  CHECK(contains(alone.err, "moved.csv is not read"));
  // ... and a test table scaled x 10 is encoded with them too, so the model no longer knows it.
  auto scaled = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.test_path=scaled.csv"}, dir.path());
  INFO(scaled.err);
  REQUIRE(scaled.exit_code == 0);
  CHECK(printed(scaled.out, "test/acc") < 0.7);

  // The export carries the encoding: the columns, the training split's means and std, the classes.
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=run/checkpoints/last.ckpt",
                               "export_path=" + (root / "iris.safetensors").string()},
                              dir.path());
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const std::string file = read_file(root / "iris.safetensors");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(file[static_cast<size_t>(i)]);
  const auto header = nlohmann::json::parse(file.substr(8, length));
  const auto encoding = nlohmann::json::parse(header.at("__metadata__").at("trainer_data_encoding").get<std::string>());
  CHECK(encoding.at("target") == "species");
  CHECK(encoding.at("classes") == nlohmann::json({"setosa", "versicolor", "virginica"}));
  REQUIRE(encoding.at("features").size() == 4);
  CHECK(encoding.at("features")[0].at("column") == "sepal length (cm)");
  CHECK(encoding.at("features")[0].at("mean").get<double>() == Approx(5.84).margin(0.1));  // the train split's
  CHECK(encoding.at("features")[2].at("std").get<double>() == Approx(1.76).margin(0.15));
}

TEST_CASE(
    "data=csv reads scikit-learn's wine table as a TSV with integer labels, a chosen feature list and no "
    "standardisation",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  if (!run_python(R"(
from sklearn.datasets import load_wine
f = load_wine(as_frame=True).frame
f.to_csv('wine.tsv', sep='\t', index=False)
)",
                  root)) {
    return;
  }
  // Standardised, an MLP separates the three cultivars; the two chosen columns give 2 inputs.
  auto fit = run_process(
      csv_fit("run", {"data.path=wine.tsv", "data.target=target", "trainer.max_epochs=60", "data.batch_size=16",
                      "data.val_fraction=0.25", "optimizer.lr=0.003", "model.hidden_sizes=[32]", "model.dropout=0"}),
      dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("mlp 13-32-3") != std::string::npos);
  CHECK(std::stod(read_csv(root / "run" / "metrics.csv").last("val/acc")) >= 0.85);
  CHECK(!fs::exists(root / "run" / "class_names.txt"));  // indices name no classes

  auto chosen = run_process(csv_fit("two", {"data.path=wine.tsv", "data.target=target", "trainer.max_epochs=1",
                                            "data.features=[alcohol,proline]", "data.standardize=false"}),
                            dir.path());
  INFO(chosen.err);
  REQUIRE(chosen.exit_code == 0);
  CHECK(chosen.err.find("mlp 2-") != std::string::npos);
  // Not standardised: the encoding keeps mean 0 and std 1.
  const std::string ckpt = read_file(root / "two" / "checkpoints" / "last.ckpt");
  CHECK(ckpt.find(R"({"column":"alcohol","mean":0.0,"std":1.0})") != std::string::npos);
}

TEST_CASE("data=csv one-hot encodes categorical columns, so a label that only a category tells is learned", "") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // The label is the colour's, the number is noise; '12' and '3' are categories sorted as numbers,
  // and '3.0' is '3' written otherwise (one category, as pandas reads them).
  const std::vector<std::string> colours = {"red", "green", "blue"};
  const std::vector<std::string> labels = {"stop", "go", "wait"};
  // A TSV whose columns are not in the features' order, with one the features leave out.
  std::string table = "label\tcode\tunused\tnoise\tcolour\n";
  for (int i = 0; i < 300; ++i) {
    table += labels[static_cast<size_t>(i % 3)] + "\t" +
             (i % 2 == 0   ? "12"
              : i % 4 == 1 ? "3"
                           : "3.0") +
             "\tx\t" + std::to_string((i * 7919) % 101) + "\t" + colours[static_cast<size_t>(i % 3)] + "\n";
  }
  write_text(root / "signals.tsv", table);
  write_text(root / "unseen.csv", "colour,noise,code,label\nred,5,012,stop\npurple,5,3,go\n");
  // docs/data.md's third command, with a test split.
  auto fit = run_process(csv_fit("run", {"data.path=signals.tsv", "data.target=label",
                                         "data.features=[colour,noise,code]", "data.categorical=[colour,code]",
                                         "data.test_path=signals.tsv", "trainer.max_epochs=5", "data.batch_size=32"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("mlp 6-") != std::string::npos);  // 3 colours + noise + 2 codes
  // The test table is the training table here: test/acc says how well it fits, and a warning says so.
  CHECK(fit.err.find("data.test_path: signals.tsv is data.path's table, so the test rows are the rows trained") !=
        std::string::npos);
  CHECK(printed(fit.out, "test/acc") == 1.0);
  CHECK(read_file(root / "run" / "class_names.txt") == "go\nstop\nwait\n");
  const std::string ckpt = read_file(root / "run" / "checkpoints" / "last.ckpt");
  CHECK(ckpt.find(R"({"categories":["blue","green","red"],"column":"colour"})") != std::string::npos);
  CHECK(ckpt.find(R"({"categories":["3","12"],"column":"code"})") != std::string::npos);

  auto unseen = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data.test_path=unseen.csv"}, dir.path());
  CHECK(unseen.exit_code != 0);
  check_clean_error(unseen);
  CHECK(unseen.err.find("data.test_path: unseen.csv:3:1 (colour): category 'purple' is not one of the 3 the model "
                        "was trained on (blue, green, red)") != std::string::npos);

  // Other data for the table's model: its inputs would lack the encoding and its labels the classes.
  // It ran and printed a test/acc that meant nothing.
  auto tensors =
      run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=run", "data=tensors", "data.inputs=x.npy",
                   "data.targets=y.npy", "data.test_inputs=x.npy", "data.test_targets=y.npy"},
                  dir.path());
  CHECK(tensors.exit_code == 1);
  check_clean_error(tensors);
  CHECK(tensors.err.find("data.name: the checkpoint " + (root / "run" / "checkpoints" / "last.ckpt").string() +
                         " was trained on data=csv: its model takes table rows encoded with the checkpoint's column "
                         "statistics and categories") != std::string::npos);
  CHECK(tensors.err.find("Give it a table with the same columns: data=csv data.test_path=<table>") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(root / "run" / "eval"));
}

TEST_CASE("data=csv trains on Fashion-MNIST written as a CSV table with a label column", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  if (!fs::exists(fs::path(kDataDir) / "train-images-idx3-ubyte.gz")) {
    return skip_test(std::string(kDataDir) + " is missing: install Debian's dataset-fashion-mnist",
                     Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  // Kaggle's layout of Fashion-MNIST as CSV: label, pixel1 .. pixel784; 12,000 training rows and
  // the 10,000 test rows.
  auto write_table = [&](const std::string& prefix, const fs::path& out, size_t limit) {
    const fs::path images = root / "images.raw";
    const fs::path labels = root / "labels.raw";
    const std::string unzip = "gzip -dc " + std::string(kDataDir) + "/" + prefix + "-images-idx3-ubyte.gz > '" +
                              images.string() + "' && gzip -dc " + std::string(kDataDir) + "/" + prefix +
                              "-labels-idx1-ubyte.gz > '" + labels.string() + "'";
    REQUIRE(std::system(unzip.c_str()) == 0);
    const std::string pixels = read_file(images).substr(16);
    const std::string classes = read_file(labels).substr(8);
    std::string text = "label";
    for (int p = 1; p <= 784; ++p) text += ",pixel" + std::to_string(p);
    text += "\n";
    const size_t rows = std::min(limit, classes.size());
    for (size_t r = 0; r < rows; ++r) {
      text += std::to_string(static_cast<unsigned char>(classes[r]));
      for (size_t p = 0; p < 784; ++p) text += "," + std::to_string(static_cast<unsigned char>(pixels[r * 784 + p]));
      text += "\n";
    }
    write_text(out, text);
  };
  write_table("train", root / "train.csv", 12000);
  write_table("t10k", root / "test.csv", 10000);
  // docs/data.md's second command.
  auto fit = run_process(csv_fit("run", {"data.path=train.csv", "data.test_path=test.csv", "data.target=label",
                                         "model.hidden_sizes=[64]", "trainer.max_epochs=2", "seed=5"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("data: 10800 train / 1200 val / 10000 test samples") != std::string::npos);
  CHECK(fit.err.find("mlp 784-64-10") != std::string::npos);
  CHECK(printed(fit.out, "test/acc") >= 0.78);
  // The test split with its labels, predicted: the accuracy is the test's.
  auto predicted = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=run"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(fit.out, "test/acc")).margin(1e-6));
}

TEST_CASE("data=csv leaves a pandas row index out of the inputs unless data.features lists it", "") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // What pandas' DataFrame.to_csv writes by default (the index first, its header cell empty), and
  // the same table read back and written with index=False (the old index now 'Unnamed: 0'), of a
  // table sorted by class: the row number alone would tell the label.
  std::string rows;
  for (int i = 0; i < 200; ++i) {
    rows += std::to_string(i) + "," + std::to_string((i * 37) % 11) + "," + (i < 100 ? "p" : "q") + "\n";
  }
  write_text(root / "indexed.csv", ",a,y\n" + rows);
  write_text(root / "rewritten.csv", "Unnamed: 0,a,y\n" + rows);
  for (const std::string table : {"indexed.csv", "rewritten.csv"}) {
    auto fit = run_process(csv_fit("run_" + table, {"data.path=" + table, "data.target=y", "trainer.max_epochs=1"}),
                           dir.path());
    INFO(fit.err);
    REQUIRE(fit.exit_code == 0);
    CHECK(fit.err.find("mlp 1-") != std::string::npos);  // a alone
    CHECK(fit.err.find(table + "'s first column has no name in the header (Unnamed: 0): a row index") !=
          std::string::npos);
    CHECK(fit.err.find("list the input columns in data.features") != std::string::npos);
  }

  auto listed = run_process(csv_fit("listed", {"data.path=indexed.csv", "data.target=y", "trainer.max_epochs=1",
                                               "data.features=['Unnamed: 0',a]"}),
                            dir.path());
  INFO(listed.err);
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.err.find("mlp 2-") != std::string::npos);
  CHECK(listed.err.find("a row index") == std::string::npos);
}

TEST_CASE("data=csv: a bad table or a wrong column is a clean error naming the key and file:line:column", "") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  write_text(root / "good.csv", "a,b,y\n1,2,x\n3,4,z\n5,6,x\n7,8,z\n");
  write_text(root / "hole.csv", "a,b,y\n1,2,x\n3,,z\n");
  write_text(root / "ragged.csv", "a,b,y\n1,2,x\n\n3,4\n");
  write_text(root / "word.csv", "a,b,y\n1,2,x\n3,four,z\n");
  write_text(root / "quote.csv", "a,b,y\n1,2,x\n3,\"4,z\n");
  write_text(root / "header.csv", "a,b,y\n");
  write_text(root / "labels.csv", "a,b,y\n1,2,0\n3,4,-1\n");
  write_text(root / "other.csv", "a,b,y\n1,2,w\n");
  write_text(root / "mixed.csv", "a,b,y\n1,2,0\n3,4,1\n5,6,x\n");
  write_text(root / "fraction.csv", "a,b,y\n1,2,0\n3,4,1.5\n");
  write_text(root / "na.csv", "a,b,y\n1,2,0\n3,4,NA\n");
  write_text(root / "one.csv", "a,b,y\n1,2,0\n3,4,0\n5,6,0\n");
  write_text(root / "semicolons.csv", "a;b;y\n1;2;x\n3;4;z\n");
  write_text(root / "latin1.csv", "a,b,y\n1,2,x\n3,4,caf\xe9\n");
  write_text(root / "gzipped.csv", std::string("\x1f\x8b\x08\0\0\0\0\0", 8));
  write_text(root / "sign.csv", "a,b,y\n1,2,x\n3,+-4,z\n");
  write_text(root / "category_na.csv", "a,b,y\n1,red,x\n3,NA,z\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"data.path=hole.csv", "data.target=y"},
       "data.path: hole.csv:3:2 (b): the cell is empty (a missing value) in a column of numbers"},
      {{"data.path=ragged.csv", "data.target=y"}, "data.path: ragged.csv:4: the row has 2 cells, the header 3 columns"},
      {{"data.path=word.csv", "data.target=y"}, "data.path: word.csv:3:2 (b): 'four' is not a number"},
      {{"data.path=quote.csv", "data.target=y"}, "data.path: quote.csv:3: a misplaced quote"},
      {{"data.path=header.csv", "data.target=y"}, "data.path: header.csv has a header but no rows"},
      {{"data.path=missing.csv", "data.target=y"}, "data.path: cannot open missing.csv"},
      {{"data.path=good.csv", "data.target=Y"}, "data.target: good.csv has no column 'Y'; did you mean 'y'?"},
      {{"data.path=good.csv", "data.target=y", "data.features=[a,y]"},
       "data.features: lists the target column 'y' as an input"},
      {{"data.path=good.csv", "data.target=y", "data.features=[a,c]"}, "data.features: good.csv has no column 'c'"},
      {{"data.path=good.csv", "data.target=y", "data.features=[a]", "data.categorical=[b]"},
       "data.categorical: names 'b', which is not an input column (data.features leaves it out)"},
      {{"data.path=good.csv", "data.target=y", "data.categorical=[B]"},
       "data.categorical: names 'B', which is not an input column of good.csv; did you mean 'b'?"},
      {{"data.path=good.csv", "data.target=y", "data.test_path=other.csv"},
       "data.test_path: other.csv:2:3 (y): label 'w' is not one of the 2 classes the model knows (x, z)"},
      {{"data.path=labels.csv", "data.target=y"}, "data.target: labels.csv:3:3 (y): label -1 is negative"},
      {{"data.path=good.csv", "data.target=y", "data.num_classes=3"},
       "data.num_classes: is 3, but the labels of good.csv name 2 classes (x, z)"},
      {{"data.path=good.csv", "data.target=y", "data.delimiter=ab"}, "but a delimiter is one character"},
      {{"data.path=good.csv", "data.target=y", "data.val_fraction=0.9"},
       "data.val_fraction: 0.900000 leaves 0 of the 4 rows of good.csv for training"},
      {{"data.path=good.csv", "data.target=y", "data.delimiter=';'"}, "data.target: good.csv has no column 'y'"},
      {{"data.path=semicolons.csv", "data.target=y"},
       "its header reads as one column, 'a;b;y', so its cells are not separated by the delimiter it was read with. "
       "Set the delimiter the file uses: \"data.delimiter=';'\""},
      {{"data.path=mixed.csv", "data.target=y"},
       "data.target: mixed.csv: the labels of column 'y' mix numbers, like '0' (line 2), and names, like 'x' (line "
       "4)"},
      {{"data.path=fraction.csv", "data.target=y"}, "data.target: fraction.csv:3:3 (y): the label 1.5 is not a whole"},
      {{"data.path=na.csv", "data.target=y"}, "data.target: na.csv:3:3 (y): the label is 'NA' (a missing value)"},
      {{"data.path=one.csv", "data.target=y"}, "data.target: one.csv: every label of column 'y' is 0, one class"},
      {{"data.path=good.csv", "data.target=y", "data.features=[]"}, "lists no column: a model needs at least one"},
      {{"data.path=latin1.csv", "data.target=y"}, "data.path: latin1.csv:3: byte 8 of the line (0xE9) is not UTF-8"},
      {{"data.path=gzipped.csv", "data.target=y"}, "data.path: gzipped.csv is gzip-compressed"},
      {{"data.path=sign.csv", "data.target=y"}, "data.path: sign.csv:3:2 (b): '+-4' is not a number"},
      {{"data.path=category_na.csv", "data.target=y", "data.categorical=[b]"},
       "data.path: category_na.csv:3:2 (b): the cell is 'NA' (a missing value) in a column of categories"},
      // A regression's target of names: the fix is the task, not data.categorical (an input's).
      {{"data.path=good.csv", "data.target=y", "data.task=regression"},
       "data.path: good.csv:2:3 (y): 'x' is not a number, in a column of numbers. The target of "
       "data.task=regression must hold numbers: correct the cell, or, for a target of class names, set "
       "data.task=classification."},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("trainer.max_epochs=1");
    auto run = run_process(csv_fit("run", args), dir.path());
    INFO(c.args.front() + " " + c.args.back() + "\n" + run.err);
    CHECK(run.exit_code != 0);
    check_clean_error(run);
    CHECK(run.err.find(c.message) != std::string::npos);
  }

  // Whole-number labels nearly all different: trained as classes, with a warning naming the fix.
  std::string counts = "a,b,y\n";
  for (int i = 0; i < 40; ++i)
    counts += std::to_string(i) + "," + std::to_string(i % 7) + "," + std::to_string(3 * i) + "\n";
  write_text(root / "counts.csv", counts);
  auto quantity =
      run_process(csv_fit("counts", {"data.path=counts.csv", "data.target=y", "trainer.max_epochs=1"}), dir.path());
  INFO(quantity.err);
  CHECK(quantity.exit_code == 0);
  CHECK(
      quantity.err.find("data.target: column 'y' holds 40 different whole numbers in 40 rows, trained as 118 classes; "
                        "if it is a quantity rather than a label, set data.task=regression") != std::string::npos);
  auto labels =
      run_process(csv_fit("labels", {"data.path=good.csv", "data.target=y", "trainer.max_epochs=1"}), dir.path());
  CHECK(labels.err.find("if it is a quantity") == std::string::npos);

  // A label holding a line break stays one line of class_names.txt (escaped as the checkpoint's).
  write_text(root / "broken.csv", "a,b,y\n1,2,\"two\nlines\"\n3,4,z\n5,6,z\n7,8,\"two\nlines\"\n");
  auto broken = run_process(
      csv_fit("broken", {"data.path=broken.csv", "data.target=y", "trainer.max_epochs=1", "data.val_fraction=0"}),
      dir.path());
  INFO(broken.err);
  REQUIRE(broken.exit_code == 0);
  CHECK(read_file(root / "broken" / "class_names.txt") == "two\\nlines\nz\n");

  // A run trained on a ';' table predicting a ',' one: the delimiter is named, not a column.
  auto semi = run_process(csv_fit("semi", {"data.path=semicolons.csv", "data.target=y", "data.delimiter=';'",
                                           "trainer.max_epochs=1", "data.val_fraction=0"}),
                          dir.path());
  INFO(semi.err);
  REQUIRE(semi.exit_code == 0);
  auto comma = run_process(
      {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=semi", "data.test_path=good.csv"}, dir.path());
  check_clean_error(comma);
  CHECK(comma.err.find("its header reads as one column, 'a,b,y'") != std::string::npos);

  // predict reads data.test_path: without it, it says so.
  auto fit = run_process(csv_fit("ok", {"data.path=good.csv", "data.target=y", "trainer.max_epochs=1"}), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  auto predict = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=ok"}, dir.path());
  CHECK(predict.exit_code != 0);
  check_clean_error(predict);
  CHECK(predict.err.find("data.test_path: is null: predict reads the rows of data.test_path") != std::string::npos);
}

TEST_CASE("data=csv keeps a timestamp's seconds: cells are standardised in float64 before they become float32", "") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // The label is whether a Unix time near 1.7e9 is 50 or more seconds past it: float32 steps are
  // 128 s there, so a table read as float32 leaves two distinct values (test/acc 0.85 was the best).
  for (const auto& [name, rows] : {std::pair<const char*, int>{"train.csv", 400}, {"test.csv", 100}}) {
    std::ofstream out(root / name);
    out << "ts,label\n";
    for (int i = 0; i < rows; ++i) {
      const int offset = (i * 37) % 100;
      out << 1700000000 + offset << ',' << (offset >= 50 ? 1 : 0) << '\n';
    }
  }
  auto fit = run_process(
      csv_fit("ts", {"data.path=train.csv", "data.test_path=test.csv", "data.target=label", "trainer.max_epochs=20"}),
      root.string());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(printed(fit.out, "test/acc") >= 0.97);
  CHECK_FALSE(contains(fit.err, "float32"));

  // Unstandardised, the column reaches the model rounded, and the log says so before training.
  auto raw = run_process(csv_fit("raw", {"data.path=train.csv", "data.target=label", "data.standardize=false",
                                         "trainer.max_epochs=1", "test_after_fit=false"}),
                         root.string());
  INFO(raw.err);
  REQUIRE(raw.exit_code == 0);
  CHECK(contains(raw.err, "data.features: the values of column 'ts' (mean 17000000"));
  CHECK(contains(raw.err, "reach the model as float32 with data.standardize=false"));

  // Labels 1 and 2 (1-based, as R writes them): class 0 would be an output that never trains.
  {
    std::ofstream out(root / "one_based.csv");
    out << "x,label\n";
    for (int i = 0; i < 60; ++i) out << i % 7 << ',' << 1 + i % 2 << '\n';
  }
  auto one_based = run_process(
      csv_fit("one", {"data.path=one_based.csv", "data.target=label", "trainer.max_epochs=1", "test_after_fit=false"}),
      root.string());
  INFO(one_based.err);
  REQUIRE(one_based.exit_code == 0);
  CHECK(contains(one_based.err, "data.target: the labels of one_based.csv run up to 2, but class 0 has no sample"));
}
