#include "trainer/engine/data_pack_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <numeric>
#include <optional>
#include <random>

#include <ATen/ATen.h>

#include "trainer/config/config_view.h"
#include "trainer/data/datasets.h"
#include "trainer/data/image_folder_dataset.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/formats/shard_writer.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRowsPerRead = 256;  // samples asked of a dataset at once

// NumPy's dtype of a tensor's elements, as .npy files spell it (little-endian machines).
std::string npy_descr(at::ScalarType type) {
  switch (type) {
    case at::kByte:
      return "|u1";
    case at::kChar:
      return "|i1";
    case at::kShort:
      return "<i2";
    case at::kInt:
      return "<i4";
    case at::kLong:
      return "<i8";
    case at::kHalf:
      return "<f2";
    case at::kFloat:
      return "<f4";
    case at::kDouble:
      return "<f8";
    case at::kBool:
      return "|b1";
    default:
      return "";
  }
}

std::string lower_extension(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  if (!extension.empty()) extension.erase(0, 1);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(path, "cannot be read (it was listed when the folder was scanned)",
                "Check that the image folder is not being changed while it is packed.");
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

// A normalize value of the source data as an override's value: [0.286] or [0.485,0.456,0.406].
std::string values_text(const config::ConfigView& data, const std::string& key) {
  const config::Node& node = data.node(key);
  if (!node.is_list()) return "[" + number_text(data.get<double>(key)) + "]";  // webdataset's takes a list
  std::string out = "[";
  for (double value : data.get<std::vector<double>>(key)) out += (out.size() > 1 ? "," : "") + number_text(value);
  return out + "]";
}

// The overrides that make data=webdataset present these samples as the source data config did.
std::string matching_overrides(const config::ConfigView& data, const data::Dataset& dataset, bool images) {
  std::string out = " data.batch_size=" + std::to_string(data.get<int64_t>("batch_size"));
  if (data.has("normalize.mean") && data.has("normalize.std")) {
    out += " data.normalize.mean=" + values_text(data, "normalize.mean") +
           " data.normalize.std=" + values_text(data, "normalize.std");
  } else {
    out += " data.normalize.mean=[0] data.normalize.std=[1]";  // the source's inputs reach the model as they are
  }
  if (images) {
    const int64_t channels = data.get_or<int64_t>("channels", 3);
    if (channels != 3) out += " data.channels=" + std::to_string(channels);
    if (const std::optional<int64_t> side = data.get_or<std::optional<int64_t>>("image_size", std::nullopt)) {
      out += " data.image_size=" + std::to_string(*side);
    }
    const std::string augment = data.get_or<std::string>("augment", "none");
    if (augment != "none") out += " data.augment=" + augment;
  }
  const int64_t classes =
      !dataset.class_names().empty() ? static_cast<int64_t>(dataset.class_names().size()) : dataset.num_classes();
  if (classes > 0) out += " data.num_classes=" + std::to_string(classes);
  return out;
}

void check_stop(const formats::ShardWriter& writer) {
  if (stop_signal_received() == 0) return;
  throw Error("trainer data pack",
              "stopped by a signal after " + std::to_string(writer.samples()) +
                  " samples; the shards completed so far are whole, the one being written was removed",
              "Remove them and pack again: a pack is not resumed.");
}

}  // namespace

void pack_shards(const config::Node& job_config, const std::string& run_dir) {
  const config::ConfigView view(job_config);
  const options::OptionReader top(view);
  // No flag given: no pack section, and every key its declared default.
  static const config::Node no_keys = config::Node::map();
  const bool given = view.has("pack") && !view.node("pack").is_null();
  const options::OptionReader pack =
      given ? options::OptionReader(view.sub("pack")) : options::OptionReader(config::ConfigView(no_keys), {}, "pack");
  const std::string split = pack.choice("split");
  const std::string output =
      pack.get<std::optional<std::string>>("output").value_or(run_dir + "/shards/" + split + "-%06d.tar");
  const int64_t maxcount = pack.get<int64_t>("maxcount");
  const int64_t maxsize = pack.get<int64_t>("maxsize");
  const bool shuffle = pack.get<bool>("shuffle");
  const uint64_t seed = static_cast<uint64_t>(top.get<int64_t>("seed"));
  formats::ShardPattern pattern(output, "pack.output");  // a bad pattern is refused before the data is read

  const config::ConfigView data_view = view.sub("data");
  const data::DataOptions data_options = data::DataOptions::from_config(data_view, seed);
  if (data_options.name == "webdataset") {
    throw Error("data", "data=webdataset is tar shards already: trainer data pack writes shards from other data",
                "Give the data to convert: data=image_folder data.root=..., data=csv, data=tensors or "
                "data=fashion_mnist.");
  }
  const data::DataSplits splits = data::load_datasets(data_options);
  const std::shared_ptr<const data::Dataset>& dataset = split == "train" ? splits.train
                                                        : split == "val" ? splits.val
                                                                         : splits.test;
  if (dataset->regression()) {
    throw Error("data.task", "a regression's targets are numbers, and data=webdataset reads class labels only",
                "Pack a classification, or train the table as it is with data=csv.");
  }
  const int64_t total = dataset->size();
  if (total == 0) {
    throw Error("pack.split",
                "the " + split + " split of data=" + data_options.name + " is empty: there is nothing to pack",
                split == "val"    ? "Set data.val_fraction above 0, or pack another split (--split train)."
                : split == "test" ? "Give the data's test files (data.test_path, data.test_inputs, ...), or pack "
                                    "another split."
                                  : "Check the data's files.");
  }

  std::vector<int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (shuffle) {
    std::mt19937_64 generator(seed);
    for (size_t i = order.size(); i > 1; --i) {  // Fisher-Yates: the same order on every platform
      std::uniform_int_distribution<size_t> pick(0, i - 1);
      std::swap(order[i - 1], order[pick(generator)]);
    }
  }
  const size_t key_width = std::max<size_t>(6, std::to_string(total - 1).size());
  auto key_of = [&](int64_t position) {
    std::string key = std::to_string(position);
    key.insert(0, key_width - key.size(), '0');
    return key;
  };

  const auto* folder = dynamic_cast<const data::ImageFolderDataset*>(dataset.get());
  log::info("pack: the " + split + " split of data=" + data_options.name + ", " + std::to_string(total) + " samples" +
            (shuffle ? " in an order drawn from seed=" + std::to_string(seed) : " in the data's order") + ", into " +
            pattern.text() + " (at most " + std::to_string(maxcount) + " samples and " + std::to_string(maxsize) +
            " bytes per shard)");
  formats::ShardWriter writer(pattern, maxcount, maxsize);
  std::string label_text;
  if (folder != nullptr) {
    // An image's own bytes: nothing decoded or re-encoded, the shard no bigger than the folder.
    for (int64_t position = 0; position < total; ++position) {
      check_stop(writer);
      const size_t index = static_cast<size_t>(order[static_cast<size_t>(position)]);
      const std::string& file = folder->files()[index];
      const std::string bytes = read_whole(file);
      label_text = std::to_string(folder->labels()[index]);
      const std::string extension = lower_extension(file);
      writer.write(key_of(position), {{extension, bytes}, {"cls", label_text}});
    }
  } else {
    bool told_bfloat16 = false;
    for (int64_t start = 0; start < total; start += kRowsPerRead) {
      check_stop(writer);
      const int64_t count = std::min(kRowsPerRead, total - start);
      const at::Tensor indices =
          at::from_blob(order.data() + start, {count}, at::TensorOptions().dtype(at::kLong)).clone();
      const data::Batch batch = dataset->get_batch(indices, /*epoch=*/0);
      if (batch.inputs.size(0) != count) {
        throw Error("data=" + data_options.name, "the dataset left out samples it was asked for",
                    "Pack data whose every sample reads.");
      }
      at::Tensor inputs = batch.inputs.to(at::kCPU);
      if (inputs.scalar_type() == at::kBFloat16) {
        inputs = inputs.to(at::kFloat);
        if (!told_bfloat16) log::info("pack: bfloat16 inputs are written as float32 (NumPy has no bfloat16)");
        told_bfloat16 = true;
      }
      inputs = inputs.contiguous();
      const std::string descr = npy_descr(inputs.scalar_type());
      if (descr.empty()) {
        throw Error("data=" + data_options.name,
                    std::string("its inputs are ") + c10::toString(inputs.scalar_type()) + ", which .npy cannot hold",
                    "Pack data of integer or floating point inputs.");
      }
      const at::Tensor targets = batch.targets.to(at::kCPU).to(at::kLong).contiguous();
      const std::vector<int64_t> shape(inputs.sizes().begin() + 1, inputs.sizes().end());
      const size_t row_bytes =
          static_cast<size_t>(inputs.numel() / std::max<int64_t>(1, count)) * inputs.element_size();
      const char* base = static_cast<const char*>(inputs.data_ptr());
      const int64_t* labels = targets.data_ptr<int64_t>();
      for (int64_t row = 0; row < count; ++row) {
        const std::string npy = formats::npy_bytes(descr, shape, std::string_view(base + row * row_bytes, row_bytes));
        label_text = std::to_string(labels[row]);
        writer.write(key_of(start + row), {{"npy", npy}, {"cls", label_text}});
      }
    }
  }
  const std::vector<std::string> shards = writer.finish();
  const std::string spec = pattern.brace_spec(static_cast<int64_t>(shards.size()));
  const std::string key = split == "train" ? "data.shards" : split == "val" ? "data.val_shards" : "data.test_shards";
  char megabytes[32];
  std::snprintf(megabytes, sizeof(megabytes), "%.1f", static_cast<double>(writer.bytes()) / 1e6);
  const std::vector<std::string> classes = dataset->class_names();
  if (!classes.empty()) {
    std::string listed;
    for (size_t i = 0; i < classes.size() && i < 20; ++i)
      listed += (i ? ", " : "") + std::to_string(i) + "=" + classes[i];
    if (classes.size() > 20) listed += ", ...";
    log::info("pack: labels (.cls) are class indices: " + listed);
  }
  const std::string summary = "packed " + std::to_string(writer.samples()) + " samples (" + split +
                              " split of data=" + data_options.name + ") into " + std::to_string(shards.size()) +
                              " shard(s), " + megabytes + " MB: " + spec;
  // Quoted for the shell and, inside, for Hydra (its braces are grammar): paste it as it is.
  const std::string command = "trainer fit data=webdataset \"" + key + "='" + spec + "'\"" +
                              matching_overrides(data_view, *dataset, folder != nullptr);
  log::info("pack: " + summary);
  log::info("pack: train on them with: " + command);
  std::cout << summary << "\n" << command << std::endl;
}

}  // namespace trainer::engine
