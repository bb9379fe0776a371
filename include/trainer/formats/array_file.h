// The arrays Python users save: NumPy's .npy (format versions 1 to 3) and Hugging Face's
// safetensors. Only the headers are read: what each array is (dtype, shape) and where its bytes
// lie in the file, so that the caller can map the file and use the bytes in place. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainer::formats {

struct ArrayView {
  std::string name;            // safetensors: the tensor's name; .npy: empty
  std::string dtype;           // safetensors' names: U8, I8, I16, I32, I64, F16, BF16, F32, F64, BOOL
  std::vector<int64_t> shape;  // row-major (C order); {} for a scalar
  size_t offset = 0;           // of the first byte, from the start of the file
  size_t bytes = 0;            // product(shape) x the dtype's size
};

// The one array of the .npy file `path` whose `size` bytes are `data`. Throws trainer::Error at
// `key` (the config key that named the file) when the bytes are not a .npy file, when the array
// is Fortran-ordered, big-endian or of a dtype other than those above (saying how to convert it
// in NumPy), or when the file ends before the data its header announces.
ArrayView read_npy(const uint8_t* data, size_t size, const std::string& path, const std::string& key);

// The tensors of the safetensors file `path`, in the header's order. Throws trainer::Error at `key`
// for a header that is not safetensors' JSON, a dtype other than those above, data offsets that
// do not match a tensor's shape, or a file that ends before its data.
std::vector<ArrayView> read_safetensors(const uint8_t* data, size_t size, const std::string& path,
                                        const std::string& key);

// Bytes per element of one of the dtypes above; 0 for any other name.
size_t array_dtype_size(const std::string& dtype);

}  // namespace trainer::formats
