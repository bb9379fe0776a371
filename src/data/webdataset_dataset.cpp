#include "trainer/data/webdataset_dataset.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "trainer/data/image_folder_dataset.h"
#include "trainer/data/sampler.h"
#include "trainer/data/tensor_files.h"
#include "trainer/formats/array_file.h"
#include "trainer/formats/shard_index.h"
#include "trainer/formats/tar_shard.h"
#include "trainer/image/decode_transformed.h"
#include "trainer/image/image.h"
#include "trainer/util/error.h"
#include "trainer/util/home_path.h"
#include "trainer/util/log.h"
#include "trainer/util/seeded_random.h"

namespace trainer::data {
namespace {

// configs/data/webdataset.yaml's data.normalize (ImageNet's pixel statistics).
const std::vector<double> kImageNetMean{0.485, 0.456, 0.406};
const std::vector<double> kImageNetStd{0.229, 0.224, 0.225};

bool is_image(const std::string& ext) {
  static const char* const kImages[] = {"jpg", "jpeg", "png", "webp", "ppm", "pgm", "pbm", "bmp", "tif", "tiff"};
  return std::any_of(std::begin(kImages), std::end(kImages), [&](const char* e) { return ext == e; });
}
bool is_tensor(const std::string& ext) { return ext == "npy" || ext == "safetensors"; }

// "1 x 28 x 28", for logs and messages.
std::string dims_text(const std::vector<int64_t>& dims) {
  std::string out;
  for (const int64_t d : dims) out += (out.empty() ? "" : " x ") + std::to_string(d);
  return out;
}

// The first element of `count` that is NaN or infinite in a floating tensor's bytes, or -1 (also
// for integer dtypes, which hold numbers only). Each is tested in its own type, widened to double
// (a float64 1e39 is finite, as data=tensors sees it; narrowed to float it would read as infinite).
int64_t first_non_finite(const uint8_t* data, c10::ScalarType dtype, int64_t count) {
  const auto scan = [&](auto type_tag) -> int64_t {
    using T = decltype(type_tag);
    for (int64_t i = 0; i < count; ++i) {
      T value;
      std::memcpy(&value, data + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
      if (!std::isfinite(static_cast<double>(value))) return i;
    }
    return -1;
  };
  switch (dtype) {
    case at::kFloat:
      return scan(float{});
    case at::kDouble:
      return scan(double{});
    case at::kHalf:
      return scan(at::Half{});
    case at::kBFloat16:
      return scan(at::BFloat16{});
    default:
      return -1;
  }
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The fields a pass reads: labels always, inputs when `inputs`.
auto wanted(const LabelSource& label, bool inputs) {
  return [&label, inputs](const std::string& ext) {
    if (label.json_key.empty() ? ext == "cls" : ext == "json") return true;
    return inputs && (is_image(ext) || is_tensor(ext));
  };
}

// A sample judged: its input field and label, or what is wrong with it.
struct Judged {
  const formats::SampleField* input = nullptr;
  int64_t label = -1;
  std::string where;    // shard: member (or key) of the problem
  std::string problem;  // empty: a good sample
};

Judged judge(const formats::ShardSample& sample, const std::string& shard, const LabelSource& source,
             bool labels_optional) {
  Judged j;
  for (const formats::SampleField& f : sample.fields) {
    const std::string ext = lower(f.extension);
    if (is_image(ext) || is_tensor(ext)) {
      j.input = &f;
      break;
    }
  }
  if (j.input == nullptr) {
    j.where = shard + ": sample " + sample.key;
    j.problem =
        "has no input member (an image: .jpg .jpeg .png .webp .ppm .pgm .bmp .tif .tiff; a tensor: .npy "
        ".safetensors)";
    // dir/sample.0000.png: the key ends at the file name's first dot (WebDataset's rule), so its
    // extension is "0000.png" and every such member falls into one sample.
    for (const formats::SampleField& f : sample.fields) {
      const size_t dot = f.extension.find_last_of('.');
      const std::string last = dot == std::string::npos ? "" : lower(f.extension.substr(dot + 1));
      if (is_image(last) || is_tensor(last)) {
        j.problem += ": its member " + f.member +
                     " has more than one dot in its file name, and a sample's key ends "
                     "at the first (WebDataset's rule), so its extension reads as '" +
                     f.extension + "' (" + std::to_string(sample.fields.size()) +
                     " member(s) made this one sample). Rename the members "
                     "so that the only dot is the extension's, e.g. " +
                     sample.key + "_" + f.extension.substr(0, dot) + "." + f.extension.substr(dot + 1) + ".";
        break;
      }
    }
    return j;
  }
  const formats::SampleField* label = sample.field(source.json_key.empty() ? "cls" : "json");
  if (label == nullptr) {
    if (labels_optional) return j;
    j.where = shard + ": sample " + sample.key;
    j.problem = source.json_key.empty() ? "has no .cls member (its label)"
                                        : "has no .json member (data.label_key=" + source.json_key + " reads it)";
    if (source.json_key.empty() && sample.field("json") != nullptr) {
      j.problem += "; it has a .json member: set data.label_key to the key of its label";
    }
    return j;
  }
  j.where = shard + ": member " + label->member;
  const auto* text = reinterpret_cast<const char*>(label->bytes.data());
  if (source.json_key.empty()) {
    const char* first = text;
    const char* last = text + label->bytes.size();
    while (first < last && std::isspace(static_cast<unsigned char>(*first)) != 0) ++first;
    while (last > first && std::isspace(static_cast<unsigned char>(last[-1])) != 0) --last;
    if (first < last && *first == '+') ++first;  // Python's int() reads "+3"
    const auto [end, error] = std::from_chars(first, last, j.label);
    if (error != std::errc() || end != last || j.label < 0) {
      std::string shown(first, static_cast<size_t>(std::min<ptrdiff_t>(last - first, 40)));
      for (char& c : shown) {
        if (std::isprint(static_cast<unsigned char>(c)) == 0) c = '?';
      }
      j.problem = error == std::errc::result_out_of_range
                      ? "holds '" + shown + "', too large for a class index"
                      : "holds '" + shown + "', not a class index (an integer >= 0)";
    }
    return j;
  }
  const nlohmann::json json = nlohmann::json::parse(text, text + label->bytes.size(), nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    j.problem = "is not a JSON object";
  } else if (!json.contains(source.json_key)) {
    j.problem = "has no key '" + source.json_key + "' (data.label_key)";
  } else if (!json[source.json_key].is_number_integer() || json[source.json_key].get<int64_t>() < 0) {
    j.problem =
        "holds " + json[source.json_key].dump() + " at '" + source.json_key + "', not a class index (an integer >= 0)";
  } else {
    j.label = json[source.json_key].get<int64_t>();
  }
  return j;
}

// What counting a split learnt besides its ShardList.
struct Counted {
  int64_t max_label = -1;
  std::string max_label_where;
  int64_t skipped = 0;
};

// Counts the readable samples of each shard of `paths`, reading only the labels, on a few threads.
// Throws the first shard's error (in list order) for a bad sample unless `skip`.
ShardList count_shards(const std::string& key, std::vector<std::string> paths, const LabelSource& source,
                       bool labels_optional, bool skip, Counted& counted) {
  ShardList list;
  list.key = key;
  list.paths = std::move(paths);
  const size_t n = list.paths.size();
  list.samples.assign(n, 0);
  list.bytes.assign(n, -1);
  list.digests.assign(n, -1);
  if (n == 0) return list;
  const auto started = std::chrono::steady_clock::now();
  std::vector<Counted> per(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::vector<std::string>> skipped_where(n);
  // Shards counted before and unchanged since: their counts from the index, no member read.
  formats::ShardIndex index(formats::shard_index_directory(),
                            std::string("labels from ") +
                                (source.json_key.empty() ? ".cls" : ".json:" + source.json_key) +
                                (labels_optional ? ", optional" : ""),
                            list.paths);
  std::vector<char> indexed(n, 0);
  size_t from_index = 0;
  for (size_t i = 0; i < n; ++i) {
    if (index.stamp(i)) list.bytes[i] = static_cast<int64_t>(index.stamp(i)->size);
    const std::optional<formats::ShardCount> known = index.find(i);
    if (!known || (known->skipped > 0 && !skip)) continue;  // without skip, a bad sample is read again: an error
    list.samples[i] = known->samples;
    list.digests[i] = known->digest;
    per[i].skipped = known->skipped;
    per[i].max_label = known->max_label;
    per[i].max_label_where = known->max_label_where;
    if (known->skipped > 0) {
      skipped_where[i].push_back(list.paths[i] + ": " + std::to_string(known->skipped) +
                                 " sample(s), found when it was first counted");
    }
    indexed[i] = 1;
    ++from_index;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    formats::ShardSample sample;
    for (size_t i = next++; i < n; i = next++) {
      if (indexed[i] != 0) continue;
      try {
        formats::TarShardReader reader(list.paths[i], key);
        while (reader.next(sample, wanted(source, false))) {
          const Judged j = judge(sample, list.paths[i], source, labels_optional);
          if (!j.problem.empty()) {
            if (!skip) {
              throw Error(j.where, j.problem,
                          "Fix the shard, or set data.on_bad_sample=skip to leave such samples out (counted). If "
                          "every sample lacks a member, the tar may hold its members out of name order (all the "
                          "images, then all the labels): write it with tar --sort=name.");
            }
            ++per[i].skipped;
            if (skipped_where[i].size() < 3) skipped_where[i].push_back(j.where + " " + j.problem);
            continue;
          }
          ++list.samples[i];
          if (j.label > per[i].max_label) {
            per[i].max_label = j.label;
            per[i].max_label_where = j.where;
          }
        }
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t threads =
      std::min<size_t>(n - from_index, std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  if (threads > 0) work();
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < n; ++i) {
    if (indexed[i] == 0 && !errors[i]) {
      // Without its digest a shard is not kept: a made-up one would refuse a valid resume later.
      const std::optional<uint32_t> digest = formats::shard_digest(list.paths[i]);
      if (!digest) continue;
      list.digests[i] = *digest;
      index.store(
          i, formats::ShardCount{list.samples[i], per[i].skipped, per[i].max_label, per[i].max_label_where, *digest});
    }
  }
  index.save();
  for (size_t i = 0; i < n; ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    list.total += list.samples[i];
    counted.skipped += per[i].skipped;
    if (per[i].max_label > counted.max_label) {
      counted.max_label = per[i].max_label;
      counted.max_label_where = per[i].max_label_where;
    }
    for (const std::string& where : skipped_where[i]) log::warning("data.on_bad_sample=skip: left out " + where);
  }
  if (counted.skipped > 0) {
    log::warning(key + ": " + std::to_string(counted.skipped) + " sample(s) left out as unreadable");
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.3f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  log::info(key + ": " + std::to_string(list.total) + " samples in " + std::to_string(n) + " shard(s), listed in " +
            seconds + " s" +
            (from_index == n  ? " from the shard index (" + index.file() + ")"
             : from_index > 0 ? " (" + std::to_string(from_index) + " shard(s) from the index, " +
                                    std::to_string(n - from_index) + " counted)"
                              : ""));
  return list;
}

// A resumed fit (`encoding`: the checkpoint's, see WebDataset::encoding) streams from where the
// checkpoint stopped, a position that is a function of the shards: on other shards it would go on
// from a place that is not the one it left. Each shard's samples and size are compared, in order.
void check_resumed_shards(const ShardList& train, const std::string& encoding) {
  if (encoding.empty()) return;
  const nlohmann::json stored = nlohmann::json::parse(encoding, nullptr, false);
  if (stored.is_discarded() || !stored.is_object() || !stored.contains("webdataset_shards")) return;
  const nlohmann::json& then = stored["webdataset_shards"];
  if (!then.is_array()) return;
  const std::string fix =
      "A fit resumes exactly only on the shards it was trained on: give those (the same files, in the same order), "
      "or start a new run instead of resuming (another hydra.run.dir, without ckpt_path).";
  if (then.size() != train.paths.size()) {
    throw Error("data.shards",
                "lists " + std::to_string(train.paths.size()) +
                    " shard(s), but the checkpoint being resumed was "
                    "trained on " +
                    std::to_string(then.size()),
                fix);
  }
  for (size_t i = 0; i < then.size(); ++i) {
    const nlohmann::json& shard = then[i];
    if (!shard.is_array() || shard.size() != 3 ||
        !std::all_of(shard.begin(), shard.end(), [](const nlohmann::json& v) { return v.is_number_integer(); })) {
      return;
    }
    const int64_t samples = shard[0].get<int64_t>();
    const int64_t bytes = shard[1].get<int64_t>();
    const int64_t digest = shard[2].get<int64_t>();
    const bool known = bytes >= 0 && train.bytes[i] >= 0;
    if (samples != train.samples[i] || (known && bytes != train.bytes[i])) {
      throw Error(train.paths[i],
                  "is not the shard the checkpoint being resumed was trained on: shard " + std::to_string(i) +
                      " of data.shards held " + std::to_string(samples) + " samples (" + std::to_string(bytes) +
                      " bytes) then, " + std::to_string(train.samples[i]) + " (" + std::to_string(train.bytes[i]) +
                      " bytes) now",
                  fix);
    }
    if (digest >= 0 && train.digests[i] >= 0 && digest != train.digests[i]) {
      throw Error(train.paths[i],
                  "is not the shard the checkpoint being resumed was trained on: shard " + std::to_string(i) +
                      " of data.shards has as many samples and bytes as then (" + std::to_string(samples) + ", " +
                      std::to_string(bytes) +
                      "), but other contents (the CRC-32C of its first and last "
                      "64 KiB differs)",
                  fix);
    }
  }
}

// A shard listed twice is read twice an epoch, and a validation or test shard that is also a
// training shard scores samples the model trains on: allowed (oversampling, a quick check), but
// said, once per shard.
void warn_repeated_shards(const ShardList& train, const ShardList& val, const ShardList& test) {
  const auto canonical = [](const std::string& path) {
    std::error_code error;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, error);
    return error ? path : resolved.string();
  };
  std::set<std::string> training;
  for (const ShardList* list : {&train, &val, &test}) {
    std::set<std::string> seen, told;
    for (const std::string& path : list->paths) {
      const std::string file = canonical(path);
      if (!seen.insert(file).second && told.insert(file).second) {
        log::warning(list->key + ": lists " + path + " more than once: its samples are read as many times an epoch");
      }
    }
    if (list == &train) {
      training = seen;
    } else {
      for (const std::string& file : seen) {
        if (training.count(file) > 0) {
          log::warning(list->key + ": " + file +
                       " is also a training shard (data.shards): its samples are scored "
                       "after the model trained on them");
        }
      }
    }
  }
}

// The shard files of `specs` (each brace-expanded, ~ expanded).
std::vector<std::string> expand_specs(const std::vector<std::string>& specs, const std::string& key) {
  std::vector<std::string> paths;
  for (const std::string& spec : specs) {
    for (std::string& path : formats::expand_braces(spec, key)) paths.push_back(expand_home(path));
  }
  return paths;
}

}  // namespace

struct WebDataset::Scratch {
  image::Image image;
  image::TransformScratch transform;
};

struct WebDataset::Encoded {
  std::vector<uint8_t> bytes;
  std::string extension;  // lower-case
  int64_t label = -1;
  std::string name;  // shard:key
};

struct WebDataset::Stream {
  int64_t epoch = -1;
  std::vector<size_t> order;    // shard numbers in this epoch's order
  std::vector<int64_t> starts;  // the first position of each in the epoch's order of every sample
  int64_t read = 0;             // samples of the share read from the shards so far
  std::unique_ptr<formats::TarShardReader> reader;
  size_t reader_slot = 0;   // its place in `order`
  int64_t reader_next = 0;  // the good samples it has passed
  formats::ShardSample sample;
  std::vector<Encoded> buffer;  // the shuffle buffer
  SeededRandom random{0};
  int64_t next_out = 0;                // the next position the stream gives
  std::map<int64_t, Encoded> pending;  // given out of turn, for a batch another thread makes
};

// Samples left out as undecodable, counted over a split's rank shares, each logged once.
struct WebDataset::Skipped {
  std::atomic<int64_t> count{0};
  std::mutex mutex;
  std::set<std::string> reported;
};

WebDataset::WebDataset(std::shared_ptr<const ShardList> shards, WebDatasetOptions options, int rank, int world_size)
    : WebDataset(std::move(shards), std::move(options), rank, world_size, std::make_shared<Skipped>()) {}

WebDataset::WebDataset(std::shared_ptr<const ShardList> shards, WebDatasetOptions options, int rank, int world_size,
                       std::shared_ptr<Skipped> skipped)
    : shards_(std::move(shards)),
      options_(std::move(options)),
      rank_(rank),
      world_size_(world_size),
      stream_(std::make_unique<Stream>()),
      skipped_(std::move(skipped)) {
  const int64_t n = shards_->total;
  const int64_t w = world_size_;
  if (options_.training) {
    // As DistributedSampler: ceil(n / w) each, the last share wrapping round to the first samples.
    share_size_ = n == 0 ? 0 : (n + w - 1) / w;
    share_start_ = share_size_ * rank_;
  } else {
    share_start_ = n * rank_ / w;
    share_size_ = n * (rank_ + 1) / w - share_start_;
  }
}

WebDataset::~WebDataset() = default;

int64_t WebDataset::skipped_samples() const { return skipped_->count.load(); }

std::string WebDataset::encoding() const {
  if (options_.split != "train") return {};
  nlohmann::json shards = nlohmann::json::array();
  for (size_t i = 0; i < shards_->paths.size(); ++i) {
    shards.push_back({shards_->samples[i], shards_->bytes[i], shards_->digests[i]});
  }
  return nlohmann::json{{"webdataset_shards", shards}}.dump();
}

std::shared_ptr<const Dataset> WebDataset::rank_share(int rank, int world_size, bool training) const {
  WebDatasetOptions o = options_;
  o.training = training && options_.training;
  return std::shared_ptr<const WebDataset>(new WebDataset(shards_, std::move(o), rank, world_size, skipped_));
}

void WebDataset::begin_epoch(int64_t epoch, int64_t first_position) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  restart(epoch, first_position);
}

void WebDataset::restart(int64_t epoch, int64_t first_position) const {
  Stream& s = *stream_;
  s = Stream{};
  s.epoch = epoch;
  const size_t count = shards_->paths.size();
  s.order.resize(count);
  if (options_.training && count > 1) {
    const at::Tensor order = random_permutation(static_cast<int64_t>(count), mix_seed(options_.seed, epoch));
    const int64_t* p = order.data_ptr<int64_t>();
    for (size_t i = 0; i < count; ++i) s.order[i] = static_cast<size_t>(p[i]);
  } else {
    for (size_t i = 0; i < count; ++i) s.order[i] = i;
  }
  int64_t start = 0;
  for (const size_t shard : s.order) {
    s.starts.push_back(start);
    start += shards_->samples[shard];
  }
  s.random = SeededRandom(mix_seed(options_.seed, static_cast<uint64_t>(epoch), 0x5EEDB0FFull + rank_));
  // A resumed epoch: read up to where it stopped, without decoding.
  Encoded dropped;
  while (s.next_out < first_position) {
    produce(dropped);
    ++s.next_out;
  }
}

void WebDataset::read_next(Encoded& out) const {
  Stream& s = *stream_;
  const ShardList& list = *shards_;
  const int64_t q = (share_start_ + s.read) % list.total;
  ++s.read;
  const auto slot = static_cast<size_t>(std::upper_bound(s.starts.begin(), s.starts.end(), q) - s.starts.begin() - 1);
  const int64_t offset = q - s.starts[slot];
  const std::string& path = list.paths[s.order[slot]];
  if (!s.reader || s.reader_slot != slot || s.reader_next > offset) {
    s.reader = std::make_unique<formats::TarShardReader>(path, list.key);
    s.reader_slot = slot;
    s.reader_next = 0;
  }
  for (;;) {
    const bool inputs = s.reader_next == offset;
    if (!s.reader->next(s.sample, wanted(options_.label, inputs))) {
      throw Error(path,
                  "holds fewer samples than when the run started (" + std::to_string(s.reader_next) + " of " +
                      std::to_string(list.samples[s.order[slot]]) + ")",
                  "Do not change shards while a run reads them; start the run again.");
    }
    const Judged j = judge(s.sample, path, options_.label, options_.labels_optional);
    if (!j.problem.empty()) continue;  // left out when counted (data.on_bad_sample=skip)
    if (j.label >= options_.num_classes) {
      throw Error(j.where,
                  "holds label " + std::to_string(j.label) + ", but the run has " +
                      std::to_string(options_.num_classes) + " classes: the shard changed since the run started",
                  "Do not change shards while a run reads them; start the run again.");
    }
    ++s.reader_next;
    if (!inputs) continue;
    out.bytes.swap(const_cast<formats::SampleField*>(j.input)->bytes);
    out.extension = lower(j.input->extension);
    out.label = j.label;
    out.name = path + ":" + s.sample.key;
    return;
  }
}

void WebDataset::produce(Encoded& out) const {
  Stream& s = *stream_;
  if (!options_.training || options_.shuffle_buffer <= 1) {
    read_next(out);
    return;
  }
  while (static_cast<int64_t>(s.buffer.size()) < options_.shuffle_buffer && s.read < share_size_) {
    s.buffer.emplace_back();
    read_next(s.buffer.back());
  }
  const auto j = static_cast<size_t>(s.random.below(s.buffer.size()));
  out = std::move(s.buffer[j]);
  if (j + 1 != s.buffer.size()) s.buffer[j] = std::move(s.buffer.back());
  s.buffer.pop_back();
}

void WebDataset::take(int64_t position, int64_t epoch, Encoded& out) const {
  Stream& s = *stream_;
  if (epoch != s.epoch) restart(epoch, position);
  if (position < s.next_out) {
    const auto found = s.pending.find(position);
    if (found != s.pending.end()) {
      out = std::move(found->second);
      s.pending.erase(found);
      return;
    }
    restart(epoch, position);  // asked again: a new pass over the epoch
  }
  while (s.next_out < position) produce(s.pending[s.next_out++]);
  produce(out);
  ++s.next_out;
}

Batch WebDataset::get_batch(const at::Tensor& positions, int64_t epoch) const {
  const at::Tensor order = positions.to(at::kLong).contiguous();
  const int64_t n = order.numel();
  const int64_t* index = order.data_ptr<int64_t>();
  std::vector<Encoded> encoded(static_cast<size_t>(n));
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t i = 0; i < n; ++i) {
      if (index[i] < 0 || index[i] >= share_size_) {
        throw Error("WebDataset", "position " + std::to_string(index[i]) + " is outside the " +
                                      std::to_string(share_size_) + " samples of the " + options_.split + " stream");
      }
      take(index[i], epoch, encoded[static_cast<size_t>(i)]);
    }
  }
  std::vector<int64_t> shape = options_.sample_shape;
  shape.insert(shape.begin(), n);
  Batch batch;
  batch.inputs = at::empty(shape, at::TensorOptions().dtype(options_.dtype));
  batch.targets = at::empty({n}, at::TensorOptions().dtype(at::kLong));
  thread_local Scratch scratch;
  std::vector<int64_t> kept_positions;
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    Encoded& e = encoded[static_cast<size_t>(i)];
    if (!decode_into(e, epoch, index[i], batch, kept, scratch)) {
      skipped_->count.fetch_add(1);
      bool first = false;
      {
        const std::lock_guard<std::mutex> lock(skipped_->mutex);
        first = skipped_->reported.insert(e.name).second;
      }
      if (first) {
        log::warning(
            "data.on_bad_sample=skip: left out " + e.name + " (its ." + e.extension +
            (options_.tensors ? " could not be read, or holds a NaN or an infinity" : " could not be decoded") +
            "); logged once, counted per epoch");
      }
      continue;
    }
    batch.targets.data_ptr<int64_t>()[kept] = e.label;
    if (!options_.training) batch.names.push_back(std::move(e.name));
    kept_positions.push_back(index[i]);
    ++kept;
  }
  if (kept == n) return batch;
  if (kept == 0) {
    throw Error("data.on_bad_sample",
                "every sample of a batch of " + std::to_string(n) + " from the " + options_.split +
                    " shards is unreadable (data.on_bad_sample=skip left none)",
                "Check the shards (the warnings above name the members), or use a larger data.batch_size.");
  }
  batch.inputs = batch.inputs.narrow(0, 0, kept);
  batch.targets = batch.targets.narrow(0, 0, kept);
  batch.indices = at::tensor(kept_positions, at::kLong);
  return batch;
}

bool WebDataset::decode_into(Encoded& e, int64_t epoch, int64_t position, Batch& batch, int64_t row,
                             Scratch& scratch) const {
  // Only an undecodable sample may be skipped (data.on_bad_sample=skip); one of another kind,
  // shape or size than the batch is a mistake in the data or the config, and stops the run.
  auto decoded = [&](auto&& decode) {
    try {
      decode();
      return true;
    } catch (const Error&) {
      if (!options_.skip_bad_samples) throw;
      return false;
    }
  };
  const int64_t row_bytes = batch.inputs.numel() / std::max<int64_t>(1, batch.inputs.size(0)) *
                            static_cast<int64_t>(batch.inputs.element_size());
  auto* out = static_cast<uint8_t*>(batch.inputs.data_ptr()) + row * row_bytes;
  if (options_.tensors) {
    if (!is_tensor(e.extension)) {
      throw Error(e.name, "is an image (." + e.extension + "), but the first training sample is a tensor",
                  "Keep one kind of input per dataset.");
    }
    formats::ArrayView array;
    const bool ok = decoded([&] {
      if (e.extension == "npy") {
        array = formats::read_npy(e.bytes.data(), e.bytes.size(), e.name, options_.split + " shards");
      } else {
        const std::vector<formats::ArrayView> arrays =
            formats::read_safetensors(e.bytes.data(), e.bytes.size(), e.name, options_.split + " shards");
        if (arrays.size() != 1) {
          throw Error(e.name, "holds " + std::to_string(arrays.size()) + " tensors; a sample's input is one",
                      "Save each sample's input as a .safetensors of one tensor (or as .npy), and other tensors "
                      "as members of their own.");
        }
        array = arrays.front();
      }
    });
    if (!ok) return false;
    if (array.shape != options_.sample_shape || array_scalar_type(array.dtype) != options_.dtype) {
      const auto text = [](const std::vector<int64_t>& dims) {
        return dims.empty() ? std::string("a 0-d tensor (a scalar)") : "shape " + dims_text(dims);
      };
      throw Error(e.name,
                  "is " + std::string(c10::toString(array_scalar_type(array.dtype))) + ", " + text(array.shape) +
                      ", but the first training sample is " + std::string(c10::toString(options_.dtype)) + ", " +
                      text(options_.sample_shape),
                  "Every sample's tensor must have one shape and dtype.");
    }
    std::memcpy(out, e.bytes.data() + array.offset, array.bytes);
    // As data=tensors and data=csv refuse them: a NaN or infinity makes every loss it meets NaN.
    const auto elements = static_cast<int64_t>(array.bytes / c10::elementSize(options_.dtype));
    const int64_t bad = first_non_finite(out, options_.dtype, elements);
    if (bad >= 0) {
      if (options_.skip_bad_samples) return false;
      throw Error(
          e.name,
          "holds a NaN or an infinity (element " + std::to_string(bad) + " of its " + std::to_string(elements) + ")",
          "Replace or drop the non-finite values before writing the shard (numpy: x[~numpy.isfinite(x)] = "
          "0), or set data.on_bad_sample=skip to leave such samples out (counted).");
    }
    return true;
  }
  if (!is_image(e.extension)) {
    throw Error(e.name, "is a tensor (." + e.extension + "), but the first training sample is an image",
                "Keep one kind of input per dataset.");
  }
  image::Image& img = scratch.image;
  SeededRandom random(mix_seed(mix_seed(options_.seed, static_cast<uint64_t>(rank_)), static_cast<uint64_t>(epoch),
                               static_cast<uint64_t>(position)));
  try {  // an unreadable image may be skipped; the transforms' errors (a crop too large) may not
    image::decode_transformed(e.bytes.data(), e.bytes.size(), options_.decode, options_.transforms, random,
                              scratch.transform, img, e.name);
  } catch (const image::BadImage&) {
    if (!options_.skip_bad_samples) throw;
    return false;
  }
  const int64_t h = options_.sample_shape[1], w = options_.sample_shape[2];
  if (img.height != h || img.width != w) {
    throw Error(e.name,
                "is " + std::to_string(img.height) + "x" + std::to_string(img.width) + " after the transforms (" +
                    options_.transforms.describe() + "), but the batch holds " + std::to_string(h) + "x" +
                    std::to_string(w) + " images",
                "Set data.image_size (e.g. data.image_size=" + std::to_string(std::max(h, w)) +
                    ") so that every image is resized and cropped to one size.");
  }
  image::copy_planar(img, out);
  return true;
}

DataSplits load_webdataset(const DataOptions& given) {
  // Evaluating a checkpoint (validate, test, predict): only the evaluated split is read, its
  // samples brought to the trained shape (a square one sets data.image_size when it is null).
  const bool evaluating = !given.evaluated_split.empty();
  DataOptions options = given;
  const std::vector<int64_t>& trained = given.trained_sample_shape;
  if (evaluating && options.image_size == 0 && trained.size() == 3 && trained[1] == trained[2] &&
      !options.eval_transforms) {
    options.image_size = static_cast<int>(trained[1]);
  }
  if (options.shards.empty() && !evaluating) {
    throw Error("data.shards", "no training shards given",
                "Set data.shards to the training shards: \"data.shards='/data/train-{000000..000127}.tar'\" (the "
                "braces quoted for Hydra, the quotes for the shell).");
  }
  LabelSource source{options.label_key};
  Counted train_counted, val_counted, test_counted;
  const auto specs = [&](const std::vector<std::string>& given_specs, const char* key, const char* split) {
    return evaluating && given.evaluated_split != split ? std::vector<std::string>{} : expand_specs(given_specs, key);
  };
  auto train = std::make_shared<ShardList>(count_shards("data.shards", specs(options.shards, "data.shards", "train"),
                                                        source, false, options.skip_bad_samples, train_counted));
  auto val =
      std::make_shared<ShardList>(count_shards("data.val_shards", specs(options.val_shards, "data.val_shards", "val"),
                                               source, false, options.skip_bad_samples, val_counted));
  auto test = std::make_shared<ShardList>(
      count_shards("data.test_shards", specs(options.test_shards, "data.test_shards", "test"), source,
                   options.targets_optional, options.skip_bad_samples, test_counted));
  if (train->total == 0 && !evaluating) {
    throw Error("data.shards", "the training shards hold no sample",
                "Check the shards: a sample is a tar's members sharing a key (0001.png + 0001.cls).");
  }
  if (!evaluating) check_resumed_shards(*train, options.encoding);
  warn_repeated_shards(*train, *val, *test);
  // The classes: data.num_classes, else the training labels' largest + 1; every label below it.
  // A stray huge label would size the model's output layer: refused unless data.num_classes says so.
  if (options.num_classes <= 0 && train_counted.max_label >= 100'000 && train_counted.max_label >= train->total) {
    throw Error(train_counted.max_label_where,
                "holds label " + std::to_string(train_counted.max_label) + ", which would make " +
                    std::to_string(train_counted.max_label + 1) + " classes for " + std::to_string(train->total) +
                    " training samples",
                "Fix the label, or set data.num_classes if there really are that many classes.");
  }
  const int64_t classes = evaluating                ? given.trained_num_classes
                          : options.num_classes > 0 ? options.num_classes
                                                    : train_counted.max_label + 1;
  for (const Counted* c : {&train_counted, &val_counted, &test_counted}) {
    if (c->max_label >= classes) {
      throw Error(c->max_label_where,
                  "holds label " + std::to_string(c->max_label) + ", but there are " + std::to_string(classes) +
                      " classes (" +
                      (evaluating                ? std::string("the checkpoint's model")
                       : options.num_classes > 0 ? std::string("data.num_classes")
                                                 : "the training shards' largest label + 1") +
                      ")",
                  evaluating                ? "Fix the label: the model was trained on these classes."
                  : options.num_classes > 0 ? "Raise data.num_classes, or fix the label."
                                            : "Set data.num_classes to the number of classes, or fix the label.");
    }
  }

  WebDatasetOptions base;
  base.seed = options.seed;
  base.shuffle_buffer = options.shuffle_buffer;
  base.label = source;
  base.channels = options.channels;
  base.skip_bad_samples = options.skip_bad_samples;
  // The inputs' kind and shape: the first training sample's (evaluating: the evaluated split's),
  // or the transforms' size.
  const ShardList& first_list = !evaluating ? *train : given.evaluated_split == "val" ? *val : *test;
  const bool first_labels_optional = evaluating && given.evaluated_split == "test" && options.targets_optional;
  if (first_list.total == 0) {  // evaluating an empty split: the evaluation says so
    base.sample_shape = trained;
    base.dtype = at::kByte;
  } else {
    formats::TarShardReader reader(
        first_list.paths[static_cast<size_t>(
            std::find_if(first_list.samples.begin(), first_list.samples.end(), [](int64_t c) { return c > 0; }) -
            first_list.samples.begin())],
        first_list.key);
    formats::ShardSample sample;
    Judged j;
    while (reader.next(sample, wanted(source, true))) {
      j = judge(sample, reader.path(), source, first_labels_optional);
      if (j.problem.empty()) break;
    }
    const std::string ext = lower(j.input->extension);
    const std::string name = reader.path() + ":" + sample.key;
    if (is_tensor(ext)) {
      base.tensors = true;
      formats::ArrayView array;
      if (ext == "npy") {
        array = formats::read_npy(j.input->bytes.data(), j.input->bytes.size(), name, "data.shards");
      } else {
        const std::vector<formats::ArrayView> arrays =
            formats::read_safetensors(j.input->bytes.data(), j.input->bytes.size(), name, "data.shards");
        if (arrays.size() != 1) {  // as a batch's read refuses it, but before training starts
          throw Error(name, "holds " + std::to_string(arrays.size()) + " tensors; a sample's input is one",
                      "Save each sample's input as a .safetensors of one tensor (or as .npy), and other tensors "
                      "as members of their own.");
        }
        array = arrays.front();
      }
      if (array.shape.empty() || array.bytes == 0) {
        throw Error(name, array.shape.empty() ? "is a 0-d tensor (a scalar)" : "is a tensor with no elements",
                    "A sample's input is a tensor with at least one dimension and one element: save it as "
                    "np.array([value]) or with its real shape.");
      }
      base.sample_shape = array.shape;
      base.dtype = array_scalar_type(array.dtype);
      // The image keys do nothing to tensors: set away from their defaults, that is said.
      std::vector<std::string> unused;
      // (`given`: as the config says, before evaluating took the trained size.)
      if (given.channels != 3) unused.push_back("data.channels=" + std::to_string(given.channels));
      if (given.image_size > 0) unused.push_back("data.image_size=" + std::to_string(given.image_size));
      if (given.augment_preset != "none") unused.push_back("data.augment=" + given.augment_preset);
      if (given.train_transforms) unused.emplace_back("data.transforms.train");
      if (given.eval_transforms) unused.emplace_back("data.transforms.eval");
      if (!unused.empty()) {
        std::string keys;
        for (const std::string& key : unused) keys += (keys.empty() ? "" : ", ") + key;
        log::warning(first_list.key + ": the samples are tensors (" + dims_text(array.shape) +
                     "), which reach the model as they are: " + keys +
                     (unused.size() == 1 ? " applies to images and does" : " apply to images and do") +
                     " nothing here (data.normalize, or a normalize step, does apply)");
      }
      // Float values of three channels pass the loader's channel check with the shipped data.normalize,
      // ImageNet's pixel statistics: right for images saved as [0, 1] arrays, wrong for other values.
      // Which it is cannot be told from the bytes, so it is said (one or four channels are an error).
      if (at::isFloatingType(base.dtype) && base.sample_shape.front() == 3 && given.mean == kImageNetMean &&
          given.std == kImageNetStd) {
        log::warning(first_list.key + ": the samples are float tensors of 3 channels (" + dims_text(array.shape) +
                     "), normalised with data.normalize's default, ImageNet's pixel statistics ((x - 0.485) / "
                     "0.229 for the first channel): right for images saved on the [0, 1] scale. For other values "
                     "to reach the model as they are, give data.normalize.mean=[0] data.normalize.std=[1] (or "
                     "your data's own per-channel statistics)");
      }
    } else {
      const std::optional<image::Size> train_size = pipeline_for(options, true).output_size();
      const std::optional<image::Size> eval_size = pipeline_for(options, false).output_size();
      if (train_size && eval_size &&
          (train_size->height != eval_size->height || train_size->width != eval_size->width)) {
        throw Error("data.transforms.eval", "brings evaluation images to another size than training images",
                    "End both lists with steps of the same size: the model takes one size.");
      }
      int height = 0, width = 0;
      if (train_size || eval_size) {
        height = (train_size ? train_size : eval_size)->height;
        width = (train_size ? train_size : eval_size)->width;
      } else {
        image::DecodeRequest request;
        request.channels = options.channels;
        image::Image first;
        image::decode_image(j.input->bytes.data(), j.input->bytes.size(), request, first, name);
        height = first.height;
        width = first.width;
      }
      base.sample_shape = {options.channels, height, width};
      base.dtype = at::kByte;
    }
    if (evaluating && base.sample_shape != trained) {
      throw Error(first_list.key,
                  "holds samples of " + dims_text(base.sample_shape) +
                      " (as given to the model), but the checkpoint was "
                      "trained on " +
                      dims_text(trained),
                  base.tensors ? "Give shards of the tensors the model was trained on."
                               : "Bring the images to the trained size: data.image_size (a square's side) or "
                                 "data.transforms.eval, and data.channels.");
    }
  }
  auto make = [&](std::shared_ptr<ShardList> list, const std::string& split, bool training) {
    WebDatasetOptions o = base;
    o.split = split;
    o.training = training;
    o.labels_optional = split == "test" && options.targets_optional;
    o.num_classes = classes;
    if (!o.tensors) {
      o.transforms = pipeline_for(options, training);
      o.decode.channels = options.channels;
      if (!o.transforms.empty() && o.transforms.steps().front().kind == image::TransformStep::Kind::kResize) {
        const image::TransformStep& resize = o.transforms.steps().front();
        o.decode.min_height = resize.height;
        o.decode.min_width = resize.width == 0 ? resize.height : resize.width;
      }
    }
    return std::make_shared<const WebDataset>(std::move(list), std::move(o));
  };
  const std::string shape = dims_text(base.sample_shape);
  const std::string samples = std::to_string(classes) + " classes; samples " +
                              (base.tensors ? std::string(c10::toString(base.dtype)) + " " : std::string()) + shape;
  if (evaluating) {
    log::info("webdataset: " + std::to_string(first_list.paths.size()) + " " + given.evaluated_split + " shard(s); " +
              samples + " (the checkpoint's; the training shards are not read)");
  } else {
    log::info("webdataset: " + std::to_string(train->paths.size()) + " train / " + std::to_string(val->paths.size()) +
              " val / " + std::to_string(test->paths.size()) + " test shard(s); " + samples + "; shuffle buffer " +
              std::to_string(options.shuffle_buffer));
  }
  if (evaluating && !base.tensors) {
    log::info("image transforms: " + pipeline_for(options, false).describe());
  } else if (!base.tensors) {
    log::info("image transforms: train " + pipeline_for(options, true).describe() + "; evaluation " +
              pipeline_for(options, false).describe());
  }
  auto train_set = make(train, "train", true);
  auto val_set = make(val, "val", false);
  auto test_set = make(test, "test", false);
  DataSplits splits(train_set, val_set, test_set);
  return splits;
}

}  // namespace trainer::data
