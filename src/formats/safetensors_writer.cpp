#include "trainer/formats/safetensors_writer.h"

#include <algorithm>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"

namespace trainer::formats {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors stores little-endian data; this writer copies memory as it is");

const std::map<std::string, size_t>& dtype_sizes() {
  static const std::map<std::string, size_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  return sizes;
}

// Checks every tensor and returns the order their bytes go in: widest dtype first, stable.
std::vector<size_t> checked_layout(const std::vector<SafetensorsTensor>& tensors) {
  std::set<std::string> names;
  for (const SafetensorsTensor& t : tensors) {
    const std::string where = "safetensors tensor '" + t.name + "'";
    if (t.name.empty()) throw Error("safetensors tensor", "a tensor has an empty name", "Name every tensor.");
    if (t.name == "__metadata__") {
      throw Error(where, "the name __metadata__ is reserved for the header's metadata", "Rename the tensor.");
    }
    if (!names.insert(t.name).second) {
      throw Error(where, "two tensors have this name", "Give every tensor a unique name.");
    }
    const size_t element = safetensors_dtype_size(t.dtype);
    size_t count = 1;
    for (int64_t dim : t.shape) {
      if (dim < 0) throw Error(where, "has a negative dimension", "Shapes hold sizes >= 0.");
      if (__builtin_mul_overflow(count, static_cast<size_t>(dim), &count)) {
        throw Error(where, "its shape holds more elements than fit in memory");
      }
    }
    size_t expected = 0;
    if (__builtin_mul_overflow(count, element, &expected) || expected != t.bytes) {
      throw Error(where,
                  "has " + std::to_string(t.bytes) + " bytes, but its shape and dtype " + t.dtype + " need " +
                      std::to_string(count) + " x " + std::to_string(element),
                  "Pass the contiguous data of exactly this shape.");
    }
    if (t.bytes > 0 && t.data == nullptr) throw Error(where, "has no data pointer");
  }
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return safetensors_dtype_size(tensors[a].dtype) > safetensors_dtype_size(tensors[b].dtype);
  });
  return order;
}

// The 8-byte length and the JSON header, padded with spaces to a multiple of 8.
std::string header_bytes(const std::vector<SafetensorsTensor>& tensors, const std::vector<size_t>& order,
                         const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  size_t offset = 0;
  for (size_t index : order) {
    const SafetensorsTensor& t = tensors[index];
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return out + json;
}

}  // namespace

size_t safetensors_dtype_size(const std::string& dtype) {
  auto found = dtype_sizes().find(dtype);
  if (found == dtype_sizes().end()) {
    std::string known;
    for (const auto& entry : dtype_sizes()) known += (known.empty() ? "" : ", ") + entry.first;
    throw Error("safetensors dtype", "unknown dtype '" + dtype + "'", "Use one of " + known + ".");
  }
  return found->second;
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::vector<size_t> order = checked_layout(tensors);
  const std::string header = header_bytes(tensors, order, metadata);

  AtomicWriteOptions options;
  options.noun = "safetensors file";
  AtomicFile file(path, options);
  file.append(header);
  for (size_t index : order) file.append(tensors[index].data, tensors[index].bytes);
  file.commit();
}

std::string json_string_array(const std::vector<std::string>& values) {
  // A name that is not UTF-8 (folder names are bytes) gets U+FFFD instead of failing the export.
  return nlohmann::json(values).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace trainer::formats
