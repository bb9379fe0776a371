// Writing WebDataset shards (trainer data pack): the shard number pattern and the brace spec that
// lists what was written, a new shard at maxcount samples or before maxsize bytes, the members read
// back by trainer's own reader and by GNU tar, nothing overwritten, and .npy bytes NumPy's format
// reader (read_npy) takes.
#include "trainer/formats/shard_writer.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/formats/array_file.h"
#include "trainer/formats/tar_shard.h"
#include "trainer/util/error.h"

#include "temp_dir.h"
#include "test_process.h"

namespace fs = std::filesystem;
using trainer::formats::ShardPattern;
using trainer::formats::ShardSample;
using trainer::formats::ShardWriter;
using trainer::formats::TarShardReader;

namespace {

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "";
}

std::vector<ShardSample> read_all(const std::string& path) {
  TarShardReader reader(path, "test");
  std::vector<ShardSample> samples;
  ShardSample sample;
  while (reader.next(sample, [](const std::string&) { return true; })) samples.push_back(sample);
  return samples;
}

std::string as_text(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

}  // namespace

TEST_CASE("a shard pattern numbers shards as printf does and lists them as a brace spec") {
  const ShardPattern padded("out/train-%06d.tar", "pack.output");
  CHECK(padded.name(0) == "out/train-000000.tar");
  CHECK(padded.name(12) == "out/train-000012.tar");
  CHECK(padded.brace_spec(1) == "out/train-000000.tar");
  CHECK(padded.brace_spec(12) == "out/train-{000000..000011}.tar");
  // More shards than the width holds: the numbers grow past it (s-99, s-100), and the spec lists
  // one range per width, so that it expands to exactly the names written.
  const ShardPattern narrow("s-%02d.tar", "pack.output");
  CHECK(narrow.name(123) == "s-123.tar");
  CHECK(narrow.brace_spec(100) == "s-{00..99}.tar");
  CHECK(narrow.brace_spec(124) == "s-{{00..99},{100..123}}.tar");
  const ShardPattern one("s-%01d.tar", "pack.output");
  CHECK(one.brace_spec(1234) == "s-{{0..9},{10..99},{100..999},{1000..1233}}.tar");
  for (const auto& [pattern, count] : std::vector<std::pair<ShardPattern, int64_t>>{
           {narrow, 124}, {narrow, 100}, {narrow, 101}, {one, 1234}, {one, 10}, {one, 11}}) {
    const std::vector<std::string> listed = trainer::formats::expand_braces(pattern.brace_spec(count), "k");
    REQUIRE(static_cast<int64_t>(listed.size()) == count);
    for (int64_t i = 0; i < count; ++i) CHECK(listed[static_cast<size_t>(i)] == pattern.name(i));
  }
  const ShardPattern plain("s-%d.tar", "pack.output");
  CHECK(plain.name(7) == "s-7.tar");
  CHECK(plain.brace_spec(11) == "s-{0..10}.tar");
  CHECK(trainer::formats::expand_braces(plain.brace_spec(11), "k").back() == "s-10.tar");

  CHECK(error_of([] {
          ShardPattern("train.tar", "pack.output");
        }).find("pack.output: 'train.tar' has no shard number") == 0);
  CHECK(error_of([] { ShardPattern("train-%s.tar", "pack.output"); }).find("not a zero-padded shard number") !=
        std::string::npos);
  CHECK(error_of([] { ShardPattern("train-%6d.tar", "pack.output"); }).find("(%d or %06d; %% for a '%')") !=
        std::string::npos);
  CHECK(error_of([] { ShardPattern("%d/x-%d.tar", "pack.output"); }).find("more than one shard number") !=
        std::string::npos);
  // "%%" is a literal '%', as printf and webdataset's ShardWriter take it.
  const ShardPattern percent("100%%/s-%02d.tar", "pack.output");
  CHECK(percent.name(3) == "100%/s-03.tar");
  CHECK(percent.brace_spec(4) == "100%/s-{00..03}.tar");
  CHECK(error_of([] { ShardPattern("100%%.tar", "pack.output"); }).find("has no shard number") != std::string::npos);
}

TEST_CASE("a shard writer starts a new shard at maxcount or before maxsize; trainer's reader and GNU tar read them") {
  trainer::testing::TempDir dir("shard-writer");
  const std::string pattern = (fs::path(dir.path) / "a" / "s-%03d.tar").string();
  std::vector<std::string> written;
  {
    ShardWriter writer(ShardPattern(pattern, "pack.output"), /*maxcount=*/3, /*maxsize=*/1'000'000);
    for (int i = 0; i < 7; ++i) {
      const std::string key = "k" + std::to_string(i);
      const std::string image(600 + i, static_cast<char>('a' + i));
      const std::string label = std::to_string(i % 2);
      writer.write(key, {{"png", image}, {"cls", label}});
    }
    written = writer.finish();
    CHECK(writer.samples() == 7);
    // Per sample: 2 headers + 1536 bytes (600..606 padded) + 512 (the label); 2 blocks at each end.
    CHECK(writer.bytes() == 7 * (512 + 1024 + 512 + 512) + 3 * 1024);
  }
  REQUIRE(written.size() == 3);  // 3 + 3 + 1
  CHECK(written[2] == (fs::path(dir.path) / "a" / "s-002.tar").string());
  CHECK(static_cast<int64_t>(fs::file_size(written[0])) == 3 * 2560 + 1024);  // no padding to 10 KiB blocks
  const std::vector<ShardSample> second = read_all(written[1]);
  REQUIRE(second.size() == 3);
  CHECK(second[0].key == "k3");
  CHECK(as_text(second[0].field("png")->bytes) == std::string(603, 'd'));
  CHECK(as_text(second[0].field("cls")->bytes) == "1");
  CHECK(read_all(written[2]).at(0).key == "k6");
  // GNU tar lists them as plain files, mode 0644, in the order written.
  int status = 0;
  const std::string listed =
      trainer::testing::command_output("tar -tvf " + trainer::testing::shell_quote(written[2]) + " 2>&1", status);
  CHECK(status == 0);
  CHECK(listed.find("-rw-r--r--") == 0);
  CHECK(listed.find("k6.png") < listed.find("k6.cls"));

  // maxsize: a shard ends before a sample that would take it past the limit (3 samples of 2560
  // bytes + 1024 fit in 9000); a sample larger than the limit gets a shard of its own.
  const std::string sized = (fs::path(dir.path) / "b-%d.tar").string();
  ShardWriter by_size(ShardPattern(sized, "pack.output"), 100, 9000);
  for (int i = 0; i < 4; ++i) by_size.write("k" + std::to_string(i), {{"bin", std::string(600, 'x')}, {"cls", "0"}});
  by_size.write("big", {{"bin", std::string(20000, 'y')}});
  by_size.write("after", {{"cls", "1"}});
  const std::vector<std::string> by_size_written = by_size.finish();
  REQUIRE(by_size_written.size() == 4);
  CHECK(read_all(by_size_written[0]).size() == 3);
  CHECK(read_all(by_size_written[1]).size() == 1);
  CHECK(read_all(by_size_written[2]).at(0).key == "big");
  CHECK(read_all(by_size_written[3]).at(0).key == "after");
  for (const std::string& shard : by_size_written) {
    if (shard != by_size_written[2]) CHECK(fs::file_size(shard) <= 9000);
  }
}

TEST_CASE("a shard writer overwrites nothing and leaves no partial shard behind") {
  trainer::testing::TempDir dir("shard-writer");
  const std::string pattern = (fs::path(dir.path) / "s-%d.tar").string();
  {
    ShardWriter writer(ShardPattern(pattern, "pack.output"), 1, 1'000'000);
    writer.write("a", {{"cls", "0"}});
    writer.finish();
  }
  const auto before = fs::last_write_time(fs::path(dir.path) / "s-0.tar");
  const std::string refused = error_of([&] { ShardWriter again(ShardPattern(pattern, "pack.output"), 1, 1'000'000); });
  CHECK(refused.find("the first shard " + (fs::path(dir.path) / "s-0.tar").string() +
                     " exists already; nothing was written") != std::string::npos);
  CHECK(fs::last_write_time(fs::path(dir.path) / "s-0.tar") == before);

  // A later shard that exists: the error names it, and the shard being written is removed.
  fs::remove(fs::path(dir.path) / "s-0.tar");
  std::ofstream(fs::path(dir.path) / "s-1.tar") << "someone's file";
  const std::string later = error_of([&] {
    ShardWriter writer(ShardPattern(pattern, "pack.output"), 1, 1'000'000);
    writer.write("a", {{"cls", "0"}});
    writer.write("b", {{"cls", "1"}});  // would begin s-1.tar
  });
  CHECK(later.find("s-1.tar exists already; it was not overwritten") != std::string::npos);
  std::ifstream kept(fs::path(dir.path) / "s-1.tar");
  CHECK(std::string(std::istreambuf_iterator<char>(kept), std::istreambuf_iterator<char>()) == "someone's file");
  // A shard that appears while it is written (another pack to the same names): the rename does
  // not replace it, the error says so, and this writer's copy is gone.
  fs::remove(fs::path(dir.path) / "s-1.tar");
  fs::remove(fs::path(dir.path) / "s-0.tar");  // the shard the writer above completed
  const std::string raced = error_of([&] {
    ShardWriter writer(ShardPattern(pattern, "pack.output"), 1, 1'000'000);
    writer.write("a", {{"cls", "0"}});
    std::ofstream(fs::path(dir.path) / "s-0.tar") << "the other pack's shard";
    writer.finish();
  });
  CHECK(raced.find("s-0.tar appeared while it was written") != std::string::npos);
  std::ifstream other(fs::path(dir.path) / "s-0.tar");
  CHECK(std::string(std::istreambuf_iterator<char>(other), std::istreambuf_iterator<char>()) ==
        "the other pack's shard");
  fs::remove(fs::path(dir.path) / "s-0.tar");
  // A shard number in a folder's name: each shard in its own folder, made as it begins.
  {
    ShardWriter writer(ShardPattern((fs::path(dir.path) / "f-%d" / "data.tar").string(), "pack.output"), 1, 1'000'000);
    writer.write("a", {{"cls", "0"}});
    writer.write("b", {{"cls", "1"}});
    CHECK(writer.finish().size() == 2);
  }
  CHECK(fs::exists(fs::path(dir.path) / "f-1" / "data.tar"));
  // An unfinished writer takes its temporary file with it.
  {
    ShardWriter writer(ShardPattern((fs::path(dir.path) / "u-%d.tar").string(), "pack.output"), 10, 1'000'000);
    writer.write("a", {{"cls", "0"}});
  }
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    CHECK(entry.path().filename().string().find("partial") == std::string::npos);
    CHECK(entry.path().filename().string().rfind("u-", 0) != 0);
  }
}

TEST_CASE("npy_bytes writes what NumPy writes: a header padded to 64-byte alignment, C order, the given dtype") {
  const std::string data = {1, 2, 3, 4, 5, 6};
  const std::string npy = trainer::formats::npy_bytes("|u1", {1, 2, 3}, data);
  CHECK(npy.size() == 128 + 6);  // as NumPy: 10 + 63 header bytes + '\n' padded to 128
  const std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3), }";
  CHECK(npy.substr(0, 6) == "\x93NUMPY");
  CHECK(npy.substr(10, header.size()) == header);
  CHECK(npy.substr(10 + header.size(), 127 - 10 - header.size()) == std::string(127 - 10 - header.size(), ' '));
  CHECK(npy[127] == '\n');
  const trainer::formats::ArrayView view =
      trainer::formats::read_npy(reinterpret_cast<const uint8_t*>(npy.data()), npy.size(), "x.npy", "k");
  CHECK(view.dtype == "U8");
  CHECK(view.shape == std::vector<int64_t>{1, 2, 3});
  CHECK(view.offset == 128);
  CHECK(npy.substr(view.offset) == data);
  const std::string one = trainer::formats::npy_bytes("<f4", {3}, std::string(12, '\0'));
  CHECK(one.find("'shape': (3,), }") != std::string::npos);
  CHECK(one.size() % 64 == 12);
  CHECK(trainer::formats::read_npy(reinterpret_cast<const uint8_t*>(one.data()), one.size(), "y.npy", "k").shape ==
        std::vector<int64_t>{3});
}
