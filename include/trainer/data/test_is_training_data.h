// The warning that a test split is the very file trained on: its metrics then say how well the
// model fits the data, not how it does on data it has not seen.
#pragma once

#include <string>

namespace trainer::data {

// What the two files are: keys, the kind of file and what it holds.
struct TestAndTraining {
  std::string test_key;   // "data.test_path"
  std::string train_key;  // "data.path"
  std::string file;       // "table" or "file"
  std::string items;      // "rows" or "samples"
  std::string held_out;   // the fix: "a table of held-out rows"
};

// Warns when `test` and `training` name one file (same_file: links and other spellings too).
// `checkpoint`: the training file is the one a checkpoint was trained on, not this run's.
void warn_if_test_is_training_data(const TestAndTraining& keys, const std::string& test, const std::string& training,
                                   bool checkpoint);

}  // namespace trainer::data
