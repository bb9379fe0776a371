// read_idx on Debian's real Fashion-MNIST files, on small IDX files written here (raw and
// gzipped, several element types), and on the broken files users will meet.
#include "trainer/data/idx_reader.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#define CATCH_CONFIG_PREFIX_ALL
#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using Catch::Matchers::Contains;
using trainer::data::read_idx;

namespace {

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

// A fresh directory under /tmp, removed at the end of the test. POSIX calls, not std::filesystem:
// see include/trainer/engine/posix_files.h for why torch-linked code avoids it.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = "/tmp/trainer_idx_test_XXXXXX";
    path = ::mkdtemp(pattern.data()) ? pattern : "/tmp";
  }
  ~TempDir() {
    if (path == "/tmp") return;
    if (DIR* dir = ::opendir(path.c_str())) {
      while (dirent* entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..") ::unlink((path + "/" + name).c_str());
      }
      ::closedir(dir);
    }
    ::rmdir(path.c_str());
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

void write_raw(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  CATCH_REQUIRE(file != nullptr);
  CATCH_REQUIRE(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  gzclose(file);
}

// An IDX header: 0 0 type rank, then big-endian sizes.
std::vector<uint8_t> header(uint8_t type, const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> bytes{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    bytes.push_back(static_cast<uint8_t>(d >> 24));
    bytes.push_back(static_cast<uint8_t>(d >> 16));
    bytes.push_back(static_cast<uint8_t>(d >> 8));
    bytes.push_back(static_cast<uint8_t>(d));
  }
  return bytes;
}

std::string error_text(const std::string& path) {
  try {
    read_idx(path);
  } catch (const trainer::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

CATCH_TEST_CASE("read_idx reads Debian's Fashion-MNIST training set") {
  const at::Tensor images = read_idx(kFashion + "/train-images-idx3-ubyte.gz");
  const at::Tensor labels = read_idx(kFashion + "/train-labels-idx1-ubyte.gz");
  CATCH_CHECK(images.scalar_type() == at::kByte);
  CATCH_CHECK(images.sizes().vec() == std::vector<int64_t>{60000, 28, 28});
  CATCH_CHECK(labels.sizes().vec() == std::vector<int64_t>{60000});
  CATCH_CHECK(labels[0].item<int64_t>() == 9);  // the first training image is an ankle boot
  CATCH_CHECK(labels.max().item<int64_t>() == 9);
  CATCH_CHECK(labels.min().item<int64_t>() == 0);
  // Fashion-MNIST is balanced: 6000 images of each class.
  const at::Tensor counts = labels.to(at::kLong).bincount();
  CATCH_CHECK(at::equal(counts, at::full({10}, 6000, at::kLong)));
  // Real images, not zeros: a mean pixel near the usual normalisation constant 0.2860.
  const double mean = images.to(at::kDouble).mean().item<double>() / 255.0;
  CATCH_CHECK(mean == Approx(0.2860).margin(0.001));
}

CATCH_TEST_CASE("read_idx reads Debian's Fashion-MNIST test set") {
  const at::Tensor images = read_idx(kFashion + "/t10k-images-idx3-ubyte.gz");
  const at::Tensor labels = read_idx(kFashion + "/t10k-labels-idx1-ubyte.gz");
  CATCH_CHECK(images.sizes().vec() == std::vector<int64_t>{10000, 28, 28});
  CATCH_CHECK(labels.sizes().vec() == std::vector<int64_t>{10000});
  CATCH_CHECK(labels.max().item<int64_t>() == 9);
  CATCH_CHECK(labels.min().item<int64_t>() == 0);
}

CATCH_TEST_CASE("read_idx reads small raw and gzipped IDX files of several types") {
  TempDir dir;
  CATCH_SECTION("uint8, rank 3, raw") {
    std::vector<uint8_t> bytes = header(0x08, {2, 3, 4});
    for (int i = 0; i < 24; ++i) bytes.push_back(static_cast<uint8_t>(i * 10));
    write_raw(dir.file("u8.idx"), bytes);
    const at::Tensor t = read_idx(dir.file("u8.idx"));
    CATCH_CHECK(t.scalar_type() == at::kByte);
    CATCH_CHECK(t.sizes().vec() == std::vector<int64_t>{2, 3, 4});
    CATCH_CHECK(t[1][2][3].item<int64_t>() == 230);
    CATCH_CHECK(t[0][1][0].item<int64_t>() == 40);
  }
  CATCH_SECTION("int32, big-endian, gzipped") {
    std::vector<uint8_t> bytes = header(0x0C, {3});
    for (uint8_t b : {0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0xFF, 0xFB, 0x00, 0x00, 0x01, 0x00}) {
      bytes.push_back(b);
    }
    write_gz(dir.file("i32.idx.gz"), bytes);
    const at::Tensor t = read_idx(dir.file("i32.idx.gz"));
    CATCH_CHECK(t.scalar_type() == at::kInt);
    CATCH_CHECK(t[0].item<int64_t>() == 0x01020304);
    CATCH_CHECK(t[1].item<int64_t>() == -5);
    CATCH_CHECK(t[2].item<int64_t>() == 256);
  }
  CATCH_SECTION("float32 and float64, rank 2") {
    std::vector<uint8_t> f32 = header(0x0D, {1, 2});
    for (uint8_t b : {0x3F, 0xC0, 0x00, 0x00, 0xC0, 0x20, 0x00, 0x00}) f32.push_back(b);  // 1.5, -2.5
    write_raw(dir.file("f32.idx"), f32);
    const at::Tensor t = read_idx(dir.file("f32.idx"));
    CATCH_CHECK(t.scalar_type() == at::kFloat);
    CATCH_CHECK(t.sizes().vec() == std::vector<int64_t>{1, 2});
    CATCH_CHECK(t[0][0].item<double>() == 1.5);
    CATCH_CHECK(t[0][1].item<double>() == -2.5);

    std::vector<uint8_t> f64 = header(0x0E, {1});
    for (uint8_t b : {0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18}) f64.push_back(b);  // pi
    write_gz(dir.file("f64.idx.gz"), f64);
    CATCH_CHECK(read_idx(dir.file("f64.idx.gz"))[0].item<double>() == 3.141592653589793);
  }
  CATCH_SECTION("a size not hard-coded anywhere: 70000 uint8 labels, gzipped") {
    std::vector<uint8_t> bytes = header(0x08, {70000});
    for (int i = 0; i < 70000; ++i) bytes.push_back(static_cast<uint8_t>(i % 7));
    write_gz(dir.file("big.gz"), bytes);
    const at::Tensor t = read_idx(dir.file("big.gz"));
    CATCH_CHECK(t.size(0) == 70000);
    CATCH_CHECK(t.to(at::kLong).sum().item<int64_t>() == 10000 * (0 + 1 + 2 + 3 + 4 + 5 + 6));
  }
}

CATCH_TEST_CASE("read_idx explains missing, foreign and truncated files") {
  TempDir dir;
  CATCH_SECTION("missing file") {
    const std::string path = dir.file("train-images-idx3-ubyte.gz");
    const std::string text = error_text(path);
    CATCH_CHECK_THAT(text, Contains(path));
    CATCH_CHECK_THAT(text, Contains("apt-get install dataset-fashion-mnist"));
    CATCH_CHECK_THAT(text, Contains("data.root"));
  }
  CATCH_SECTION("not an IDX file") {
    write_raw(dir.file("png.idx"), {0x89, 'P', 'N', 'G', 0, 0, 0, 0});
    const std::string text = error_text(dir.file("png.idx"));
    CATCH_CHECK_THAT(text, Contains(dir.file("png.idx")));
    CATCH_CHECK_THAT(text, Contains("not an IDX file"));
    CATCH_CHECK_THAT(text, Contains("0x89 0x50 0x4E 0x47"));
    CATCH_CHECK_THAT(text, Contains("magic"));
  }
  CATCH_SECTION("unknown type byte") {
    write_raw(dir.file("type.idx"), {0, 0, 0x07, 1, 0, 0, 0, 1, 5});
    CATCH_CHECK_THAT(error_text(dir.file("type.idx")), Contains("not an IDX file"));
  }
  CATCH_SECTION("empty file") {
    write_raw(dir.file("empty.idx"), {});
    CATCH_CHECK_THAT(error_text(dir.file("empty.idx")), Contains("shorter than an IDX header"));
  }
  CATCH_SECTION("truncated header") {
    write_raw(dir.file("head.idx"), {0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0});
    CATCH_CHECK_THAT(error_text(dir.file("head.idx")), Contains("ends inside its header"));
  }
  CATCH_SECTION("truncated data, gzipped") {
    std::vector<uint8_t> bytes = header(0x08, {10, 28, 28});
    bytes.resize(bytes.size() + 1000, 7);
    write_gz(dir.file("short.gz"), bytes);
    const std::string text = error_text(dir.file("short.gz"));
    CATCH_CHECK_THAT(text, Contains(dir.file("short.gz")));
    CATCH_CHECK_THAT(text, Contains("ends after 1000 of the 7840 data bytes"));
    CATCH_CHECK_THAT(text, Contains("[10, 28, 28]"));
  }
  CATCH_SECTION("a damaged gzip stream") {
    std::vector<uint8_t> bytes = header(0x08, {5000});
    bytes.resize(bytes.size() + 5000, 1);
    write_gz(dir.file("bad.gz"), bytes);
    // Corrupt the compressed bytes after the gzip header.
    std::fstream file(dir.file("bad.gz"), std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(12);
    const char junk[8] = {'\xff', '\x13', '\x55', '\x00', '\x7f', '\x42', '\x11', '\x99'};
    file.write(junk, sizeof junk);
    file.close();
    CATCH_CHECK_THAT(error_text(dir.file("bad.gz")), Contains(dir.file("bad.gz")));
  }
  CATCH_SECTION("a flipped byte that still inflates: caught by the gzip trailer's CRC-32") {
    std::vector<uint8_t> bytes = header(0x08, {64});
    for (int i = 0; i < 64; ++i) bytes.push_back(static_cast<uint8_t>(i * 37));
    const std::string path = dir.file("flip.gz");
    {  // stored (level 0) deflate blocks hold the bytes as they are: flipping one changes the data only
      gzFile file = gzopen(path.c_str(), "wb0");
      CATCH_REQUIRE(file != nullptr);
      gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
      gzclose(file);
    }
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(0, std::ios::end);
    const std::streamoff size = file.tellg();
    file.seekp(size - 8 - 10);  // a data byte: before the 8-byte trailer
    const char flipped = '\x5a';
    file.write(&flipped, 1);
    file.close();
    const std::string text = error_text(path);
    CATCH_CHECK_THAT(text, Contains(path));
    CATCH_CHECK_THAT(text, Contains("the file is damaged"));
    CATCH_CHECK_THAT(text, Contains("gzip checksum"));
  }
  CATCH_SECTION("more data than the header announces") {
    std::vector<uint8_t> bytes = header(0x08, {4});
    bytes.resize(bytes.size() + 6, 3);
    write_gz(dir.file("long.gz"), bytes);
    CATCH_CHECK_THAT(error_text(dir.file("long.gz")), Contains("more data than its header announces"));
  }
}
