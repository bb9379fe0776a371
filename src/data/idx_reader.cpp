#include "trainer/data/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "trainer/util/error.h"

namespace trainer::data {
namespace {

constexpr const char* kInstallHint =
    "Install Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist) or "
    "set data.root to the directory holding the IDX files.";

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

struct ElementType {
  at::ScalarType dtype;
  int64_t bytes;
};

bool element_type(uint8_t code, ElementType* out) {
  switch (code) {
    case 0x08:
      *out = {at::kByte, 1};
      return true;
    case 0x09:
      *out = {at::kChar, 1};
      return true;
    case 0x0B:
      *out = {at::kShort, 2};
      return true;
    case 0x0C:
      *out = {at::kInt, 4};
      return true;
    case 0x0D:
      *out = {at::kFloat, 4};
      return true;
    case 0x0E:
      *out = {at::kDouble, 8};
      return true;
    default:
      return false;
  }
}

// zlib's error on `file` as one paragraph: a damaged deflate stream, or a gzip trailer whose
// CRC-32 or length does not match what was inflated.
[[noreturn]] void throw_damaged(gzFile file, const std::string& path) {
  int code = 0;
  const char* raw = gzerror(file, &code);
  std::string message = raw != nullptr ? raw : "zlib error";
  if (message.rfind(path + ": ", 0) == 0) message = message.substr(path.size() + 2);  // zlib repeats the path
  if (message.find("incorrect data check") != std::string::npos) {
    message += " (its gzip checksum does not match its contents)";
  }
  throw Error(path, "the file is damaged: " + message,
              "Install or download it again (apt-get install --reinstall dataset-fashion-mnist for Debian's copy).");
}

// Reads up to `size` bytes, in chunks because gzread takes an unsigned int length. Returns the
// number read; throws on a decompression error (a corrupt .gz file).
int64_t read_bytes(gzFile file, void* buffer, int64_t size, const std::string& path) {
  constexpr int64_t kChunk = int64_t{1} << 30;
  auto* out = static_cast<char*>(buffer);
  int64_t done = 0;
  while (done < size) {
    const auto want = static_cast<unsigned>(std::min(kChunk, size - done));
    const int got = gzread(file, out + done, want);
    if (got < 0) throw_damaged(file, path);
    if (got == 0) break;
    done += got;
  }
  return done;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

}  // namespace

at::Tensor read_idx(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(path, "the dataset file does not exist", kInstallHint);
  }
  // gzopen reads both gzipped and plain files (it passes plain ones through unchanged).
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) {
    throw Error(path, std::string("cannot open the file: ") + std::strerror(errno), "Check the file's permissions.");
  }
  gzbuffer(file.get(), 1 << 20);  // fewer, larger reads than zlib's 8 KiB default

  const std::string expected_magic =
      "an IDX file starts with the magic bytes 0x00 0x00 <type: 0x08, 0x09, 0x0B, 0x0C, 0x0D or "
      "0x0E> <number of dimensions>";
  std::array<uint8_t, 4> magic{};
  if (read_bytes(file.get(), magic.data(), 4, path) != 4) {
    throw Error(path, "the file is shorter than an IDX header; " + expected_magic,
                "Use an IDX (MNIST-format) file, gzipped or not.");
  }
  ElementType type{};
  if (magic[0] != 0 || magic[1] != 0 || !element_type(magic[2], &type) || magic[3] == 0) {
    char got[32];
    std::snprintf(got, sizeof got, "0x%02X 0x%02X 0x%02X 0x%02X", magic[0], magic[1], magic[2], magic[3]);
    throw Error(path, std::string("not an IDX file: it starts with ") + got + "; " + expected_magic,
                "Use an IDX (MNIST-format) file, gzipped or not.");
  }

  const int rank = magic[3];
  std::vector<uint8_t> header(static_cast<size_t>(rank) * 4);
  if (read_bytes(file.get(), header.data(), static_cast<int64_t>(header.size()), path) !=
      static_cast<int64_t>(header.size())) {
    throw Error(path,
                "the file ends inside its header; expected " + std::to_string(rank) +
                    " big-endian 4-byte dimension sizes after the magic number",
                "The file is truncated: download or install it again.");
  }
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  // Guards the allocation below against a corrupt header announcing an absurd size.
  constexpr int64_t kMaxBytes = int64_t{1} << 40;
  int64_t total_bytes = type.bytes;
  for (int d = 0; d < rank; ++d) {
    const uint8_t* p = header.data() + 4 * d;
    dims[d] = (int64_t{p[0]} << 24) | (int64_t{p[1]} << 16) | (int64_t{p[2]} << 8) | p[3];
    if (dims[d] != 0 && total_bytes > kMaxBytes / dims[d]) {
      throw Error(path, "the header announces an implausibly large tensor " + shape_text(dims),
                  "The file is damaged: download or install it again.");
    }
    total_bytes *= dims[d];
  }

  at::Tensor bytes = at::empty({total_bytes}, at::kByte);
  const int64_t got = read_bytes(file.get(), bytes.data_ptr(), total_bytes, path);
  if (got != total_bytes) {
    throw Error(path,
                "the file ends after " + std::to_string(got) + " of the " + std::to_string(total_bytes) +
                    " data bytes its header announces (shape " + shape_text(dims) + ")",
                "The file is truncated: download or install it again.");
  }
  // Reading on to the end of the stream makes zlib check the gzip trailer (CRC-32 and length):
  // a damaged byte inside the compressed data is caught here, not trained on.
  char extra = 0;
  const int after = gzread(file.get(), &extra, 1);
  if (after < 0) throw_damaged(file.get(), path);
  if (after > 0) {
    throw Error(path,
                "the file holds more data than its header announces (shape " + shape_text(dims) + ", " +
                    std::to_string(total_bytes) + " data bytes)",
                "The file is damaged or not an IDX file: install or download it again.");
  }
  if (type.bytes > 1) {
    // IDX data is big-endian; reverse each element's bytes with one tensor op (x86 and ARM
    // LibTorch builds are little-endian).
    bytes = bytes.view({-1, type.bytes}).flip({1}).contiguous().view({-1});
  }
  return bytes.view(type.dtype).view(dims);
}

}  // namespace trainer::data
