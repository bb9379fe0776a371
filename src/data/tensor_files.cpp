#include "trainer/data/tensor_files.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "trainer/data/missing_classes.h"
#include "trainer/data/tensor_dataset.h"
#include "trainer/data/test_is_training_data.h"
#include "trainer/formats/array_file.h"
#include "trainer/formats/crc32c.h"
#include "trainer/util/error.h"
#include "trainer/util/home_path.h"
#include "trainer/util/log.h"
#include "trainer/util/mapped_file.h"

namespace trainer::data {
namespace {

const char* const kCheckpoints = "the checkpoint's";
const TestAndTraining kTestInputs{"data.test_inputs", "data.inputs", "file", "samples", "held-out samples"};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// NumPy's name of a dtype, as users save them.
std::string numpy_name(at::ScalarType type) {
  switch (type) {
    case at::kByte:
      return "uint8";
    case at::kChar:
      return "int8";
    case at::kShort:
      return "int16";
    case at::kInt:
      return "int32";
    case at::kLong:
      return "int64";
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    case at::kBool:
      return "bool";
    default:
      return c10::toString(type);
  }
}

std::string shape_text(at::IntArrayRef shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The array of the file that data.<file_key> names (in a safetensors file, the tensor that
// data.<name_key> names, or its only one) as a tensor over the mapped bytes; the mapping lives as
// long as the tensor's storage.
at::Tensor open_array(const std::string& path, const std::string& file_key, const std::string& name,
                      const std::string& name_key, bool key_may_not_apply = false) {
  const std::string key = "data." + file_key;
  const bool npy = ends_with(path, ".npy");
  if (!npy && !ends_with(path, ".safetensors")) {
    throw Error(key, path + " is neither a .npy nor a .safetensors file",
                "Save the array with numpy.save (.npy) or safetensors' save_file (.safetensors).");
  }
  auto file = std::make_shared<const MappedFile>(expand_home(path), key);
  formats::ArrayView array;
  if (npy) {
    if (!name.empty() && !key_may_not_apply) {
      throw Error("data." + name_key, "names tensor '" + name + "', but " + path + " is a .npy file of one array",
                  "Set data." + name_key + "=null.");
    }
    array = formats::read_npy(file->data(), file->size(), path, key);
  } else {
    const std::vector<formats::ArrayView> arrays = formats::read_safetensors(file->data(), file->size(), path, key);
    std::string names;
    for (const auto& candidate : arrays) {
      names += (names.empty() ? "" : ", ") + candidate.name;
      if (candidate.name == name || (name.empty() && arrays.size() == 1)) array = candidate;
    }
    if (array.dtype.empty()) {
      throw Error(
          name.empty() ? key : "data." + name_key,
          name.empty()
              ? path + " holds " + std::to_string(arrays.size()) + " tensors (" + names +
                    "), so it must be said which one"
              : path + " holds no tensor '" + name + "'; it holds " + (names.empty() ? std::string("none") : names),
          arrays.empty() ? "Save the tensor into the file." : "Set data." + name_key + " to one of: " + names + ".");
    }
  }
  if (array.shape.empty()) {
    throw Error(key,
                path + (array.name.empty() ? "" : " (tensor '" + array.name + "')") +
                    " holds a single value, not samples along a first dimension",
                "Save an array of shape [samples, ...].");
  }
  auto* bytes = const_cast<uint8_t*>(file->data() + array.offset);  // read-only mapping: never written
  return at::from_blob(
      bytes, array.shape, [file](void* /*unused*/) {}, at::TensorOptions().dtype(array_scalar_type(array.dtype)));
}

// The largest target (-1 for none), after checking they are integer class indices in
// [0, num_classes) (num_classes 0: any non-negative value).
int64_t check_targets(const at::Tensor& targets, int64_t samples, const std::string& path, const std::string& key,
                      int64_t num_classes) {
  if (at::isFloatingType(targets.scalar_type()) || targets.scalar_type() == at::kBool) {
    throw Error(key,
                path + " holds " + numpy_name(targets.scalar_type()) +
                    " targets; data=tensors trains classifiers on integer class indices",
                "Save the labels as integers, e.g. numpy.save(path, labels.astype('int64')).");
  }
  if (targets.dim() != 1) {
    throw Error(key, path + " holds targets of shape " + shape_text(targets.sizes()) + ", not one label per sample",
                "Save them as a 1-D array: labels.reshape(-1).");
  }
  if (targets.size(0) != samples) {
    throw Error(key,
                path + " holds " + std::to_string(targets.size(0)) + " targets for " + std::to_string(samples) +
                    " input samples",
                "Give one target per input sample, in the same order.");
  }
  if (samples == 0) return -1;
  const at::Tensor labels = targets.to(at::kLong);
  const int64_t smallest = labels.min().item<int64_t>();
  const int64_t largest = labels.max().item<int64_t>();
  if (smallest < 0) {
    const int64_t row = at::nonzero(labels < 0)[0][0].item<int64_t>();
    throw Error(key,
                path + ": sample " + std::to_string(row) + "'s target is " +
                    std::to_string(labels[row].item<int64_t>()) + "; class indices start at 0",
                "Map the labels to 0 .. classes - 1.");
  }
  if (num_classes > 0 && largest >= num_classes) {
    const int64_t row = at::nonzero(labels >= num_classes)[0][0].item<int64_t>();
    throw Error(key,
                path + ": sample " + std::to_string(row) + "'s target is " +
                    std::to_string(labels[row].item<int64_t>()) + ", outside the " + std::to_string(num_classes) +
                    (num_classes == 1 ? " class" : " classes") + " (0 .. " + std::to_string(num_classes - 1) + ")",
                key == "data.test_targets"
                    ? "The test labels must be among the training classes (0 .. " + std::to_string(num_classes - 1) +
                          "): map them so, or set data.num_classes to cover them when training."
                    : "Set data.num_classes to the number of classes, or null to take the largest target + 1.");
  }
  return largest;
}

}  // namespace

at::ScalarType array_scalar_type(const std::string& dtype) {
  if (dtype == "U8") return at::kByte;
  if (dtype == "I8") return at::kChar;
  if (dtype == "I16") return at::kShort;
  if (dtype == "I32") return at::kInt;
  if (dtype == "I64") return at::kLong;
  if (dtype == "F16") return at::kHalf;
  if (dtype == "BF16") return at::kBFloat16;
  if (dtype == "F32") return at::kFloat;
  if (dtype == "F64") return at::kDouble;
  return at::kBool;  // BOOL: formats::read_* return no other names
}

// Float inputs hold numbers only: a NaN or infinity would make every loss it meets NaN (data=csv
// refuses them too). A file of up to kCheckedAtLoad bytes is checked whole at load, a slice at a
// time; a larger one (mapped, read only as batches are drawn) batch by batch as they are drawn.
constexpr int64_t kCheckedAtLoad = int64_t{256} << 20;

bool check_finite_at_load(const at::Tensor& inputs, const std::string& path, const std::string& key) {
  if (!at::isFloatingType(inputs.scalar_type()) || inputs.numel() == 0) return true;
  if (inputs.numel() * static_cast<int64_t>(inputs.element_size()) > kCheckedAtLoad) {
    log::info(key + ": " + path + " is too large to read whole at load: its values are checked for NaN and " +
              "infinity in each batch as it is drawn");
    return false;
  }
  const int64_t per_row = std::max<int64_t>(1, inputs.numel() / inputs.size(0));
  const int64_t rows = std::max<int64_t>(1, (int64_t{4} << 20) / per_row);  // about 4M values a slice
  for (int64_t start = 0; start < inputs.size(0); start += rows) {
    check_finite(inputs.narrow(0, start, std::min(rows, inputs.size(0) - start)), start, path, key);
  }
  return true;
}

namespace {

// What the model was trained on: the training inputs' sample shape and dtype, and where they
// came from (a file, or the checkpoint of a run on them), for the test split's checks.
struct TrainedInputs {
  std::vector<int64_t> sample_shape;
  at::ScalarType dtype = at::kFloat;
  std::string source;       // "x.npy", or "the checkpoint's"
  std::string fingerprint;  // of the training inputs and targets (files_fingerprint); "" unknown

  // Kept in checkpoints (their summary's data encoding), so that test and predict need only the
  // test files, and validate and a resume can tell the training files changed.
  std::string encoding() const {
    nlohmann::json json{{"tensor_inputs_dtype", numpy_name(dtype)}};
    if (!fingerprint.empty()) json["tensor_files_fingerprint"] = fingerprint;
    return json.dump();
  }
};

// A cheap fingerprint of an array's bytes: its size and a CRC-32C of 64 blocks of 4 KiB spread
// over it (all of it when smaller), so a file rewritten in place (rows permuted, values changed) is
// told from the one a checkpoint was trained on without reading gigabytes.
std::string array_fingerprint(const at::Tensor& array) {
  const auto* bytes = static_cast<const uint8_t*>(array.data_ptr());
  const size_t size = array.numel() * array.element_size();
  constexpr size_t kBlock = 4096, kBlocks = 64;
  uint32_t crc = 0;
  if (size <= kBlock * kBlocks) {
    crc = formats::crc32c(bytes, size);
  } else {
    for (size_t i = 0; i < kBlocks; ++i) {
      const size_t at = (size - kBlock) / (kBlocks - 1) * i;
      crc = formats::crc32c_extend(crc, bytes + at, kBlock);
    }
  }
  return std::to_string(size) + ":" + std::to_string(crc);
}

// The test split of data.test_inputs / data.test_targets (empty when data.test_inputs is null),
// checked against what the model was trained on.
TensorDataset load_test_split(const DataOptions& options, const TrainedInputs& trained, int64_t num_classes) {
  TensorDataset test;
  if (options.test_inputs.empty()) return test;
  // data.input_key / data.target_key name the test tensors too when the test files are
  // safetensors; a .npy test file has one array and needs no name.
  const at::Tensor test_inputs =
      open_array(options.test_inputs, "test_inputs", options.input_key, "input_key", /*key_may_not_apply=*/true);
  if (options.test_targets.empty() && !options.targets_optional) {
    throw Error(options.test_inputs_where.empty() ? "data.test_inputs" : options.test_inputs_where,
                "the test split needs both data.test_inputs and data.test_targets; data.test_targets is null",
                "Give both files, or neither (no test split); only trainer predict reads data.test_inputs "
                "alone.");
  }
  // Predicting inputs whose classes are unknown: every target -1.
  const at::Tensor test_targets =
      options.test_targets.empty() ? at::full({test_inputs.size(0)}, -1, at::kLong)
                                   : open_array(options.test_targets, "test_targets", options.target_key, "target_key",
                                                /*key_may_not_apply=*/true);
  if (test_inputs.sizes().slice(1).vec() != trained.sample_shape) {
    throw Error("data.test_inputs",
                options.test_inputs + " holds samples of shape " + shape_text(test_inputs.sizes().slice(1)) +
                    ", but the training inputs' are " + shape_text(trained.sample_shape) +
                    (trained.source == kCheckpoints ? " (the checkpoint's)" : ""),
                "Give test inputs shaped as the training inputs.");
  }
  // uint8 is read as pixels (divided by 255), every other dtype as values: a model trained on
  // one would see the other on another scale.
  if ((test_inputs.scalar_type() == at::kByte) != (trained.dtype == at::kByte)) {
    throw Error("data.test_inputs",
                options.test_inputs + " holds " + numpy_name(test_inputs.scalar_type()) + " samples, but the " +
                    "training inputs (" + trained.source + ") are " + numpy_name(trained.dtype) +
                    ": uint8 is read as pixels and divided by 255, every other dtype as it is, so the model would "
                    "see these samples on another scale",
                "Save the test inputs with the training inputs' dtype (numpy: x.astype(train.dtype); from "
                "float pixels in 0..1 to uint8: (x * 255).round().astype('uint8')).");
  }
  const bool test_checked = check_finite_at_load(test_inputs, options.test_inputs, "data.test_inputs");
  if (!options.test_targets.empty()) {
    check_targets(test_targets, test_inputs.size(0), options.test_targets, "data.test_targets", num_classes);
  }
  test = TensorDataset(test_inputs, test_targets);
  if (!test_checked) test.check_finite_per_batch("data.test_inputs", options.test_inputs);
  test.set_num_classes(num_classes);
  return test;
}

// trainer test and predict from a checkpoint that says what its inputs were: the test files
// alone (the training files may have moved, or be relative to another directory).
std::optional<DataSplits> load_test_files_alone(const DataOptions& options) {
  if (options.evaluated_split != "test" || options.test_inputs.empty() || options.trained_sample_shape.empty() ||
      options.trained_num_classes <= 0 || options.encoding.empty()) {
    return std::nullopt;
  }
  const nlohmann::json encoding = nlohmann::json::parse(options.encoding, nullptr, /*allow_exceptions=*/false);
  if (!encoding.is_object() || !encoding.contains("tensor_inputs_dtype") ||
      !encoding["tensor_inputs_dtype"].is_string()) {
    return std::nullopt;
  }
  const std::string dtype = encoding["tensor_inputs_dtype"].get<std::string>();
  const TrainedInputs trained{options.trained_sample_shape, dtype == "uint8" ? at::kByte : at::kFloat, kCheckpoints,
                              ""};
  warn_if_test_is_training_data(kTestInputs, options.test_inputs, options.inputs, /*checkpoint=*/true);
  TensorDataset test = load_test_split(options, trained, options.trained_num_classes);
  test.set_encoding(options.encoding);
  log::info("data: " + options.test_inputs + " alone (the checkpoint says what the model was trained on; " +
            options.inputs + " is not read)");
  // The model is built from the test split's samples (the same shape and classes).
  auto tested = std::make_shared<const TensorDataset>(std::move(test));
  return DataSplits(tested, std::make_shared<const TensorDataset>(), tested);
}

}  // namespace

DataSplits load_tensor_files(const DataOptions& options) {
  if (std::optional<DataSplits> alone = load_test_files_alone(options)) return std::move(*alone);
  const at::Tensor inputs = open_array(options.inputs, "inputs", options.input_key, "input_key");
  const at::Tensor targets = open_array(options.targets, "targets", options.target_key, "target_key");
  if (inputs.dim() < 2) {
    throw Error("data.inputs",
                options.inputs + " holds one value per sample (shape " + shape_text(inputs.sizes()) +
                    "); the samples must be rows of at least one value",
                "Save it as a column: numpy.save(path, array.reshape(-1, 1)).");
  }
  if (inputs.size(0) == 0) {
    throw Error("data.inputs", options.inputs + " holds 0 samples (shape " + shape_text(inputs.sizes()) + ")",
                "Give a file with samples along its first dimension.");
  }
  for (int64_t d = 1; d < inputs.dim(); ++d) {
    if (inputs.size(d) == 0) {
      throw Error("data.inputs",
                  options.inputs + " holds samples of shape " + shape_text(inputs.sizes().slice(1)) + ", with no value",
                  "Save samples of at least one value each.");
    }
  }
  const bool inputs_checked = check_finite_at_load(inputs, options.inputs, "data.inputs");
  const int64_t largest = check_targets(targets, inputs.size(0), options.targets, "data.targets", options.num_classes);
  // Labels far beyond the samples (a stray id, a value not mapped to an index) would build a model
  // of that many outputs and run out of memory: a class count that large must be said.
  if (options.num_classes == 0 && largest >= 100000 && largest >= inputs.size(0)) {
    throw Error("data.targets",
                options.targets + ": the largest target is " + std::to_string(largest) +
                    ", so the model would get that many outputs plus one, for " + std::to_string(inputs.size(0)) +
                    " samples",
                "Map the labels to 0 .. classes - 1, or, if so many classes are meant, set data.num_classes.");
  }
  const int64_t found = largest + 1;
  if (options.num_classes == 0 && options.encoding.empty() && found <= 100000) {  // once: when fitting
    const at::Tensor counts = at::bincount(targets.to(at::kLong), {}, found);
    const auto* count = counts.data_ptr<int64_t>();
    std::vector<bool> seen(static_cast<size_t>(found));
    for (int64_t k = 0; k < found; ++k) seen[static_cast<size_t>(k)] = count[k] > 0;
    if (const auto warning = missing_classes_warning("data.targets", options.targets, seen)) log::warning(*warning);
  }
  const int64_t num_classes = options.num_classes > 0 ? options.num_classes : found;

  TensorDataset all(inputs, targets);
  if (!inputs_checked) all.check_finite_per_batch("data.inputs", options.inputs);
  all.set_num_classes(num_classes);
  auto [train_rows, val_rows] = split_indices(all.size(), options.val_fraction, options.seed);
  TensorDataset train = all.view(train_rows);
  TensorDataset val = all.view(val_rows);
  if (train.size() == 0) {
    throw Error("data.val_fraction",
                std::to_string(options.val_fraction) + " leaves 0 of the " + std::to_string(all.size()) +
                    " samples of " + options.inputs + " for training",
                "Lower data.val_fraction (0.1 holds out a tenth).");
  }

  if (!options.test_inputs.empty() && !options.test_targets.empty()) {
    warn_if_test_is_training_data(kTestInputs, options.test_inputs, options.inputs, /*checkpoint=*/false);
  }
  const std::string fingerprint = array_fingerprint(inputs) + " " + array_fingerprint(targets);
  // A checkpoint's fingerprint (validate, a resumed fit): files rewritten in place since are said.
  if (!options.encoding.empty()) {
    const nlohmann::json stored = nlohmann::json::parse(options.encoding, nullptr, /*allow_exceptions=*/false);
    if (stored.is_object() && stored.contains("tensor_files_fingerprint") &&
        stored["tensor_files_fingerprint"].is_string() && stored["tensor_files_fingerprint"] != fingerprint) {
      log::warning("data.inputs: " + options.inputs + " and " + options.targets +
                   " are not the arrays the checkpoint was trained on (their sizes or bytes differ): the validation "
                   "split is not the samples training held out, so val/* metrics are not comparable with the run's, "
                   "and a resumed fit trains on the changed samples");
    }
  }
  const TrainedInputs trained{inputs.sizes().slice(1).vec(), inputs.scalar_type(), options.inputs, fingerprint};
  TensorDataset test = load_test_split(options, trained, num_classes);
  const std::string encoding = trained.encoding();
  for (TensorDataset* split : {&train, &val, &test}) split->set_encoding(encoding);
  return {std::move(train), std::move(val), std::move(test)};
}

}  // namespace trainer::data
