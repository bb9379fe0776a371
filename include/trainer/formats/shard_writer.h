// Writing WebDataset shards (what `trainer data pack` makes): numbered tar files, each sample's
// members named <key>.<extension> and written next to each other, a new shard begun before a
// sample that would take the current one past `maxcount` samples or `maxsize` bytes (as
// webdataset's ShardWriter, which starts a new shard at either limit). Written with libarchive
// as POSIX tar (pax where a member needs it), every member mode 0644 with mtime 0 (as Python's
// TarInfo), so the same samples always make the same bytes. Each shard is written under a
// temporary name and renamed when complete: a killed pack leaves no shard that looks whole.
// Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct archive;  // libarchive's writer (archive.h), kept out of this header

namespace trainer::formats {

// A shard file name pattern with one printf-style shard number: "train-%06d.tar" (%d, %Nd or
// %0Nd). `key` names the option for messages.
class ShardPattern {
 public:
  ShardPattern(std::string pattern, std::string key);
  // The name of shard `number`.
  std::string name(int64_t number) const;
  // The brace spec that lists shards 0 .. count-1 for data.shards: "train-{000000..000011}.tar"
  // ("train-000000.tar" for one).
  std::string brace_spec(int64_t count) const;
  const std::string& text() const { return pattern_; }

 private:
  std::string pattern_, key_;
  std::string head_, tail_;
  int width_ = 0;  // zero-padded to this many digits
};

struct SampleMember {
  std::string_view extension;  // "png", "npy", "cls"
  std::string_view bytes;
};

class ShardWriter {
 public:
  // Refuses (trainer::Error at the pattern's key) when shard 0 exists already or its folder
  // cannot be made; nothing is overwritten.
  ShardWriter(ShardPattern pattern, int64_t maxcount, int64_t maxsize);
  ~ShardWriter();  // an unfinished shard's temporary file is removed
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Appends a sample (its key holds no dot or slash). Throws trainer::Error naming the shard on a
  // write error (a full disk) or when the next shard's file exists already.
  void write(const std::string& key, const std::vector<SampleMember>& members);
  // Completes the last shard. The shards written, in order.
  std::vector<std::string> finish();

  int64_t samples() const { return samples_; }
  // For messages: "; the 3 shard(s) written before it (a .. c) are whole", or "" before the first.
  std::string completed_text() const;
  // The shard the last sample went into (0, 1, ...), and the samples each shard holds.
  size_t shard() const { return written_.size(); }
  const std::vector<int64_t>& shard_samples() const { return shard_samples_; }
  int64_t bytes() const { return total_bytes_; }  // as stored, tar headers and padding included

 private:
  void open_next();
  void close_current();
  [[noreturn]] void fail(const std::string& what) const;
  std::string archive_reason() const;

  ShardPattern pattern_;
  int64_t maxcount_ = 0, maxsize_ = 0;
  archive* archive_ = nullptr;
  std::string current_, temporary_;
  int64_t count_ = 0, size_ = 0;  // of the current shard
  int64_t samples_ = 0, total_bytes_ = 0;
  std::vector<std::string> written_;
  std::vector<int64_t> shard_samples_;
};

// A .npy file (format 1.0, C order, its header padded to 64 bytes as NumPy writes it) holding
// `data` as an array of NumPy dtype `descr` ("|u1", "<f4") and `shape`.
std::string npy_bytes(const std::string& descr, const std::vector<int64_t>& shape, std::string_view data);

}  // namespace trainer::formats
