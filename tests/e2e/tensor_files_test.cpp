// data=tensors end to end: the real Fashion-MNIST (Debian's dataset-fashion-mnist), written at
// test time as NumPy .npy files and as a safetensors file, trained on by the real trainer binary;
// evaluated and predicted from its checkpoints; the memory a large mapped file costs; and the
// mistakes a user makes with such files, each a clean error naming the key and the file.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

const char* const kDataDir = "/usr/share/datasets/fashion-mnist";  // configs/paths/default.yaml

// The bytes after an IDX file's header (gzip -dc of Debian's file); its dimensions in `dims`.
std::string idx_data(const std::string& name, const fs::path& scratch, std::vector<int64_t>& dims) {
  const fs::path raw = scratch / (name + ".raw");
  const std::string command =
      "gzip -dc '" + (fs::path(kDataDir) / (name + ".gz")).string() + "' > '" + raw.string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string bytes = read_file(raw);
  fs::remove(raw);
  REQUIRE(bytes.size() > 4);
  const int rank = static_cast<unsigned char>(bytes[3]);
  dims.clear();
  for (int i = 0; i < rank; ++i) {
    int64_t dim = 0;
    for (int b = 0; b < 4; ++b) dim = (dim << 8) | static_cast<unsigned char>(bytes[4 + 4 * i + b]);
    dims.push_back(dim);
  }
  return bytes.substr(4 + 4 * static_cast<size_t>(rank));
}

struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};

// A safetensors file: 8-byte little-endian header length, the JSON header, the tensors' bytes.
void write_safetensors(const fs::path& path, const std::map<std::string, Tensor>& tensors) {
  std::string header = "{";
  std::string data;
  for (const auto& [name, tensor] : tensors) {
    std::string shape;
    for (const int64_t dim : tensor.shape) shape += (shape.empty() ? "" : ",") + std::to_string(dim);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"" + tensor.dtype +
              "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + tensor.data.size()) + "]}";
    data += tensor.data;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i, length >>= 8) out.put(static_cast<char>(length & 0xff));
  out << header << data;
}

// IEEE half of a byte value / 255 (exact enough: the test compares accuracy, not bits).
uint16_t half_of_pixel(unsigned char pixel) {
  const float value = static_cast<float>(pixel) / 255.0f;
  if (value == 0.0f) return 0;
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  const uint32_t mantissa = (bits >> 13) & 0x3ff;
  return static_cast<uint16_t>((exponent << 10) | mantissa);  // values in (0, 1]: always normal
}

struct Fashion {
  std::string images, labels, test_images, test_labels;
  int64_t rows = 0, test_rows = 0;
};

// Debian's Fashion-MNIST as raw bytes; false (after a skip) when the package is missing.
bool load_fashion(const fs::path& scratch, Fashion& f) {
  if (!fs::exists(fs::path(kDataDir) / "t10k-labels-idx1-ubyte.gz")) {
    skip_test(std::string(kDataDir) + " is missing: install Debian's dataset-fashion-mnist (scripts/setup.sh)",
              Skip::unexpected_in_ci);
    return false;
  }
  std::vector<int64_t> dims;
  f.images = idx_data("train-images-idx3-ubyte", scratch, dims);
  f.rows = dims[0];
  f.labels = idx_data("train-labels-idx1-ubyte", scratch, dims);
  f.test_images = idx_data("t10k-images-idx3-ubyte", scratch, dims);
  f.test_rows = dims[0];
  f.test_labels = idx_data("t10k-labels-idx1-ubyte", scratch, dims);
  return true;
}

// int64 little-endian copies of uint8 labels.
std::string int64_labels(const std::string& labels) {
  std::string out(labels.size() * 8, '\0');
  for (size_t i = 0; i < labels.size(); ++i) out[i * 8] = labels[i];
  return out;
}

// The largest value in `column` of a metrics.csv (0 when it has none).
double column_max(const CsvTable& csv, const std::string& column) {
  double largest = 0.0;
  for (size_t c = 0; c < csv.columns.size(); ++c) {
    if (csv.columns[c] != column) continue;
    for (const auto& row : csv.rows) {
      if (!row.at(c).empty()) largest = std::max(largest, std::stod(row.at(c)));
    }
  }
  return largest;
}

std::vector<std::string> tensors_fit(const std::string& run, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY, "fit", "data=tensors", "hydra.run.dir=" + run};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

TEST_CASE(
    "data=tensors on Fashion-MNIST saved as .npy trains exactly as data=fashion_mnist, and is tested and "
    "predicted from its checkpoint",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  Fashion f;
  if (!load_fashion(root, f)) return;
  // uint8 images as pixels, uint8 training labels, int64 test labels: the dtypes users save.
  write_npy(root / "x.npy", "|u1", {f.rows, 1, 28, 28}, f.images);
  write_npy(root / "y.npy", "|u1", {f.rows}, f.labels);
  write_npy(root / "tx.npy", "|u1", {f.test_rows, 1, 28, 28}, f.test_images);
  write_npy(root / "ty.npy", "<i8", {f.test_rows}, int64_labels(f.test_labels));

  // docs/data.md's first and third commands (model=cnn; test files), against data=fashion_mnist.
  // The same steps on both: Fashion-MNIST's normalisation, the same seed, so the same split and order.
  const std::vector<std::string> common = {"model=cnn",
                                           "seed=3",
                                           "trainer.max_steps=40",
                                           "trainer.limit_val_batches=4",
                                           "data.batch_size=64",
                                           "trainer.limit_test_batches=20"};
  std::vector<std::string> from_npy = {"data.inputs=x.npy",          "data.targets=y.npy",
                                       "data.test_inputs=tx.npy",    "data.test_targets=ty.npy",
                                       "data.normalize.mean=0.2860", "data.normalize.std=0.3530"};
  from_npy.insert(from_npy.end(), common.begin(), common.end());
  auto npy = run_process(tensors_fit((root / "npy").string(), from_npy), dir.path());
  INFO(npy.err);
  REQUIRE(npy.exit_code == 0);
  CHECK(npy.err.find("data: 54000 train / 6000 val / 10000 test samples") != std::string::npos);
  CHECK(npy.err.find("(the largest + 1)") == std::string::npos);  // 10 classes: no mismatch to report
  std::vector<std::string> idx_fit = {TRAINER_BINARY, "fit", "data=fashion_mnist", "hydra.run.dir=idx"};
  idx_fit.insert(idx_fit.end(), common.begin(), common.end());
  auto idx = run_process(idx_fit, dir.path());
  INFO(idx.err);
  REQUIRE(idx.exit_code == 0);
  // Bit for bit the same training: the same final metrics, printed to ten digits.
  CHECK(printed(npy.out, "test/loss") == printed(idx.out, "test/loss"));
  CHECK(printed(npy.out, "test/acc") == printed(idx.out, "test/acc"));
  CHECK(printed(npy.out, "test/acc") > 0.5);

  // The documented evaluation commands on this run: test, and predict over the test split
  // (docs/data.md's fourth command).
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=npy"}, dir.path());
  INFO(tested.err);
  REQUIRE(tested.exit_code == 0);
  auto predicted = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=npy"}, dir.path());
  INFO(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(printed(predicted.out, "predict/acc") == Approx(printed(tested.out, "test/acc")).margin(1e-6));
  // Every test sample: an evaluation takes model and data, not limits, from the run.
  const CsvTable labelled = read_csv(predictions_under(root / "npy" / "eval"));
  CHECK(labelled.rows.size() == 10000);

  // New inputs whose classes are unknown: data.test_inputs alone (docs/data.md's fifth command).
  fs::remove_all(root / "npy" / "eval");
  auto unlabelled = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=npy",
                                 "data.test_inputs=tx.npy", "data.test_targets=null"},
                                dir.path());
  INFO(unlabelled.err);
  REQUIRE(unlabelled.exit_code == 0);
  CHECK(unlabelled.out.find("predict/acc") == std::string::npos);
  const CsvTable fresh = read_csv(predictions_under(root / "npy" / "eval"));
  REQUIRE(fresh.rows.size() == 10000);
  for (size_t i = 0; i < fresh.rows.size(); i += 997) {
    CHECK(fresh.rows[i][1] == labelled.rows[i][1]);  // the same predictions
    CHECK(fresh.rows[i][3].empty());                 // no target
  }
  // A table for the model of .npy files: no encoding turns its rows into the model's inputs.
  write_text(root / "t.csv", "label,a\n0,1\n");
  auto table = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=npy", "data=csv",
                            "data.path=t.csv", "data.test_path=t.csv", "data.target=label"},
                           dir.path());
  INFO(table.err);
  CHECK(table.exit_code == 1);
  check_no_crash(table);
  CHECK(table.err.find("was trained on data=tensors, not on a table: it holds no encoding") != std::string::npos);
  CHECK(table.err.find("json") == std::string::npos);

  // fit and test need both files.
  auto no_targets = run_process(
      {TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=npy", "data.test_targets=null"}, dir.path());
  CHECK(no_targets.exit_code != 0);
  check_clean_error(no_targets);
  CHECK(no_targets.err.find("data.test_targets is null") != std::string::npos);

  // predict with no test files: the fix names this data's keys (it offered an image folder).
  auto nothing = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=npy", "data.test_inputs=null",
                              "data.test_targets=null"},
                             dir.path());
  INFO(nothing.err);
  check_clean_error(nothing);
  CHECK(contains(nothing.err, "predict has no sample: the test split is empty"));
  CHECK(contains(nothing.err, "data.test_inputs=<.npy file>"));

  // test and predict read the test files alone: the training files (x.npy and y.npy, relative to
  // the directory the fit ran in) may be gone; the checkpoint says what the model was trained on.
  // Run from another directory that holds files of the same names, the checkpoint's relative paths
  // are still the training run's files, not these two samples.
  fs::rename(root / "x.npy", root / "moved_x.npy");
  fs::rename(root / "y.npy", root / "moved_y.npy");
  const fs::path elsewhere = root / "elsewhere";
  fs::create_directories(elsewhere);
  write_npy(elsewhere / "tx.npy", "|u1", {2, 1, 28, 28}, std::string(2 * 784, '\0'));
  write_npy(elsewhere / "ty.npy", "<i8", {2}, std::string(2 * 8, '\0'));
  auto alone = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=../npy"}, elsewhere.string());
  INFO(alone.err);
  REQUIRE(alone.exit_code == 0);
  const std::string fit_cwd = fs::canonical(root).string();
  CHECK(alone.err.find("the checkpoint's relative data.inputs, data.targets, data.test_inputs, data.test_targets "
                       "read in the training run's working directory " +
                       fit_cwd) != std::string::npos);
  CHECK(alone.err.find("data: " + fit_cwd + "/tx.npy alone") != std::string::npos);
  CHECK(printed(alone.out, "test/acc") == printed(tested.out, "test/acc"));
  fs::remove_all(root / "npy" / "eval");
  auto predicted_alone = run_process({TRAINER_BINARY, "predict", "ckpt_path=last", "hydra.run.dir=npy",
                                      "data.test_inputs=tx.npy", "data.test_targets=null"},
                                     dir.path());
  INFO(predicted_alone.err);
  REQUIRE(predicted_alone.exit_code == 0);
  const CsvTable again = read_csv(predictions_under(root / "npy" / "eval"));
  REQUIRE(again.rows.size() == 10000);
  for (size_t i = 0; i < again.rows.size(); i += 997) CHECK(again.rows[i][1] == labelled.rows[i][1]);
  // Checked against the checkpoint's inputs: float samples for a model trained on uint8 pixels.
  write_npy(root / "float_x.npy", "<f4", {2, 1, 28, 28}, std::string(2 * 784 * 4, '\0'));
  write_npy(root / "two_y.npy", "|u1", {2}, std::string(2, '\0'));
  auto floats = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=npy",
                             "data.test_inputs=float_x.npy", "data.test_targets=two_y.npy"},
                            dir.path());
  CHECK(floats.exit_code != 0);
  check_clean_error(floats);
  CHECK(floats.err.find("float_x.npy holds float32 samples, but the training inputs (the checkpoint's) are uint8") !=
        std::string::npos);
}

TEST_CASE("data=tensors reads named float16 tensors of a safetensors file with int32 labels, and an MLP learns",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  Fashion f;
  if (!load_fashion(root, f)) return;
  const int64_t rows = 6000;
  std::string pixels(static_cast<size_t>(rows) * 784 * 2, '\0');
  for (size_t i = 0; i < static_cast<size_t>(rows) * 784; ++i) {
    const uint16_t h = half_of_pixel(static_cast<unsigned char>(f.images[i]));
    pixels[2 * i] = static_cast<char>(h & 0xff);
    pixels[2 * i + 1] = static_cast<char>(h >> 8);
  }
  std::string labels(static_cast<size_t>(rows) * 4, '\0');
  for (size_t i = 0; i < static_cast<size_t>(rows); ++i) labels[4 * i] = f.labels[i];
  write_safetensors(root / "train.safetensors",
                    {{"pixels", {"F16", {rows, 784}, pixels}}, {"labels", {"I32", {rows}, labels}}});
  // docs/data.md's second command; the inputs given as '~/train.safetensors' (quoted, as Hydra's
  // grammar wants a tilde), expanded from $HOME as for data.root.
  const ScopedEnv home("HOME", root.string());
  auto fit = run_process(tensors_fit("mlp", {"data.inputs='~/train.safetensors'", "data.targets=train.safetensors",
                                             "data.input_key=pixels", "data.target_key=labels", "trainer.max_epochs=3",
                                             "test_after_fit=false"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("data: 5400 train / 600 val / 0 test samples") != std::string::npos);
  CHECK(fit.err.find("model: mlp 784-256-128-10") != std::string::npos);  // input size and classes from the data
  const CsvTable csv = read_csv(root / "mlp" / "metrics.csv");
  CHECK(column_max(csv, "val/acc") > 0.75);  // measured 0.81; chance is 0.10

  // data.num_classes smaller than the labels say: refused, naming the first label out of range.
  auto few = run_process(tensors_fit("few", {"data.inputs=train.safetensors", "data.targets=train.safetensors",
                                             "data.input_key=pixels", "data.target_key=labels", "data.num_classes=5"}),
                         dir.path());
  check_clean_error(few);
  CHECK(few.err.find("data.targets: train.safetensors: sample 0's target is 9, outside the 5 classes (0 .. 4)") !=
        std::string::npos);
  // Two tensors and no key: which one must be said, listing both.
  auto ambiguous = run_process(tensors_fit("ambiguous", {"data.inputs=train.safetensors",
                                                         "data.targets=train.safetensors", "data.target_key=labels"}),
                               dir.path());
  check_clean_error(ambiguous);
  CHECK(ambiguous.err.find("data.inputs: train.safetensors holds 2 tensors (labels, pixels)") != std::string::npos);
  CHECK(ambiguous.err.find("Set data.input_key to one of: labels, pixels.") != std::string::npos);
  // A name the file does not hold.
  auto misnamed =
      run_process(tensors_fit("misnamed", {"data.inputs=train.safetensors", "data.targets=train.safetensors",
                                           "data.input_key=pixel", "data.target_key=labels"}),
                  dir.path());
  check_clean_error(misnamed);
  CHECK(misnamed.err.find("data.input_key: train.safetensors holds no tensor 'pixel'") != std::string::npos);
}

TEST_CASE("data=tensors maps its files: a 1.5 GB inputs file costs no more memory than the batches drawn") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // 500,000 float32 rows of 784 values, as a sparse file (it reads as zeros and takes no disk),
  // with real-looking labels 0..9.
  const int64_t rows = 500000;
  write_npy(root / "big.npy", "<f4", {rows, 784}, "");
  const auto size =
      static_cast<std::uintmax_t>(fs::file_size(root / "big.npy")) + static_cast<std::uintmax_t>(rows) * 784 * 4;
  fs::resize_file(root / "big.npy", size);
  std::string labels(static_cast<size_t>(rows), '\0');
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<char>(i % 10);
  write_npy(root / "labels.npy", "|u1", {rows}, labels);
  auto fit = run_process(tensors_fit("big", {"data.inputs=big.npy", "data.targets=labels.npy", "trainer.max_steps=6",
                                             "trainer.limit_val_batches=2", "test_after_fit=false",
                                             "+callbacks.device_stats_monitor={}", "trainer.log_every_n_steps=2"}),
                         dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.find("data: 450000 train / 50000 val / 0 test samples") != std::string::npos);
  const CsvTable csv = read_csv(root / "big" / "metrics.csv");
  const double peak = column_max(csv, "device_stats/host_peak_rss_mb");
  INFO("peak RSS " << peak << " MiB for a " << size / (1024 * 1024) << " MiB inputs file");
  CHECK(peak > 0.0);
  CHECK(peak < 700.0);  // the file alone is 1,496 MiB; the process measured 246 MiB
}

TEST_CASE("data=tensors: the mistakes users make with array files are clean errors naming the key and the file") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const std::string pixels(40 * 4 * 4, '\x01');
  write_npy(root / "x.npy", "<f4", {40, 4}, pixels);
  std::string labels(40, '\0');
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<char>(i % 3);
  write_npy(root / "y.npy", "|u1", {40}, labels);
  write_npy(root / "short_y.npy", "|u1", {30}, labels.substr(0, 30));
  write_npy(root / "float_y.npy", "<f4", {40}, pixels.substr(0, 160));
  std::string negative = labels;
  negative[7] = static_cast<char>(-2);
  write_npy(root / "negative_y.npy", "|i1", {40}, negative);
  write_npy(root / "fortran.npy", "<f4", {40, 4}, pixels, true);
  std::string huge(40 * 8, '\0');
  huge[8 * 5] = static_cast<char>(0x80);  // 10,000,000 = 0x989680, little-endian, at row 5
  huge[8 * 5 + 1] = static_cast<char>(0x96);
  huge[8 * 5 + 2] = static_cast<char>(0x98);
  write_npy(root / "huge_y.npy", "<i8", {40}, huge);
  write_npy(root / "complex.npy", "<c8", {20, 4}, pixels);
  write_npy(root / "big_endian.npy", ">f4", {40, 4}, pixels);
  write_npy(root / "truncated.npy", "<f4", {40, 4}, pixels.substr(0, 100));
  std::string with_nan = pixels;
  const float nan = std::nanf("");
  std::memcpy(&with_nan[(9 * 4 + 2) * 4], &nan, sizeof nan);  // sample 9, value 2
  write_npy(root / "nan.npy", "<f4", {40, 4}, with_nan);
  write_npy(root / "bytes.npy", "|u1", {40, 4}, std::string(40 * 4, '\x7f'));
  write_npy(root / "hwc.npy", "|u1", {40, 8, 8, 3}, std::string(40 * 8 * 8 * 3, '\x7f'));
  { std::ofstream(root / "text.npy") << "not numpy\n"; }
  { std::ofstream(root / "x.csv") << "1,2\n"; }
  REQUIRE(::mkfifo((root / "fifo.npy").c_str(), 0644) == 0);  // opening it would wait for a writer

  struct Case {
    std::vector<std::string> overrides;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"data.inputs=missing.npy", "data.targets=y.npy"}, "data.inputs: cannot open missing.npy: No such file"},
      {{"data.inputs=fifo.npy", "data.targets=y.npy"}, "data.inputs: fifo.npy is not a regular file"},
      {{"data.inputs=x.csv", "data.targets=y.npy"}, "data.inputs: x.csv is neither a .npy nor a .safetensors file"},
      {{"data.inputs=text.npy", "data.targets=y.npy"}, "data.inputs: text.npy: not a .npy file"},
      {{"data.inputs=truncated.npy", "data.targets=y.npy"},
       "data.inputs: truncated.npy: ends after 100 of the 640 data bytes its header announces"},
      {{"data.inputs=fortran.npy", "data.targets=y.npy"}, "data.inputs: fortran.npy: the array is in Fortran order"},
      {{"data.inputs=complex.npy", "data.targets=y.npy"}, "its dtype '<c8' is not one trainer reads"},
      {{"data.inputs=big_endian.npy", "data.targets=y.npy"}, "its dtype '>f4' is not one trainer reads"},
      {{"data.inputs=x.npy", "data.targets=short_y.npy"},
       "data.targets: short_y.npy holds 30 targets for 40 input samples"},
      {{"data.inputs=x.npy", "data.targets=float_y.npy"}, "data.targets: float_y.npy holds float32 targets"},
      {{"data.inputs=x.npy", "data.targets=negative_y.npy"},
       "data.targets: negative_y.npy: sample 7's target is -2; class indices start at 0"},
      {{"data.inputs=x.npy", "data.targets=y.npy", "data.input_key=x"}, "data.input_key: names tensor 'x', but x.npy"},
      {{"data.inputs=x.npy", "data.targets=huge_y.npy"},
       "huge_y.npy: the largest target is 10000000, so the model would get that many outputs plus one"},
      {{"data.inputs=x.npy", "data.targets=y.npy", "data.val_fraction=0.99"},
       "data.val_fraction: 0.990000 leaves 0 of the 40 samples of x.npy for training"},
      {{"data.inputs=y.npy", "data.targets=y.npy"}, "data.inputs: y.npy holds one value per sample (shape [40])"},
      {{"data.inputs=x.npy", "data.targets=y.npy", "data.test_inputs=x.npy"},
       "the test split needs both data.test_inputs and data.test_targets"},
      {{"data.inputs=nan.npy", "data.targets=y.npy"},
       "data.inputs: nan.npy: sample 9 holds NaN (its value 2): inputs must be finite numbers"},
      {{"data.inputs=x.npy", "data.targets=y.npy", "data.test_inputs=nan.npy", "data.test_targets=y.npy"},
       "data.test_inputs: nan.npy: sample 9 holds NaN"},
      {{"data.inputs=hwc.npy", "data.targets=y.npy", "model=cnn"},
       "data=tensors: the data's samples are shaped [8, 8, 3]: channels last (height, width, 3 channels)"},
      // Pixels (uint8, divided by 255) to train on, values to test on: another scale.
      {{"data.inputs=bytes.npy", "data.targets=y.npy", "data.test_inputs=x.npy", "data.test_targets=y.npy"},
       "data.test_inputs: x.npy holds float32 samples, but the training inputs"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> overrides = c.overrides;
    overrides.push_back("trainer.max_steps=1");
    auto result = run_process(tensors_fit("bad", overrides), dir.path());
    INFO(c.expected << "\n" << result.err);
    check_clean_error(result);
    CHECK(result.err.find(c.expected) != std::string::npos);
  }
  // And a well-formed pair of these small files trains: the errors above are the files', not the set-up's.
  auto good =
      run_process(tensors_fit("good", {"data.inputs=x.npy", "data.targets=y.npy", "trainer.max_steps=2"}), dir.path());
  INFO(good.err);
  CHECK(good.exit_code == 0);
  CHECK(good.err.find("data: 36 train / 4 val / 0 test samples") != std::string::npos);
  CHECK(good.err.find("is data.inputs' file") == std::string::npos);
  // Testing on the training file (through another spelling of its path) trains, with a warning.
  auto same = run_process(tensors_fit("same", {"data.inputs=x.npy", "data.targets=y.npy", "data.test_inputs=./x.npy",
                                               "data.test_targets=y.npy", "trainer.max_steps=2"}),
                          dir.path());
  INFO(same.err);
  CHECK(same.exit_code == 0);
  CHECK(same.err.find("data.test_inputs: ./x.npy is data.inputs' file, so the test samples are the samples trained") !=
        std::string::npos);
  // So is trainer test from a checkpoint given the training file (it reads the test files alone).
  auto tested = run_process({TRAINER_BINARY, "test", "ckpt_path=last", "hydra.run.dir=same", "data.test_inputs=x.npy",
                             "data.test_targets=y.npy"},
                            dir.path());
  INFO(tested.err);
  CHECK(tested.exit_code == 0);
  CHECK(tested.err.find("data.test_inputs: x.npy is the file the checkpoint was trained on (data.inputs)") !=
        std::string::npos);
}

TEST_CASE("data=tensors: arrays rewritten in place since the checkpoint are said on validate and on resume") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // 600 samples of 8 floats, the label the sign of the first; then the same rows reversed.
  const int64_t rows = 600;
  auto write = [&](bool reversed) {
    std::string x(static_cast<size_t>(rows) * 8 * sizeof(float), '\0');
    std::string y(static_cast<size_t>(rows) * sizeof(int64_t), '\0');
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t at = reversed ? rows - 1 - r : r;
      for (int64_t c = 0; c < 8; ++c) {
        const float value = static_cast<float>(std::sin(static_cast<double>(r * 8 + c) * 0.7));
        std::memcpy(&x[static_cast<size_t>((at * 8 + c) * 4)], &value, 4);
      }
      const int64_t label = std::sin(static_cast<double>(r * 8) * 0.7) > 0 ? 1 : 0;
      std::memcpy(&y[static_cast<size_t>(at * 8)], &label, 8);
    }
    write_npy(root / "x.npy", "<f4", {rows, 8}, x);
    write_npy(root / "y.npy", "<i8", {rows}, y);
  };
  write(false);
  auto fit = run_process(
      tensors_fit("run", {"data.inputs=x.npy", "data.targets=y.npy", "trainer.max_epochs=1", "test_after_fit=false"}),
      dir.path());
  INFO(fit.err);
  REQUIRE(fit.exit_code == 0);
  const std::vector<std::string> validate = {TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run"};
  auto same = run_process(validate, dir.path());
  INFO(same.err);
  REQUIRE(same.exit_code == 0);
  CHECK_FALSE(contains(same.err, "not the arrays the checkpoint was trained on"));

  write(true);  // numpy.save over the same paths, the rows in another order
  auto changed = run_process(validate, dir.path());
  INFO(changed.err);
  REQUIRE(changed.exit_code == 0);
  CHECK(contains(changed.err, "y.npy are not the arrays the checkpoint was trained on"));
  auto resumed = run_process(tensors_fit("run", {"data.inputs=x.npy", "data.targets=y.npy", "trainer.max_epochs=2",
                                                 "test_after_fit=false", "ckpt_path=last"}),
                             dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "a resumed fit trains on the changed samples"));
}
