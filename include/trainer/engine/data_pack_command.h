// `trainer data pack`: writes one split of the configured data as WebDataset tar shards, so data
// that trains from a folder, a table or tensor files can be streamed with data=webdataset.
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::engine {

// Config keys: the `data` section (any dataset but webdataset and regression tables), `seed`, and
// `pack.split`, `pack.output` (default <run_dir>/shards/<split>-%06d.tar), `pack.maxcount`,
// `pack.maxsize`, `pack.shuffle`. An image folder's samples keep their files' bytes (<key>.png,
// .jpg, ...); every other dataset's inputs are written as <key>.npy, its dtype and shape as the
// dataset gives them (bfloat16 as float32, NumPy having no bfloat16); labels as <key>.cls.
// Prints the shard spec and the fit command that trains on it. Throws trainer::Error for a dataset
// that cannot be packed, an empty split, a bad pattern, existing shards or a write error.
void pack_shards(const config::Node& job_config, const std::string& run_dir);

}  // namespace trainer::engine
