// data=tensors: arrays saved from Python, NumPy's .npy or safetensors files, memory-mapped. The
// inputs file holds the samples along dimension 0 (any dtype of formats/array_file.h; uint8 is
// taken as pixels and normalised on the [0, 1] scale, the rest cast to float32 per batch on the
// device); the targets file one integer class per sample. Opening costs no RAM: the splits are
// views of the mapped files and a batch reads only its own rows.
#pragma once

#include <string>

#include <c10/core/ScalarType.h>

#include "trainer/data/data_options.h"
#include "trainer/data/datasets.h"

namespace trainer::data {

// Train and validation from data.inputs / data.targets (a seeded data.val_fraction of the rows
// held out, as for every dataset), test from data.test_inputs / data.test_targets (empty when they
// are null). Throws trainer::Error naming the key and the file for a missing or unreadable file, a
// tensor name the file does not hold, inputs and targets of different lengths, targets that are
// not integer class indices (or fall outside data.num_classes), and test inputs whose sample shape
// differs from the training inputs'.
DataSplits load_tensor_files(const DataOptions& options);

// The LibTorch type of formats::ArrayView's dtype names (U8, I64, F16, BF16, F32, ...).
at::ScalarType array_scalar_type(const std::string& dtype);

}  // namespace trainer::data
