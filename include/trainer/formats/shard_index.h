// What a pass over a shard list learnt, kept between runs so that opening shards again costs a
// stat() per shard instead of a read of every member header: each shard's count of good samples,
// of samples left out, and its largest label. One small text file per shard list in the user's
// cache (TRAINER_CACHE_DIR, else $XDG_CACHE_HOME/trainer, else ~/.cache/trainer; shard-index/), never
// beside the shards, which may be read-only. An entry holds only while its shard is the same file,
// unchanged: the same device, inode, size, modification and status-change times (a shard rewritten
// or replaced under its name is counted again). A missing, unreadable or damaged cache is counted
// again, never an error. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainer::formats {

// What counting one shard found.
struct ShardCount {
  int64_t samples = 0;  // good samples
  int64_t skipped = 0;  // left out as unreadable (data.on_bad_sample=skip)
  int64_t max_label = -1;
  std::string max_label_where;  // the member that holds it, for messages
  uint32_t digest = 0;          // shard_digest() of the file
};

// CRC-32C of the shard's first and last 64 KiB (all of it when smaller): a few reads that tell
// shards of equal size and count apart (the first member's key, the last one's bytes), kept with
// a checkpoint so that a resumed fit can check it streams the same shards. nullopt: unreadable.
std::optional<uint32_t> shard_digest(const std::string& path);

// The identity of a file as stat() gives it; nullopt when stat fails.
struct FileStamp {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t modified_ns = 0, changed_ns = 0;
  bool operator==(const FileStamp& other) const;
};
std::optional<FileStamp> file_stamp(const std::string& path);

// The cache directory shard indexes go in: $TRAINER_CACHE_DIR/shard-index,
// $XDG_CACHE_HOME/trainer/shard-index or ~/.cache/trainer/shard-index; empty when none can be named.
std::string shard_index_directory();

class ShardIndex {
 public:
  // The index of `paths` counted under `context` (what else decides a count: the label source),
  // loaded from `directory` if it holds one. An empty directory: nothing is kept.
  ShardIndex(std::string directory, std::string context, std::vector<std::string> paths);

  // Shard i's count, when the index holds one for the file as it is now.
  std::optional<ShardCount> find(size_t i) const;
  // Records shard i's count for the file as it is now (a shard that cannot be stat'ed is not kept).
  void store(size_t i, const ShardCount& count);
  // Writes the index if store() changed it: to a temporary file, then renamed over the old one;
  // an index used as it was gets its time renewed (once a day). Index files of other shard lists
  // not used for 30 days are removed. True when the index was written; false when nothing changed
  // or the directory cannot be written (nothing is lost but the next start's time).
  bool save();

  const std::string& file() const { return file_; }
  // Shard i as stat() gave it when the index was opened.
  const std::optional<FileStamp>& stamp(size_t i) const { return now_[i]; }

 private:
  struct Entry {
    FileStamp stamp;
    ShardCount count;
  };
  std::string directory_, context_, file_;
  std::vector<std::string> paths_;
  std::vector<std::optional<FileStamp>> now_;  // each shard's stamp when the index was opened
  std::vector<std::optional<Entry>> entries_;
  bool changed_ = false;
};

}  // namespace trainer::formats
