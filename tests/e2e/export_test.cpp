// `trainer export`: a checkpoint's weights written as .safetensors and read back by Python's
// safetensors and torch (tests/python/check_safetensors_export.py). Skipped without the engine
// (TRAINER_LIBTORCH=none); the Python check is skipped with a warning when TRAINER_TEST_PYTHON is
// empty. The export loaded as a PyTorch module by python/trainer_export.py predicts what
// `trainer predict` does (tests/python/check_export_in_pytorch.py), and docs/evaluation.md's snippet
// runs as written.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using trainer::testing::run_process;
using trainer::testing::TempDir;
using namespace trainer::testing;

namespace {

// One short epoch of a small CNN (batch norm: float parameters plus float and int64 buffers).
std::vector<std::string> tiny_fit(const std::string& run_dir) {
  return {TRAINER_BINARY,
          "fit",
          "data=synthetic",
          "data.num_samples=320",
          "data.batch_size=64",
          "data.num_workers=0",
          "model=cnn",
          "model.channels=[4,8]",
          "model.hidden_size=16",
          "trainer.max_epochs=1",
          "trainer.num_sanity_val_steps=0",
          "test_after_fit=false",
          "hydra.run.dir=" + run_dir};
}

// `++key=value` adds the key or overrides it, so these work whether or not the primary config
// declares `format` and `export_path`.
std::vector<std::string> export_command(const std::string& run_dir, std::vector<std::string> overrides) {
  std::vector<std::string> argv = {TRAINER_BINARY, "export", "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), overrides.begin(), overrides.end());
  return argv;
}

void check_with_python(const fs::path& exported, const fs::path& checkpoint) {
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: the export was not read back with Python's safetensors and torch",
                     Skip::unexpected_in_ci);
  }
  auto check = run_process({python, std::string(TRAINER_SOURCE_DIR) + "/tests/python/check_safetensors_export.py",
                            exported.string(), checkpoint.string()});
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("ok ") == 0);
}

uint64_t header_length(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char bytes[8] = {};
  in.read(reinterpret_cast<char*>(bytes), 8);
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t(bytes[i]) << (8 * i);
  return length;
}

}  // namespace

TEST_CASE("export writes a checkpoint's weights as safetensors that Python's torch reads back", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto fit = run_process(tiny_fit("run"), dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const fs::path last = run / "checkpoints" / "last.ckpt";
  REQUIRE(fs::exists(last));

  {  // ckpt_path=last writes last.safetensors into the export's own directory, not the training run's
    auto exported = run_process(export_command("run", {"ckpt_path=last"}), dir.path());
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    CHECK_FALSE(fs::exists(run / "checkpoints" / "last.safetensors"));
    REQUIRE(fs::exists(run / "eval"));
    fs::path file;
    for (const auto& entry : fs::directory_iterator(run / "eval")) file = entry.path() / "last.safetensors";
    REQUIRE(fs::exists(file));
    CHECK_FALSE(fs::exists(file.string() + ".tmp"));
    CHECK(exported.err.find(file.string()) != std::string::npos);  // the log names the file
    CHECK(header_length(file) % 8 == 0);
    check_with_python(file, last);
  }

  {  // ckpt_path=best, with format and export_path
    auto exported = run_process(
        export_command("run", {"ckpt_path=best", "++format=safetensors", "++export_path=weights/best.safetensors"}),
        dir.path());
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    const fs::path file = fs::path(dir.path()) / "weights" / "best.safetensors";
    REQUIRE(fs::exists(file));
    fs::path best;
    for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
      if (entry.path().filename().string().rfind("epoch_", 0) == 0) best = entry.path();
    }
    REQUIRE_FALSE(best.empty());
    check_with_python(file, best);
  }

  {  // a checkpoint given by path, exported from another run directory
    auto exported = run_process(export_command("elsewhere", {"ckpt_path=" + last.string(),
                                                             "++export_path=" + (run / "w.safetensors").string()}),
                                dir.path());
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    check_with_python(run / "w.safetensors", last);
  }

  {  // bad input stops with a clear error
    auto format = run_process(export_command("run", {"ckpt_path=last", "++format=onnx"}), dir.path());
    CHECK(format.exit_code == 1);
    check_no_crash(format);
    CHECK(format.err.find("onnx") != std::string::npos);
    CHECK(format.err.find("safetensors") != std::string::npos);

    auto missing = run_process(export_command("run", {"ckpt_path=nowhere.ckpt"}), dir.path());
    CHECK(missing.exit_code == 1);
    check_no_crash(missing);
    CHECK(missing.err.find("checkpoint not found") != std::string::npos);

    auto none = run_process(export_command("run", {}), dir.path());
    CHECK(none.exit_code == 1);
    check_no_crash(none);
    CHECK(none.err.find("ckpt_path") != std::string::npos);
  }
}

namespace {

const char* const kDataDir = "/usr/share/datasets/fashion-mnist";  // configs/paths/default.yaml

// The ```python block under docs/evaluation.md's "## Use the weights in PyTorch".
std::string documented_python() {
  const std::string doc = read_file(fs::path(TRAINER_SOURCE_DIR) / "docs" / "evaluation.md");
  const size_t section = doc.find("## Use the weights in PyTorch");
  const size_t begin = doc.find("```python\n", section);
  const size_t end = doc.find("```\n", begin + 10);
  if (section == std::string::npos || begin == std::string::npos || end == std::string::npos) return "";
  return doc.substr(begin + 10, end - begin - 10);
}

// The first `count` predictions of a predictions.csv (its `prediction` column; class names hold no comma).
std::vector<std::string> predicted_classes(const fs::path& csv, size_t count) {
  std::istringstream lines(read_file(csv));
  std::string line;
  std::getline(lines, line);  // header
  std::vector<std::string> classes;
  while (classes.size() < count && std::getline(lines, line)) {
    const size_t first = line.find(',');
    classes.push_back(line.substr(first + 1, line.find(',', first + 1) - first - 1));
  }
  return classes;
}

}  // namespace

TEST_CASE("an export loads into PyTorch with python/trainer_export.py and predicts what trainer predict does") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (!test_python_imports("torch, safetensors")) {
    return skip_test("TRAINER_TEST_PYTHON has no torch and safetensors to load the export with",
                     Skip::unexpected_in_ci);
  }
  if (!fs::exists(fs::path(kDataDir) / "t10k-images-idx3-ubyte.gz")) {
    return skip_test("Fashion-MNIST is not installed (dataset-fashion-mnist)", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const std::string python_path = "PYTHONPATH=" + std::string(TRAINER_SOURCE_DIR) + "/python";
  // Non-default models on the real data: float64 weights, dropout, a bottleneck resnet,
  // torchvision's own resnet18 layout (width 64), and an mlp on a table with a column of categories
  // (scikit-learn's iris; the rows predicted are a file of their own, without the species).
  const std::string images = std::string(kDataDir) + "/t10k-images-idx3-ubyte.gz";
  const std::string table = (fs::path(dir.path()) / "new_rows.csv").string();
  struct Case {
    std::string name;
    std::vector<std::string> overrides;
    std::string samples;  // what predict scored: the test images or the table
  };
  const std::vector<Case> models = {
      {"mlp", {"model=mlp", "model.hidden_sizes=[48,24]", "model.dropout=0.1", "trainer.precision=64-true"}, images},
      {"cnn", {"model=cnn", "model.channels=[6,12]", "model.hidden_size=20"}, images},
      {"resnet50", {"model=resnet", "model.depth=50", "model.width=4"}, images},
      {"resnet18", {"model=resnet", "data.batch_size=8"}, images},
      {"table",
       {"data=csv", "data.path=iris.csv", "data.target=species", "data.categorical=[colour]",
        "model.hidden_sizes=[16]"},
       table},
  };
  for (const auto& [name, overrides, samples] : models) {
    DYNAMIC_SECTION(name) {
      if (name == "table") {
        if (!test_python_imports("sklearn")) {
          return skip_test("TRAINER_TEST_PYTHON has no scikit-learn to take iris from", Skip::unexpected_in_ci);
        }
        auto made = run_process({python, "-c", R"(
from sklearn.datasets import load_iris
d = load_iris(as_frame=True)
f = d.frame.drop(columns=['target'])
f['colour'] = [('red', 'green', 'blue')[i % 3] for i in range(len(f))]
f['species'] = [d.target_names[i] for i in d.target]
f.to_csv('iris.csv', index=False)
f.sample(n=40, random_state=1).drop(columns=['species']).to_csv('new_rows.csv', index=False)
)"},
                                dir.path());
        INFO(made.err);
        REQUIRE(made.exit_code == 0);
      }
      std::vector<std::string> fit = {TRAINER_BINARY,
                                      "fit",
                                      "trainer.max_epochs=1",
                                      "trainer.limit_train_batches=3",
                                      "trainer.limit_val_batches=1",
                                      "trainer.num_sanity_val_steps=0",
                                      "test_after_fit=false",
                                      "hydra.run.dir=" + name};
      fit.insert(fit.end(), overrides.begin(), overrides.end());
      auto trained = run_process(fit, dir.path());
      INFO(trained.err);
      REQUIRE(trained.exit_code == 0);
      std::vector<std::string> predict = {TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=" + name,
                                          "trainer.limit_predict_batches=2"};
      if (name == "table") predict.push_back("data.test_path=new_rows.csv");  // docs/data.md's predict command
      auto predicted = run_process(predict, dir.path());
      INFO(predicted.err);
      REQUIRE(predicted.exit_code == 0);
      const fs::path predictions = predictions_under(fs::path(dir.path()) / name / "eval");
      const fs::path exported = fs::path(dir.path()) / (name + ".safetensors");
      auto export_run = run_process(
          {TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=" + name, "export_path=" + exported.string()},
          dir.path());
      INFO(export_run.err);
      REQUIRE(export_run.exit_code == 0);

      auto check = run_process({python, std::string(TRAINER_SOURCE_DIR) + "/tests/python/check_export_in_pytorch.py",
                                exported.string(), predictions.string(), samples},
                               dir.path(), {python_path});
      INFO(check.out << check.err);
      CHECK(check.exit_code == 0);
      CHECK(check.out.find("ok ") != std::string::npos);
      if (name == "resnet18" && run_process({python, "-c", "import torchvision"}).exit_code == 0) {
        CHECK(check.out.find("torchvision's resnet loads the export and agrees") != std::string::npos);
      }

      if (name == "cnn") {  // the documented snippet, as written, on this export
        std::string snippet = documented_python();
        const std::string placeholder = "runs/cnn/eval/export_2026-11-25_17-16-40/last.safetensors";
        const size_t at = snippet.find(placeholder);
        REQUIRE(at != std::string::npos);
        snippet.replace(at, placeholder.size(), exported.string());
        auto documented = run_process({python, "-c", snippet}, dir.path(), {python_path});
        INFO(documented.err);
        REQUIRE(documented.exit_code == 0);
        std::string expected = "[";
        for (const std::string& label : predicted_classes(predictions, 8)) {
          expected += (expected.size() > 1 ? ", '" : "'") + label + "'";
        }
        CHECK(documented.out == expected + "]\n");
      }
    }
  }
}

TEST_CASE("--help lists the export command") {
  auto help = run_process({TRAINER_BINARY, "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("export") != std::string::npos);
  CHECK(help.out.find("safetensors") != std::string::npos);
}
