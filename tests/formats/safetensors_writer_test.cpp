#include "trainer/formats/safetensors_writer.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainer/util/error.h"

namespace fs = std::filesystem;
using trainer::formats::SafetensorsTensor;
using trainer::formats::write_safetensors;

namespace {

struct TempFile {
  fs::path dir;
  TempFile() {
    std::string pattern = (fs::temp_directory_path() / "safetensors_test_XXXXXX").string();
    dir = mkdtemp(pattern.data());
  }
  ~TempFile() { fs::remove_all(dir); }
  std::string path() const { return (dir / "weights.safetensors").string(); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Parsed {
  uint64_t header_length = 0;
  nlohmann::json header;
  std::string data;
};

Parsed parse(const std::string& file) {
  Parsed parsed;
  REQUIRE(file.size() >= 8);
  for (int i = 0; i < 8; ++i) parsed.header_length |= uint64_t(uint8_t(file[i])) << (8 * i);
  REQUIRE(file.size() >= 8 + parsed.header_length);
  parsed.header = nlohmann::json::parse(file.substr(8, parsed.header_length));
  parsed.data = file.substr(8 + parsed.header_length);
  return parsed;
}

template <typename T>
SafetensorsTensor tensor(std::string name, std::string dtype, std::vector<int64_t> shape,
                         const std::vector<T>& values) {
  return {std::move(name), std::move(dtype), std::move(shape), values.data(), values.size() * sizeof(T)};
}

}  // namespace

TEST_CASE("safetensors: header, offsets and data read back", "[formats]") {
  TempFile file;
  const std::vector<float> weight{1.0f, -2.5f, 3.25f, 0.0f, 7.0f, 8.5f};
  const std::vector<float> bias{0.5f};  // odd number of floats before an I64: tests alignment
  const std::vector<int64_t> steps{12345678901};
  const std::vector<double> scale{0.125, 2.0};
  const std::vector<uint8_t> flags{1, 0, 1};
  write_safetensors(file.path(),
                    {tensor("net.0.weight", "F32", {2, 3}, weight), tensor("net.0.bias", "F32", {1}, bias),
                     tensor("bn.num_batches_tracked", "I64", {}, steps), tensor("scale", "F64", {2}, scale),
                     tensor("mask", "BOOL", {3}, flags)},
                    {{"format", "pt"}, {"trainer_epoch", "3"}});

  CHECK_FALSE(fs::exists(file.path() + ".tmp"));
  const Parsed parsed = parse(read_file(file.path()));
  CHECK(parsed.header_length % 8 == 0);
  CHECK(parsed.header["__metadata__"] == nlohmann::json({{"format", "pt"}, {"trainer_epoch", "3"}}));
  CHECK(parsed.header.size() == 6);

  // Offsets cover the data exactly, without gaps, and every tensor is aligned to its element size.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : parsed.header.items()) {
    if (name == "__metadata__") continue;
    const uint64_t begin = entry["data_offsets"][0];
    const uint64_t end = entry["data_offsets"][1];
    INFO(name);
    CHECK(begin % trainer::formats::safetensors_dtype_size(entry["dtype"]) == 0);
    ranges.emplace_back(begin, end);
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t position = 0;
  for (const auto& [begin, end] : ranges) {
    CHECK(begin == position);
    position = end;
  }
  CHECK(position == parsed.data.size());

  const auto& w = parsed.header["net.0.weight"];
  CHECK(w["dtype"] == "F32");
  CHECK(w["shape"] == nlohmann::json::array({2, 3}));
  const uint64_t w_begin = w["data_offsets"][0];
  CHECK(uint64_t(w["data_offsets"][1]) - w_begin == weight.size() * sizeof(float));
  CHECK(std::memcmp(parsed.data.data() + w_begin, weight.data(), weight.size() * sizeof(float)) == 0);

  const auto& s = parsed.header["bn.num_batches_tracked"];
  CHECK(s["dtype"] == "I64");
  CHECK(s["shape"] == nlohmann::json::array());
  int64_t step = 0;
  std::memcpy(&step, parsed.data.data() + uint64_t(s["data_offsets"][0]), sizeof(step));
  CHECK(step == 12345678901);

  const auto& m = parsed.header["mask"];
  CHECK(parsed.data.substr(uint64_t(m["data_offsets"][0]), 3) == std::string("\x01\x00\x01", 3));
}

TEST_CASE("safetensors: no metadata and no tensors still make a valid file", "[formats]") {
  TempFile file;
  write_safetensors(file.path(), {}, {});
  const Parsed parsed = parse(read_file(file.path()));
  CHECK(parsed.header == nlohmann::json::object());
  CHECK(parsed.data.empty());
  CHECK(parsed.header_length % 8 == 0);
}

TEST_CASE("safetensors: bad tensors are refused before anything is written", "[formats]") {
  TempFile file;
  const std::vector<float> four(4, 1.0f);
  auto refused = [&](const std::vector<SafetensorsTensor>& tensors, const std::string& problem) {
    try {
      write_safetensors(file.path(), tensors, {});
      FAIL("no error for: " << problem);
    } catch (const trainer::Error& e) {
      INFO(e.what());
      CHECK(e.problem().find(problem) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(file.path()));
    CHECK_FALSE(fs::exists(file.path() + ".tmp"));
  };
  refused({tensor("a", "F32", {2, 3}, four)}, "need 6 x 4");
  refused({tensor("a", "F64", {4}, four)}, "need 4 x 8");
  refused({tensor("a", "F32", {4}, four), tensor("a", "F32", {2, 2}, four)}, "two tensors");
  refused({tensor("a", "F31", {4}, four)}, "unknown dtype 'F31'");
  refused({tensor("", "F32", {4}, four)}, "empty name");
  refused({tensor("__metadata__", "F32", {4}, four)}, "reserved");
  refused({tensor("a", "F32", {-4}, four)}, "negative");
}

TEST_CASE("safetensors: an unwritable path is a trainer::Error naming it", "[formats]") {
  const std::vector<float> one{1.0f};
  const std::string path = "/nonexistent-dir/weights.safetensors";
  try {
    write_safetensors(path, {tensor("a", "F32", {1}, one)}, {});
    FAIL("no error");
  } catch (const trainer::Error& e) {
    CHECK(e.where() == path);
  }
}
