// Reads IDX files (the MNIST / Fashion-MNIST format: a magic number giving the element type and
// rank, big-endian dimension sizes, then big-endian data), gzipped or raw, of any rank and size.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace trainer::data {

// The file's contents as a CPU tensor shaped by its header, with the dtype its type byte names
// (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64). Throws
// trainer::Error naming the file when it is missing (with how to install Fashion-MNIST), is not
// an IDX file, or ends before the data its header announces.
at::Tensor read_idx(const std::string& path);

}  // namespace trainer::data
