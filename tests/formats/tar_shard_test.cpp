// WebDataset's shard reading on tars written at test time by GNU tar (pax headers for long names
// included) and a gzip-compressed one: members grouped into samples by key, only the wanted
// fields read, directories and keyless files passed over, a cut-short tar named; and the brace
// patterns of data.shards.
#include "trainer/formats/tar_shard.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

#include "temp_dir.h"
#include "test_process.h"

namespace fs = std::filesystem;
using trainer::formats::expand_braces;
using trainer::formats::ShardSample;
using trainer::formats::TarShardReader;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Tars `files` (relative to `dir`, in this order) into `tar` with GNU tar; `flags` e.g. "-z".
void make_tar(const fs::path& dir, const fs::path& tar, const std::vector<std::string>& files,
              const std::string& flags = "") {
  std::string command = "tar --format=gnu --no-recursion " + flags + " -cf " +
                        trainer::testing::shell_quote(tar.string()) + " -C " +
                        trainer::testing::shell_quote(dir.string());
  for (const std::string& f : files) command += " " + trainer::testing::shell_quote(f);
  int status = 0;
  const std::string out = trainer::testing::command_output(command + " 2>&1", status);
  INFO(out);
  REQUIRE(status == 0);
}

auto everything = [](const std::string&) { return true; };

}  // namespace

TEST_CASE("tar shards: members sharing a key make one sample; unwanted fields are skipped") {
  trainer::testing::TempDir dir("tar-shard");
  const fs::path src = fs::path(dir.path) / "src";
  const std::string long_dir(120, 'd');  // past ustar's 100-byte name field: a GNU long-name header
  write(src / "a" / "0001.png", "PNGDATA1");
  write(src / "a" / "0001.cls", "3\n");
  write(src / "a" / "0001.seg.png", "SEG");
  write(src / "a" / "0002.png", "PNGDATA2");
  write(src / "a" / "0002.cls", "7");
  write(src / "README", "no dot: not a sample");
  write(src / ".hidden", "a hidden file: no key");
  write(src / long_dir / "x.0003.jpg", "JPEG3");
  write(src / long_dir / "x.0003.cls", "1");
  const fs::path tar = fs::path(dir.path) / "shard.tar";
  make_tar(src, tar,
           {"a", "a/0001.png", "a/0001.cls", "a/0001.seg.png", "README", "a/0002.png", "a/0002.cls", ".hidden",
            long_dir + "/x.0003.jpg", long_dir + "/x.0003.cls"});

  TarShardReader reader(tar.string(), "data.shards");
  ShardSample sample;
  REQUIRE(reader.next(sample, [](const std::string& ext) { return ext == "cls"; }));
  CHECK(sample.key == "a/0001");
  REQUIRE(sample.fields.size() == 3);
  CHECK(sample.fields[0].extension == "png");
  CHECK_FALSE(sample.fields[0].read);
  CHECK(sample.fields[0].bytes.empty());
  CHECK(std::string(sample.fields[1].bytes.begin(), sample.fields[1].bytes.end()) == "3\n");
  CHECK(sample.fields[2].extension == "seg.png");
  CHECK(sample.field("CLS") == &sample.fields[1]);
  CHECK(sample.field("jpg") == nullptr);

  REQUIRE(reader.next(sample, everything));
  CHECK(sample.key == "a/0002");
  REQUIRE(sample.fields.size() == 2);
  CHECK(std::string(sample.fields[0].bytes.begin(), sample.fields[0].bytes.end()) == "PNGDATA2");
  CHECK(sample.fields[0].member == "a/0002.png");

  REQUIRE(reader.next(sample, everything));
  CHECK(sample.key == long_dir + "/x");  // the key ends at the first dot of the file name
  CHECK(sample.fields[0].extension == "0003.jpg");
  CHECK(std::string(sample.fields[0].bytes.begin(), sample.fields[0].bytes.end()) == "JPEG3");
  CHECK_FALSE(reader.next(sample, everything));
  CHECK(reader.samples_read() == 3);
}

TEST_CASE("tar shards: gzip-compressed shards read alike; a cut-short or missing shard is named") {
  trainer::testing::TempDir dir("tar-shard");
  const fs::path src = fs::path(dir.path) / "src";
  std::vector<std::string> files;
  for (int i = 0; i < 20; ++i) {
    const std::string key = "s" + std::to_string(100 + i);
    write(src / (key + ".bin"), std::string(5000, static_cast<char>('a' + i)));
    write(src / (key + ".cls"), std::to_string(i));
    files.push_back(key + ".bin");
    files.push_back(key + ".cls");
  }
  const fs::path gz = fs::path(dir.path) / "shard.tar.gz";
  make_tar(src, gz, files, "-z");
  {
    TarShardReader reader(gz.string(), "data.shards");
    ShardSample sample;
    int count = 0;
    while (reader.next(sample, everything)) {
      CHECK(sample.fields.at(0).bytes.size() == 5000);
      ++count;
    }
    CHECK(count == 20);
  }

  const fs::path tar = fs::path(dir.path) / "shard.tar";
  make_tar(src, tar, files);
  fs::resize_file(tar, fs::file_size(tar) / 2 + 100);
  TarShardReader reader(tar.string(), "data.shards");
  ShardSample sample;
  try {
    while (reader.next(sample, everything)) {
    }
    FAIL("a truncated tar read to its end");
  } catch (const trainer::Error& error) {
    CHECK(error.where().find(tar.string()) == 0);
    CHECK(error.fix().find("cut short") != std::string::npos);
  }
  // Cut exactly at a member boundary (after the 10th sample: 20 members of a 512-byte header and
  // data padded to 512), libarchive ends cleanly; the missing end-of-archive blocks say it was cut.
  const fs::path whole = fs::path(dir.path) / "whole.tar";
  make_tar(src, whole, files);
  const fs::path cut = fs::path(dir.path) / "cut.tar";
  fs::copy_file(whole, cut);
  const uintmax_t member_bytes = 512 + (5000 + 511) / 512 * 512 + 512 + 512;  // .bin and .cls
  fs::resize_file(cut, 10 * member_bytes);
  {
    TarShardReader cut_reader(cut.string(), "data.shards");
    int count = 0;
    try {
      while (cut_reader.next(sample, everything)) ++count;
      FAIL("a tar cut at a member boundary read to its end");
    } catch (const trainer::Error& error) {
      CHECK(error.where() == cut.string());
      CHECK(std::string(error.what())
                .find("ends after member s109.cls without the zero blocks that end every tar "
                      "archive: it was cut short at a member boundary") != std::string::npos);
    }
    CHECK(count == 9);  // the 10th sample's end is where the error comes
    TarShardReader whole_reader(whole.string(), "data.shards");
    count = 0;
    while (whole_reader.next(sample, everything)) ++count;
    CHECK(count == 20);
  }
  CHECK_THROWS_WITH(TarShardReader((fs::path(dir.path) / "absent.tar").string(), "data.val_shards"),
                    Catch::Contains("data.val_shards") && Catch::Contains("No such file"));
}

TEST_CASE("tar shards: paths libarchive would block on or misread are refused, naming the key") {
  trainer::testing::TempDir dir("tar-shard-paths");
  const auto message = [](const std::string& path) {
    try {
      TarShardReader reader(path, "data.test_shards");
    } catch (const trainer::Error& error) {
      CHECK(error.where() == "data.test_shards");
      return error.problem() + " | " + error.fix();
    }
    FAIL("opened " + path);
    return std::string();
  };
  // An empty name would make libarchive read standard input; a FIFO would block until a writer came.
  CHECK_THAT(message(""), Catch::Contains("empty shard path"));
  const fs::path fifo = fs::path(dir.path) / "shard.tar";
  int status = 0;
  trainer::testing::command_output("mkfifo " + trainer::testing::shell_quote(fifo.string()), status);
  REQUIRE(status == 0);
  CHECK_THAT(message(fifo.string()), Catch::Contains("not a regular file"));
  CHECK_THAT(message(dir.path), Catch::Contains("a directory"));
  CHECK_THAT(message("https://host/train-000.tar"), Catch::Contains("local files only"));
  CHECK_THAT(message("pipe:curl -s x"), Catch::Contains("local files only"));
  // A shell wildcard, which neither WebDataset nor trainer expands: said, with the brace form.
  CHECK_THAT(message((fs::path(dir.path) / "train-*.tar").string()),
             Catch::Contains("wildcards (*, ?, [...]) are not expanded") && Catch::Contains("{000000..000127}"));
  write(fs::path(dir.path) / "text.tar", "not a tar at all, just some text\n");
  CHECK_THROWS_WITH(TarShardReader((fs::path(dir.path) / "text.tar").string(), "data.shards"),
                    Catch::Contains("data.shards") && Catch::Contains("tar file"));
}

TEST_CASE("tar shards: a sample's duplicate or scattered members are errors, not merged or split") {
  trainer::testing::TempDir dir("tar-shard-order");
  const fs::path src = fs::path(dir.path) / "src";
  write(src / "0001.png", "A");
  write(src / "0001.PNG", "B");
  write(src / "0001.cls", "1");
  write(src / "0002.png", "C");
  write(src / "0002.cls", "2");
  const auto read_all = [&](const std::vector<std::string>& files) {
    const fs::path tar = fs::path(dir.path) / "shard.tar";
    fs::remove(tar);
    make_tar(src, tar, files);
    TarShardReader reader(tar.string(), "data.shards");
    ShardSample sample;
    while (reader.next(sample, everything)) {
    }
  };
  // Two .png of one sample: one image would be dropped silently.
  CHECK_THROWS_WITH(read_all({"0001.png", "0001.PNG", "0001.cls"}),
                    Catch::Contains("second .PNG member of sample '0001'") && Catch::Contains("0001.png"));
  // Members in directory order, not name order: the key comes back after another sample.
  CHECK_THROWS_WITH(read_all({"0001.png", "0002.png", "0001.cls", "0002.cls"}),
                    Catch::Contains("must be adjacent") && Catch::Contains("--sort=name"));
  read_all({"0001.png", "0001.cls", "0002.png", "0002.cls"});
}

TEST_CASE("shard patterns expand as WebDataset's braceexpand does") {
  CHECK(expand_braces("d/train-{000..003}.tar", "data.shards") ==
        std::vector<std::string>{"d/train-000.tar", "d/train-001.tar", "d/train-002.tar", "d/train-003.tar"});
  CHECK(expand_braces("{a,b}-{1..2}.tar", "k") == std::vector<std::string>{"a-1.tar", "a-2.tar", "b-1.tar", "b-2.tar"});
  CHECK(expand_braces("x{10..8}", "k") == std::vector<std::string>{"x10", "x9", "x8"});
  CHECK(expand_braces("{a,{b,c}}.tar", "k") == std::vector<std::string>{"a.tar", "b.tar", "c.tar"});
  CHECK(expand_braces("plain.tar", "k") == std::vector<std::string>{"plain.tar"});
  CHECK(expand_braces("s-{8..11}", "k") == std::vector<std::string>{"s-8", "s-9", "s-10", "s-11"});
  CHECK(expand_braces("s-{00..10..5}", "k") == std::vector<std::string>{"s-00", "s-05", "s-10"});
  CHECK(expand_braces("s-{9..1..4}", "k") == std::vector<std::string>{"s-9", "s-5", "s-1"});
  CHECK_THROWS_WITH(expand_braces("s-{0..9..0}", "k"), Catch::Contains("neither a range"));
  CHECK_THROWS_WITH(expand_braces("a-{0..3.tar", "data.shards"), Catch::Contains("without its '}'"));
  CHECK_THROWS_WITH(expand_braces("a-0..3}.tar", "data.shards"), Catch::Contains("without its '{'"));
  CHECK_THROWS_WITH(expand_braces("a-{x..y}.tar", "data.shards"), Catch::Contains("neither a range"));
}
