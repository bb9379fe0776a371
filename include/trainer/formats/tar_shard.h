// WebDataset's shards: tar files whose members are grouped into samples by key, the member's path
// up to the first dot of its file name ("a/0001.jpg" and "a/0001.cls" are sample "a/0001" with
// fields "jpg" and "cls"), consecutive members sharing a key making one sample. Read in order with
// libarchive (any tar dialect, optionally gzip/zstd/xz-compressed); a field's bytes are read only
// when asked for, the others are skipped (a seek in an uncompressed tar). Torch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

struct archive;  // libarchive's reader (archive.h), kept out of this header

namespace trainer::formats {

// "{000..127}" numeric ranges (zero-padded to the first bound's width, "{0..10..2}" with a step)
// and "{a,b}" lists, expanded as WebDataset's braceexpand does, left to right, in order. Throws
// trainer::Error at `key` for an unbalanced brace or a range bound that is not a number.
std::vector<std::string> expand_braces(const std::string& spec, const std::string& key);

struct SampleField {
  std::string extension;       // after the key's dot, as stored ("jpg", "seg.png")
  std::string member;          // the member's full path in the tar, for messages
  std::vector<uint8_t> bytes;  // empty unless read
  bool read = false;
};

struct ShardSample {
  std::string key;
  std::vector<SampleField> fields;

  // The field whose extension is `extension` (case-insensitive), or null.
  const SampleField* field(const std::string& extension) const;
};

class TarShardReader {
 public:
  // Opens `path`, a shard listed at option `key` (for messages); throws trainer::Error naming
  // both when it is empty, a URL or pipe, absent, not a regular file, or not an archive.
  TarShardReader(std::string path, std::string key);
  ~TarShardReader();
  TarShardReader(const TarShardReader&) = delete;
  TarShardReader& operator=(const TarShardReader&) = delete;

  // Reads the next sample into `sample` (its vectors reused): every field's bytes for which
  // `wanted(extension)` holds (lower-case extension), the others skipped. False at the end of the
  // shard. Directories and members without a dot in their file name are passed over. Throws
  // trainer::Error naming the shard and member for a truncated or damaged archive, a sample with
  // two members of one extension, or a sample whose members are not adjacent (its key met again).
  bool next(ShardSample& sample, const std::function<bool(const std::string&)>& wanted);
  // The samples read so far.
  int64_t samples_read() const { return samples_read_; }
  const std::string& path() const { return path_; }

 private:
  void check_end_blocks() const;
  bool next_header();  // the next regular member with a key into pending_; false at the end
  void fail(const std::string& member, const std::string& what) const;

  std::string path_, key_;
  std::unordered_set<std::string> keys_;  // the samples' keys met so far
  ::archive* archive_ = nullptr;
  bool have_pending_ = false;  // a header read but not yet given to a sample
  bool at_end_ = false;
  std::string pending_key_, pending_extension_, pending_member_;
  int64_t pending_size_ = -1;  // the pending member's bytes; -1: not stored in its header
  int64_t samples_read_ = 0;
};

}  // namespace trainer::formats
