#include "trainer/formats/array_file.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/formats/safetensors_writer.h"
#include "trainer/util/error.h"

using Catch::Matchers::Contains;
using trainer::formats::ArrayView;
using trainer::formats::read_npy;
using trainer::formats::read_safetensors;

namespace {

// A .npy file's bytes: magic, version, little-endian header length (2 bytes for 1.0, 4 for 2.0),
// the header, the data.
std::string npy(const std::string& header, const std::string& data, int version = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const size_t length = header.size();
  out += static_cast<char>(length & 0xff);
  out += static_cast<char>((length >> 8) & 0xff);
  if (version >= 2) {
    out += static_cast<char>((length >> 16) & 0xff);
    out += static_cast<char>((length >> 24) & 0xff);
  }
  return out + header + data;
}

ArrayView npy_view(const std::string& bytes) {
  return read_npy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "a.npy", "data.inputs");
}

std::string npy_error(const std::string& bytes) {
  try {
    npy_view(bytes);
  } catch (const trainer::Error& e) {
    CHECK(e.where() == "data.inputs");
    return e.problem() + " | " + e.fix();
  }
  FAIL("no error");
  return "";
}

std::vector<ArrayView> safetensors_views(const std::string& bytes) {
  return read_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "a.safetensors", "data.inputs");
}

std::string safetensors_error(const std::string& bytes) {
  try {
    safetensors_views(bytes);
  } catch (const trainer::Error& e) {
    return e.problem();
  }
  FAIL("no error");
  return "";
}

std::string with_header(const std::string& json, const std::string& data) {
  std::string out;
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i, length >>= 8) out += static_cast<char>(length & 0xff);
  return out + json + data;
}

}  // namespace

TEST_CASE("read_npy: the array numpy.save describes, for format versions 1 and 2", "[formats]") {
  const std::string data(2 * 3 * 4, '\x01');
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n";
  for (const int version : {1, 2}) {
    const ArrayView view = npy_view(npy(header, data, version));
    CHECK(view.dtype == "F32");
    CHECK(view.shape == std::vector<int64_t>{2, 3});
    CHECK(view.offset == (version == 1 ? 10u : 12u) + header.size());
    CHECK(view.bytes == 24u);
  }
  // One dimension ("(5,)"), native order ('='), bytes, bool and a scalar ("()").
  CHECK(npy_view(npy("{'descr': '=i8', 'fortran_order': False, 'shape': (5,), }\n", std::string(40, '\0'))).shape ==
        std::vector<int64_t>{5});
  CHECK(npy_view(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4, 1), }\n", "abcd")).dtype == "U8");
  CHECK(
      npy_view(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", std::string("\x01\x00", 2))).dtype ==
      "BOOL");
  const ArrayView scalar = npy_view(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", "12345678"));
  CHECK(scalar.shape.empty());
  CHECK(scalar.bytes == 8u);
  // Keys in another order, as older NumPy versions wrote them.
  CHECK(npy_view(npy("{'shape': (3,), 'fortran_order': False, 'descr': '<i2'}\n", "aabbcc")).dtype == "I16");
}

TEST_CASE("read_npy refuses what it cannot use in place, saying how to convert it", "[formats]") {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  CHECK_THAT(npy_error("PK\x03\x04 not numpy"), Contains("not a .npy file"));
  CHECK_THAT(npy_error(npy(ok, "1234")), Contains("ends after 4 of the 8 data bytes"));
  CHECK_THAT(npy_error(npy(ok, "12345678", 4)), Contains("format version 4"));
  CHECK_THAT(npy_error(npy(ok, "", 1).substr(0, 30)), Contains("ends inside its header"));
  CHECK_THAT(npy_error(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", "12345678")),
             Contains("numpy.ascontiguousarray"));
  CHECK_THAT(npy_error(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }\n", "12345678")),
             Contains("fortran_order is Maybe, not True or False"));
  CHECK_THAT(npy_error(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", "12345678")),
             Contains("'>f4' is not one trainer reads"));
  CHECK_THAT(npy_error(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", "12345678")),
             Contains("is not one trainer reads"));
  CHECK_THAT(npy_error(npy("{'descr': '<f4', 'shape': (2,), }\n", "12345678")),
             Contains("not a dict of descr, fortran_order and shape"));
  CHECK_THAT(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (two,), }\n", "12345678")),
             Contains("not a tuple of integers"));
  CHECK_THAT(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", "12345678")),
             Contains("is impossible"));
  CHECK_THAT(npy_error(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n", "")),
             Contains("is impossible"));
}

TEST_CASE("read_safetensors reads back what trainer's safetensors writer wrote", "[formats]") {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("array_file_test_" + std::to_string(::getpid()) + ".safetensors");
  const std::vector<float> weights = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const std::vector<int32_t> labels = {7, 8};
  trainer::formats::write_safetensors(
      path.string(),
      {{"w", "F32", {2, 3}, weights.data(), weights.size() * 4}, {"labels", "I32", {2}, labels.data(), 8}},
      {{"note", "kept"}});
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  const std::vector<ArrayView> views = safetensors_views(bytes);
  REQUIRE(views.size() == 2);  // __metadata__ is no tensor
  std::map<std::string, ArrayView> by_name;
  for (const ArrayView& view : views) by_name[view.name] = view;
  REQUIRE(by_name.count("w") == 1);
  CHECK(by_name["w"].shape == std::vector<int64_t>{2, 3});
  CHECK(by_name["w"].bytes == 24u);
  float third = 0.0f;
  std::memcpy(&third, bytes.data() + by_name["w"].offset + 8, 4);
  CHECK(third == 3.0f);
  int32_t second = 0;
  std::memcpy(&second, bytes.data() + by_name["labels"].offset + 4, 4);
  CHECK(second == 8);
}

TEST_CASE("read_safetensors refuses broken headers and data", "[formats]") {
  CHECK_THAT(safetensors_error("1234"), Contains("too short"));
  CHECK_THAT(safetensors_error(with_header("{", "")), Contains("not JSON"));
  CHECK_THAT(safetensors_error(with_header("[1]", "")), Contains("not a JSON object"));
  CHECK_THAT(safetensors_error(std::string("\xff\xff\xff\xff\x00\x00\x00\x00{}", 10)), Contains("past the end"));
  CHECK_THAT(safetensors_error(with_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "1234")),
             Contains("ends before the data of tensor 'x'"));
  CHECK_THAT(safetensors_error(with_header(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "12345678")),
             Contains("has 8 data bytes, not the 12 of F32 [3]"));
  CHECK_THAT(safetensors_error(with_header(R"({"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", "12345678")),
             Contains("dtype C64"));
  CHECK_THAT(safetensors_error(with_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0.5,8]}})", "12345678")),
             Contains("bad data_offsets"));
  CHECK_THAT(safetensors_error(with_header(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "12345678")),
             Contains("impossible shape [-2]"));
  CHECK_THAT(safetensors_error(with_header(R"({"x":{"dtype":"F32","shape":[2]}})", "12345678")),
             Contains("lacks dtype, shape or data_offsets"));
}
