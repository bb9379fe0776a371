#include "trainer/formats/array_file.h"

#include <cstring>
#include <limits>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "trainer/util/error.h"

namespace trainer::formats {
namespace {

// product(shape) x element size, or false when a dimension is negative or the product overflows.
bool byte_count(const std::vector<int64_t>& shape, size_t element, size_t& bytes) {
  bytes = element;
  for (const int64_t dim : shape) {
    if (dim < 0) return false;
    if (dim != 0 && bytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(dim)) return false;
    bytes *= static_cast<size_t>(dim);
  }
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// NumPy's dtype string -> safetensors' name; empty when unsupported.
std::string npy_dtype(const std::string& descr) {
  static const std::map<std::string, std::string> names = {
      {"|u1", "U8"},  {"<u1", "U8"},  {"|i1", "I8"},  {"<i1", "I8"},  {"<i2", "I16"},  {"<i4", "I32"},
      {"<i8", "I64"}, {"<f2", "F16"}, {"<f4", "F32"}, {"<f8", "F64"}, {"|b1", "BOOL"}, {"<b1", "BOOL"},
  };
  std::string little = descr;
  if (!little.empty() && little[0] == '=') little[0] = '<';  // native order: little-endian on this machine
  const auto found = names.find(little);
  return found == names.end() ? std::string() : found->second;
}

// The value of 'name' in the header's Python dict literal, up to the next top-level comma.
bool dict_value(std::string_view header, std::string_view name, std::string_view& value) {
  const std::string quoted = "'" + std::string(name) + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return false;
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return false;
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  size_t end = at;
  if (end < header.size() && (header[end] == '(' || header[end] == '[')) {
    end = header.find(header[end] == '(' ? ')' : ']', end);
    if (end == std::string_view::npos) return false;
    ++end;
  } else if (end < header.size() && (header[end] == '\'' || header[end] == '"')) {
    end = header.find(header[at], at + 1);
    if (end == std::string_view::npos) return false;
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  value = header.substr(at, end - at);
  return true;
}

}  // namespace

size_t array_dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"U8", 1},   {"I8", 1},  {"BOOL", 1}, {"I16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"F32", 4},  {"I64", 8}, {"F64", 8},
  };
  const auto found = sizes.find(dtype);
  return found == sizes.end() ? 0 : found->second;
}

ArrayView read_npy(const uint8_t* data, size_t size, const std::string& path, const std::string& key) {
  const auto fail = [&](const std::string& problem, const std::string& fix) {
    throw Error(key, path + ": " + problem, fix);
  };
  const std::string save = "Save it from Python with numpy.save(path, array).";
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0) fail("not a .npy file (no \\x93NUMPY magic)", save);
  const int major = data[6];
  size_t header_length = 0;
  size_t start = 0;
  if (major == 1) {
    header_length = static_cast<size_t>(data[8]) | (static_cast<size_t>(data[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail("ends inside its header", save);
    header_length = static_cast<size_t>(data[8]) | (static_cast<size_t>(data[9]) << 8) |
                    (static_cast<size_t>(data[10]) << 16) | (static_cast<size_t>(data[11]) << 24);
    start = 12;
  } else {
    fail(".npy format version " + std::to_string(major) + " is not one of 1, 2, 3", save);
  }
  if (header_length > size - start) fail("ends inside its header", save);
  const std::string_view header(reinterpret_cast<const char*>(data + start), header_length);

  std::string_view descr, fortran, shape;
  if (!dict_value(header, "descr", descr) || !dict_value(header, "fortran_order", fortran) ||
      !dict_value(header, "shape", shape) || descr.size() < 2) {
    std::string shown(header.substr(0, 120));
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    fail("its header is not a dict of descr, fortran_order and shape: " + shown, save);
  }
  const std::string descr_text(descr.substr(1, descr.size() - 2));
  ArrayView view;
  view.dtype = npy_dtype(descr_text);
  if (view.dtype.empty()) {
    fail("its dtype '" + descr_text + "' is not one trainer reads (uint8, int8, int16, int32, int64, float16, " +
             "float32, float64, bool; little-endian)",
         "Convert it in NumPy: inputs as float32 (numpy.save(path, array.astype('float32'))), class labels as "
         "int64 (array.astype('int64'); text labels to indices first, e.g. numpy.unique(labels, "
         "return_inverse=True)[1]).");
  }
  if (fortran != "True" && fortran != "False") {
    fail("its header's fortran_order is " + std::string(fortran) + ", not True or False", save);
  }
  if (fortran == "True") {
    fail("the array is in Fortran order", "Save a C-ordered copy: numpy.save(path, numpy.ascontiguousarray(array)).");
  }
  // shape: "()" or "(N,)" or "(N, M, ...)"
  std::string dims(shape.substr(1, shape.size() - 2));
  size_t at = 0;
  while (at < dims.size()) {
    while (at < dims.size() && (dims[at] == ' ' || dims[at] == ',')) ++at;
    if (at >= dims.size()) break;
    size_t used = 0;
    long long dim = 0;
    try {
      dim = std::stoll(dims.substr(at), &used);
    } catch (const std::exception&) {
      fail("its shape " + std::string(shape) + " is not a tuple of integers", save);
    }
    view.shape.push_back(static_cast<int64_t>(dim));
    at += used;
  }
  view.offset = start + header_length;
  if (!byte_count(view.shape, array_dtype_size(view.dtype), view.bytes)) {
    fail("its shape " + std::string(shape) + " is impossible", save);
  }
  if (view.bytes > size - view.offset) {
    fail("ends after " + std::to_string(size - view.offset) + " of the " + std::to_string(view.bytes) +
             " data bytes its header announces (" + descr_text + " " + shape_text(view.shape) + "): it is truncated",
         "Save it again; a copy that was cut short cannot be read.");
  }
  return view;
}

std::vector<ArrayView> read_safetensors(const uint8_t* data, size_t size, const std::string& path,
                                        const std::string& key) {
  const auto fail = [&](const std::string& problem, const std::string& fix) {
    throw Error(key, path + ": " + problem, fix);
  };
  const std::string save = "Save it from Python with safetensors' save_file({name: tensor, ...}, path).";
  if (size < 8) fail("too short for a safetensors file", save);
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | data[i];
  if (header_length > size - 8) fail("not a safetensors file (its header length is past the end of the file)", save);
  nlohmann::ordered_json header;
  try {
    header = nlohmann::ordered_json::parse(data + 8, data + 8 + header_length);
  } catch (const nlohmann::json::exception&) {
    fail("not a safetensors file (its header is not JSON)", save);
  }
  if (!header.is_object()) fail("not a safetensors file (its header is not a JSON object)", save);
  const size_t base = 8 + static_cast<size_t>(header_length);
  std::vector<ArrayView> views;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    ArrayView view;
    view.name = name;
    try {
      view.dtype = entry.at("dtype").get<std::string>();
      view.shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto& offsets_json = entry.at("data_offsets");
      if (!offsets_json.is_array() || offsets_json.size() != 2 || !offsets_json[0].is_number_unsigned() ||
          !offsets_json[1].is_number_unsigned()) {
        fail("tensor '" + name + "' has bad data_offsets (two byte offsets, begin and end, are needed)", save);
      }
      const auto offsets = offsets_json.get<std::vector<uint64_t>>();
      if (offsets[1] < offsets[0]) fail("tensor '" + name + "' has bad data_offsets", save);
      view.offset = base + static_cast<size_t>(offsets[0]);
      if (offsets[1] > size - base) {
        fail("ends before the data of tensor '" + name + "': the file is truncated",
             "Save it again; a copy that was cut short cannot be read.");
      }
      const size_t element = array_dtype_size(view.dtype);
      if (element == 0) {
        fail("tensor '" + name + "' is of dtype " + view.dtype +
                 ", not one trainer reads (U8, I8, I16, I32, I64, F16, BF16, F32, F64, BOOL)",
             "Convert it before saving, e.g. tensor.float().");
      }
      if (!byte_count(view.shape, element, view.bytes)) {
        fail("tensor '" + name + "' has an impossible shape " + shape_text(view.shape), save);
      }
      if (view.bytes != offsets[1] - offsets[0]) {
        fail("tensor '" + name + "' has " + std::to_string(offsets[1] - offsets[0]) + " data bytes, not the " +
                 std::to_string(view.bytes) + " of " + view.dtype + " " + shape_text(view.shape),
             save);
      }
    } catch (const nlohmann::json::exception&) {
      fail("tensor '" + name + "' lacks dtype, shape or data_offsets", save);
    }
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace trainer::formats
