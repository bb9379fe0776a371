// The shard index: counts kept between runs, used only while each shard is the same, unchanged
// file, and a damaged or foreign index file counted again, never trusted.
#include "trainer/formats/shard_index.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::formats::ShardCount;
using trainer::formats::ShardIndex;

namespace {

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a shard index gives back the counts stored for shards that have not changed since") {
  trainer::testing::TempDir dir("shard-index");
  const fs::path root(dir.path);
  const std::string cache = (root / "cache").string();
  // Names a tab, a newline and '%' would break a line of the index with.
  const std::vector<std::string> shards = {(root / "a.tar").string(), (root / "b\t%0A.tar").string(),
                                           (root / "c.tar").string()};
  for (const std::string& shard : shards) write(shard, "shard " + shard);
  {
    ShardIndex index(cache, "labels from .cls", shards);
    for (size_t i = 0; i < shards.size(); ++i) CHECK_FALSE(index.find(i));
    index.store(0, ShardCount{500, 0, 9, shards[0] + ": member 000001.cls"});
    index.store(1, ShardCount{250, 2, 7, "b\n%25", 0xdeadbeef});
    CHECK(index.save());
    CHECK(fs::exists(index.file()));
    CHECK_FALSE(index.save());  // nothing changed since
  }
  ShardIndex again(cache, "labels from .cls", shards);
  REQUIRE(again.find(0));
  CHECK(again.find(0)->samples == 500);
  CHECK(again.find(0)->max_label == 9);
  CHECK(again.find(0)->max_label_where == shards[0] + ": member 000001.cls");
  REQUIRE(again.find(1));
  CHECK(again.find(1)->skipped == 2);
  CHECK(again.find(1)->max_label_where == "b\n%25");
  CHECK(again.find(1)->digest == 0xdeadbeef);
  CHECK_FALSE(again.find(2));  // never stored

  // Another label source, or another list of shards: another index, nothing found.
  CHECK_FALSE(ShardIndex(cache, "labels from .json:label", shards).find(0));
  CHECK_FALSE(ShardIndex(cache, "labels from .cls", {shards[0]}).find(0));

  // A shard rewritten under its name (same size, so that only its times or inode tell), or
  // replaced by another file: counted again. The others still hold. (After a pause longer than
  // the file system's clock tick, a few ms, as between two runs.)
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  write(shards[0], "shard " + shards[0]);
  const fs::path replacement = root / "new.tar";
  write(replacement, "other " + shards[1]);
  fs::rename(replacement, shards[1]);
  ShardIndex changed(cache, "labels from .cls", shards);
  CHECK_FALSE(changed.find(0));
  CHECK_FALSE(changed.find(1));
  // A shard that is gone: nothing, and storing it keeps nothing.
  fs::remove(shards[2]);
  ShardIndex gone(cache, "labels from .cls", shards);
  CHECK_FALSE(gone.find(2));
  gone.store(2, ShardCount{1, 0, 0, ""});
  CHECK_FALSE(gone.find(2));
}

TEST_CASE("a damaged shard index is counted again, and no cache directory keeps nothing") {
  trainer::testing::TempDir dir("shard-index");
  const fs::path root(dir.path);
  const std::string cache = (root / "cache").string();
  const std::vector<std::string> shards = {(root / "a.tar").string(), (root / "b.tar").string()};
  for (const std::string& shard : shards) write(shard, "shard");
  std::string file;
  {
    ShardIndex index(cache, "labels from .cls", shards);
    index.store(0, ShardCount{10, 0, 1, "a"});
    index.store(1, ShardCount{20, 0, 1, "b"});
    REQUIRE(index.save());
    file = index.file();
  }
  const std::string good = read(file);
  // One line cut short: that shard is counted again, the other still found.
  const size_t last_line = good.rfind('\n', good.size() - 2);
  write(file, good.substr(0, good.rfind('\t')) + "\n");
  {
    ShardIndex cut(cache, "labels from .cls", shards);
    CHECK(cut.find(0));
    CHECK_FALSE(cut.find(1));
  }
  write(file, good.substr(0, last_line + 1) + shards[1] + "\tnot\ta\tnumber\t1\t1\t1\t1\t1\tx\n");
  CHECK_FALSE(ShardIndex(cache, "labels from .cls", shards).find(1));
  // Not an index at all: nothing found, and saving writes a good one over it.
  write(file, "\x89PNG garbage");
  {
    ShardIndex garbage(cache, "labels from .cls", shards);
    CHECK_FALSE(garbage.find(0));
    garbage.store(0, ShardCount{10, 0, 1, "a"});
    CHECK(garbage.save());
  }
  CHECK(ShardIndex(cache, "labels from .cls", shards).find(0));
  // No directory to keep it in (no HOME): works, keeps nothing.
  ShardIndex none("", "labels from .cls", shards);
  none.store(0, ShardCount{10, 0, 1, "a"});
  CHECK_FALSE(none.save());
  CHECK_FALSE(none.find(1));
  // A directory that cannot be made (a file in the way): save says so, nothing thrown.
  write(root / "blocked", "a file");
  ShardIndex blocked((root / "blocked" / "cache").string(), "labels from .cls", shards);
  blocked.store(0, ShardCount{10, 0, 1, "a"});
  CHECK_FALSE(blocked.save());
}

TEST_CASE("a shard's digest tells apart files of one size by their first and last 64 KiB") {
  trainer::testing::TempDir dir("shard-digest");
  const fs::path root(dir.path);
  const std::string big(300'000, 'x');
  write(root / "a", big);
  std::string head = big, middle = big, tail = big;
  head[10] = 'y';
  middle[150'000] = 'y';  // between the two ends: not read
  tail[299'990] = 'y';
  write(root / "head", head);
  write(root / "middle", middle);
  write(root / "tail", tail);
  write(root / "small", "abc");
  const auto digest = [&](const char* name) { return trainer::formats::shard_digest((root / name).string()); };
  REQUIRE(digest("a"));
  CHECK(digest("head") != digest("a"));
  CHECK(digest("tail") != digest("a"));
  CHECK(digest("middle") == digest("a"));
  CHECK(digest("small") == trainer::formats::shard_digest((root / "small").string()));
  CHECK_FALSE(digest("missing"));
}
