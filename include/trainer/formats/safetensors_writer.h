#pragma once
// safetensors files (Hugging Face's format: 8-byte little-endian header length, a JSON header,
// raw little-endian tensor bytes), written without LibTorch so Python's `safetensors` and `torch`
// read trainer's weights directly.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trainer::formats {

// One tensor to write: contiguous, row-major, little-endian bytes owned by the caller.
struct SafetensorsTensor {
  std::string name;            // e.g. "net.0.weight"
  std::string dtype;           // F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, ...
  std::vector<int64_t> shape;  // {} for a scalar
  const void* data = nullptr;
  size_t bytes = 0;  // must equal product(shape) * dtype size
};

// Bytes per element of a safetensors dtype; throws trainer::Error for unknown names.
size_t safetensors_dtype_size(const std::string& dtype);

// Writes `tensors` and string `metadata` (the header's "__metadata__") to `path` atomically:
// `<path>.tmp`, flushed to disk, renamed. The JSON header is padded with spaces to a multiple of 8
// and the tensors are laid out widest dtype first (as Python's writer does), so every tensor's
// data is aligned to its element size. Throws trainer::Error, before anything is written, for
// empty or duplicate names, unknown dtypes, negative dimensions or a byte count that does not
// match the shape; and when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata);

// `values` as a JSON array of strings, for a metadata value that holds a list (the class names).
std::string json_string_array(const std::vector<std::string>& values);

}  // namespace trainer::formats
