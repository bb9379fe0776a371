// data=csv: a table with a header row, one sample per row (formats/csv_table.h reads it). The
// inputs are the feature columns as float32: numbers standardised with the train split's mean and
// standard deviation, categories one-hot. The labels are integer class indices or class names
// (sorted, as scikit-learn's LabelEncoder orders them). How records become inputs (the columns,
// categories, statistics and classes) is the dataset's encoding(), kept in every checkpoint: a
// checkpoint's encoding (DataOptions::encoding) is used as it is, so validate, test, predict and a
// resumed fit encode rows exactly as the training did.
#pragma once

#include <memory>

#include "trainer/data/data_options.h"
#include "trainer/data/dataset.h"
#include "trainer/data/datasets.h"

namespace trainer::data {

// Train and validation from data.path (a seeded data.val_fraction of the rows held out), test from
// data.test_path (empty when null). Throws trainer::Error naming the key and file:line:column for
// a bad cell, and the key for a column the table lacks or a feature list that names the target.
DataSplits load_csv(const DataOptions& options);

// The rows of data.test_path to predict, encoded by `options.encoding` (a checkpoint's). Its target
// column may be absent: the rows' targets are then -1 (unknown).
std::shared_ptr<const Dataset> load_csv_to_predict(const DataOptions& options);

}  // namespace trainer::data
