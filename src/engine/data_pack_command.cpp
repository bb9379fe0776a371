#include "trainer/engine/data_pack_command.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
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
#include "trainer/formats/shard_index.h"
#include "trainer/formats/shard_writer.h"
#include "trainer/image/image_decoder.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/home_path.h"
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

// The file's bytes; nullopt with `why` set when it cannot be read.
std::optional<std::string> read_whole(const std::string& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = std::string("cannot be read: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    why = std::string("cannot be read: ") + std::strerror(errno);
    return std::nullopt;
  }
  return bytes;
}

std::string number_text(double value) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {  // the shortest text that reads back as the value
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

std::string list_text(const std::vector<double>& values) {
  std::string out = "[";
  for (double value : values) out += (out.size() > 1 ? "," : "") + number_text(value);
  return out + "]";
}

// Words Hydra's grammar reads as a bool, null or float in any case: a string spelt so is quoted.
bool is_keyword(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower == "null" || lower == "true" || lower == "false" || lower == "inf" || lower == "nan";
}

// A config value as an override's value in Hydra's grammar, on one line: 3, 0.5, name,
// 'a b', [1, 2], {size: 32, scale: [0.5, 1.0]}.
std::string flow_text(const config::Node& node) {
  switch (node.type()) {
    case config::NodeType::kNull:
      return "null";
    case config::NodeType::kBool:
      return node.as_bool() ? "true" : "false";
    case config::NodeType::kInt:
      return node.int_text();
    case config::NodeType::kFloat: {
      const std::string text = number_text(node.as_float());
      return text.find_first_of(".eEn") == std::string::npos ? text + ".0" : text;
    }
    case config::NodeType::kString: {
      const std::string& text = node.as_string();
      const bool bare = !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_') &&
                        std::all_of(text.begin(), text.end(),
                                    [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; }) &&
                        !is_keyword(text);
      if (bare) return text;
      // Hydra's quoted string: \' for a quote; backslashes doubled only where they precede a quote
      // or the end (elsewhere a backslash is itself).
      std::string quoted = "'";
      for (size_t at = 0; at < text.size();) {
        size_t run = 0;
        while (at + run < text.size() && text[at + run] == '\\') ++run;
        if (run > 0) {
          const bool escaped = at + run == text.size() || text[at + run] == '\'';
          quoted.append(escaped ? 2 * run : run, '\\');
          at += run;
          continue;
        }
        quoted += text[at] == '\'' ? std::string("\\'") : std::string(1, text[at]);
        ++at;
      }
      return quoted + "'";
    }
    case config::NodeType::kList: {
      std::string out = "[";
      for (const config::Node& item : node.items()) out += (out.size() > 1 ? ", " : "") + flow_text(item);
      return out + "]";
    }
    case config::NodeType::kMap: {
      std::string out = "{";
      for (const auto& entry : node.entries()) {
        out += (out.size() > 1 ? ", " : "") + entry.key + ": " + flow_text(entry.value);
      }
      return out + "}";
    }
    case config::NodeType::kMissing:
      return "???";
  }
  return "null";
}

// One word for a POSIX shell: as it is when nothing in it is special, else in double quotes when
// nothing in it is special there, else in single quotes.
std::string shell_word(const std::string& word) {
  const auto plain = [](unsigned char c) { return std::isalnum(c) || std::strchr("_-./=:,+@%", c) != nullptr; };
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return word;
  if (word.find_first_of("\"$`\\!") == std::string::npos) return "\"" + word + "\"";
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The overrides that make data=webdataset present these samples as the source data config did.
std::vector<std::string> matching_overrides(const config::ConfigView& data, const data::DataOptions& options,
                                            const data::Dataset& dataset, bool images, int64_t largest_label) {
  std::vector<std::string> out = {"data.batch_size=" + std::to_string(options.batch_size),
                                  // what the loader normalised the source's batches with (shipped or given)
                                  "data.normalize.mean=" + list_text(options.mean),
                                  "data.normalize.std=" + list_text(options.std)};
  if (images) {
    if (options.channels != 3) out.push_back("data.channels=" + std::to_string(options.channels));
    if (options.image_size > 0) out.push_back("data.image_size=" + std::to_string(options.image_size));
    if (options.augment_preset != "none") out.push_back("data.augment=" + options.augment_preset);
    if (options.skip_bad_samples) out.push_back("data.on_bad_sample=skip");
    for (const char* split : {"train", "eval"}) {
      const std::string key = std::string("transforms.") + split;
      if (data.has(key) && !data.node(key).is_null()) {
        out.push_back("data." + key + "=" + flow_text(data.node(key)));
      }
    }
  }
  int64_t classes =
      !dataset.class_names().empty() ? static_cast<int64_t>(dataset.class_names().size()) : dataset.num_classes();
  if (classes <= 0 && data.has("num_classes") && !data.node("num_classes").is_null()) classes = options.num_classes;
  if (classes <= 0 && (options.name == "fashion_mnist" || options.name == "synthetic")) classes = options.num_classes;
  classes = std::max(classes, largest_label + 1);
  if (classes > 0) out.push_back("data.num_classes=" + std::to_string(classes));
  return out;
}

// The output pattern as the shards' absolute path (printed, it works from any directory): ~ is
// the home directory, and what would break the printed command's quoting or brace pattern is
// refused before anything is read.
std::string output_pattern(const std::string& given) {
  if (given.size() > 1 && given[0] == '~' && given[1] != '/') {
    throw Error("pack.output", "'" + given + "': only ~/ (your home directory) is expanded, not ~user",
                "Give the folder's path: /home/<user>/... .");
  }
  formats::ShardPattern(given, "pack.output");  // its shard number, as the user wrote it
  for (const char c : given) {
    if (c == '{' || c == '}' || c == '\'' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      throw Error("pack.output",
                  "'" + given + "' holds " +
                      (static_cast<unsigned char>(c) < 0x20 ? std::string("a control character")
                                                            : "'" + std::string(1, c) + "'") +
                      ", which data.shards' brace patterns and quoting cannot carry",
                  "Give a path without braces, quotes, backslashes or control characters: shards/train-%06d.tar.");
    }
  }
  return fs::absolute(fs::path(expand_home(given))).lexically_normal().string();
}

void check_stop(const formats::ShardWriter& writer) {
  if (stop_signal_received() == 0) return;
  throw Error("trainer data pack",
              "stopped by a signal after " + std::to_string(writer.samples()) +
                  " samples, the shard being written removed" +
                  (writer.completed_text().empty() ? std::string("; no shard was complete") : writer.completed_text()),
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
  const std::string output = output_pattern(
      pack.get<std::optional<std::string>>("output").value_or(run_dir + "/shards/" + split + "-%06d.tar"));
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
                split == "val" ? "Set data.val_fraction above 0, or pack another split (--split train)."
                : split == "test" && data_options.name == "image_folder"
                    ? "Give data.root a train/ and a test/ folder of class folders (its test split), or pack another "
                      "split."
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
  int64_t largest_label = -1;
  int64_t written = 0;  // keys number the samples written, with no gap where one was left out
  std::vector<std::pair<int64_t, std::string>> shard_largest;  // each shard's largest label, its key
  const auto note_label = [&](int64_t label, const std::string& key) {
    largest_label = std::max(largest_label, label);
    if (shard_largest.size() <= writer.shard()) shard_largest.resize(writer.shard() + 1, {-1, ""});
    if (label > shard_largest[writer.shard()].first) shard_largest[writer.shard()] = {label, key};
  };
  if (folder != nullptr) {
    // An image's own bytes: nothing re-encoded, the shard no bigger than the folder. Each is
    // decoded once (at 1/8 scale where JPEG allows) so that a file data=webdataset could not
    // decode is found now, as data.on_bad_sample says: an error, or left out and counted.
    image::DecodeRequest check;
    check.channels = data_options.channels;
    check.min_height = check.min_width = 1;
    image::Image decoded;
    std::vector<std::string> skipped;
    for (int64_t position = 0; position < total; ++position) {
      check_stop(writer);
      const size_t index = static_cast<size_t>(order[static_cast<size_t>(position)]);
      const std::string& file = folder->files()[index];
      std::string why;
      std::optional<std::string> bytes = read_whole(file, why);
      if (bytes) {
        try {
          image::decode_image(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), check, decoded, file);
        } catch (const image::BadImage& bad) {
          why = bad.problem();
          bytes.reset();
        }
      }
      if (!bytes) {
        if (!data_options.skip_bad_samples) {
          throw Error(file,
                      why + (writer.completed_text().empty() ? std::string("; no shard was written")
                                                             : writer.completed_text() + " (remove them before packing "
                                                                                         "again)"),
                      "Remove or replace the file, or pack with data.on_bad_sample=skip to leave such files out (each "
                      "is logged).");
        }
        if (skipped.size() < 10) log::warning("pack: left out " + file + ": " + why);
        skipped.push_back(file);
        continue;
      }
      const int64_t label = folder->labels()[index];
      label_text = std::to_string(label);
      const std::string key = key_of(written++);
      writer.write(key, {{lower_extension(file), *bytes}, {"cls", label_text}});
      note_label(label, key);
    }
    if (!skipped.empty()) {
      log::warning("pack: " + std::to_string(skipped.size()) + " of " + std::to_string(total) +
                   " images could not be read or decoded and were left out (data.on_bad_sample=skip)");
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
        const std::string key = key_of(written++);
        writer.write(key, {{"npy", npy}, {"cls", label_text}});
        note_label(labels[row], key);
      }
    }
  }
  if (written == 0) {
    throw Error("pack.split", "every sample of the " + split + " split was left out: there is nothing to pack",
                "Check the data's files (the log names the first ones left out).");
  }
  const std::vector<std::string> shards = writer.finish();
  // What data=webdataset would count in them, kept in its shard index: the printed command's first
  // run starts without reading the shards through.
  formats::ShardIndex index(formats::shard_index_directory(), "labels from .cls", shards);
  for (size_t i = 0; i < shards.size() && i < writer.shard_samples().size() && i < shard_largest.size(); ++i) {
    const std::optional<uint32_t> digest = formats::shard_digest(shards[i]);
    if (!digest) continue;
    index.store(i, formats::ShardCount{writer.shard_samples()[i], 0, shard_largest[i].first,
                                       shards[i] + ": member " + shard_largest[i].second + ".cls", *digest});
  }
  index.save();
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
  // Each word quoted for the shell, the brace pattern also for Hydra (its braces are grammar):
  // paste it as it is. Training shards give a fit; a validation or test split, the command that
  // evaluates a checkpoint on them (CHECKPOINT: a .ckpt file, or last/best with hydra.run.dir).
  std::vector<std::string> words = {"trainer"};
  if (split == "train") {
    words.insert(words.end(), {"fit", "data=webdataset"});
  } else {
    words.insert(words.end(), {split == "val" ? "validate" : "test", "ckpt_path=CHECKPOINT", "data=webdataset"});
  }
  words.push_back(key + "='" + spec + "'");
  for (const std::string& word :
       matching_overrides(data_view, data_options, *dataset, folder != nullptr, largest_label)) {
    words.push_back(word);
  }
  std::string command;
  for (const std::string& word : words) command += (command.empty() ? "" : " ") + shell_word(word);
  const bool crops = folder == nullptr && (data_options.random_crop_padding > 0 || data_options.horizontal_flip);
  if (crops && split == "train") {
    log::warning(
        "pack: data.augment's random crop and flip are not carried to the command: data=webdataset does not "
        "transform .npy samples, so the shards train without them");
  }
  log::info("pack: " + summary);
  log::info(std::string("pack: ") +
            (split == "train" ? "train on them with: " : "evaluate a checkpoint on them with: ") + command);
  if (split != "train") {
    log::info("pack: to validate or test on them during a fit, add " + shell_word(key + "='" + spec + "'") +
              " to the fit command of the training shards");
  }
  std::cout << summary << "\n" << command << std::endl;
}

}  // namespace trainer::engine
