#include "trainer/data/csv_dataset.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "trainer/config/did_you_mean.h"
#include "trainer/data/missing_classes.h"
#include "trainer/data/tensor_dataset.h"
#include "trainer/data/test_is_training_data.h"
#include "trainer/formats/crc32c.h"
#include "trainer/formats/csv_table.h"
#include "trainer/util/error.h"
#include "trainer/util/fixed_text.h"
#include "trainer/util/home_path.h"
#include "trainer/util/log.h"
#include "trainer/util/mapped_file.h"

namespace trainer::data {
namespace {

constexpr int kEncodingVersion = 1;

// One input column and how it becomes inputs: a standardised number, or one-hot categories.
struct Feature {
  std::string column;
  bool categorical = false;
  double mean = 0.0;
  double std = 1.0;
  std::vector<std::string> categories;  // categorical: in one-hot order
};

// How a row becomes a sample (the dataset's encoding(), kept in checkpoints).
struct Encoding {
  std::string target;
  std::vector<std::string> classes;  // class names in label order; empty: the labels are indices
  int64_t num_classes = 0;
  std::vector<Feature> features;
  // data.task=regression: the target is a number, learnt as (value - target_mean) / target_std.
  bool regression = false;
  double target_mean = 0.0;
  double target_std = 1.0;
  // data.path when the encoding was fitted: its rows and checksum, so that evaluating a changed
  // table (a validation split that is not the rows training held out) is said.
  int64_t table_rows = -1;
  uint32_t table_crc32c = 0;

  int64_t width() const {
    int64_t width = 0;
    for (const Feature& f : features) width += f.categorical ? static_cast<int64_t>(f.categories.size()) : 1;
    return width;
  }

  std::string to_json() const {
    nlohmann::json json;
    json["format"] = "trainer.csv";
    json["version"] = kEncodingVersion;
    json["target"] = target;
    json["classes"] = classes;
    json["num_classes"] = num_classes;
    json["task"] = regression ? "regression" : "classification";
    if (regression) {
      json["target_mean"] = target_mean;
      json["target_std"] = target_std;
    }
    if (table_rows >= 0) json["table"] = {{"rows", table_rows}, {"crc32c", table_crc32c}};
    nlohmann::json columns = nlohmann::json::array();
    for (const Feature& f : features) {
      nlohmann::json column = {{"column", f.column}};
      if (f.categorical) {
        column["categories"] = f.categories;
      } else {
        column["mean"] = f.mean;
        column["std"] = f.std;
      }
      columns.push_back(std::move(column));
    }
    json["features"] = std::move(columns);
    return json.dump();
  }

  static Encoding from_json(const std::string& text) {
    Encoding e;
    try {
      const nlohmann::json json = nlohmann::json::parse(text);
      if (json.at("version").get<int>() != kEncodingVersion) throw std::runtime_error("an unknown version");
      e.target = json.at("target").get<std::string>();
      e.classes = json.at("classes").get<std::vector<std::string>>();
      e.num_classes = json.at("num_classes").get<int64_t>();
      e.regression = json.value("task", "classification") == "regression";
      if (e.regression) {
        e.target_mean = json.at("target_mean").get<double>();
        e.target_std = json.at("target_std").get<double>();
      }
      if (json.contains("table")) {
        e.table_rows = json.at("table").at("rows").get<int64_t>();
        e.table_crc32c = json.at("table").at("crc32c").get<uint32_t>();
      }
      for (const nlohmann::json& column : json.at("features")) {
        Feature f;
        f.column = column.at("column").get<std::string>();
        f.categorical = column.contains("categories");
        if (f.categorical) {
          f.categories = column.at("categories").get<std::vector<std::string>>();
        } else {
          f.mean = column.at("mean").get<double>();
          f.std = column.at("std").get<double>();
        }
        e.features.push_back(std::move(f));
      }
    } catch (const std::exception& error) {
      throw Error("ckpt_path", std::string("the checkpoint's table encoding is unreadable: ") + error.what(),
                  "Use a checkpoint written by trainer fit data=csv.");
    }
    return e;
  }
};

std::string listed(const std::vector<std::string>& names, size_t most = 12) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < most; ++i) text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > most) text += ", ... (" + std::to_string(names.size()) + " in all)";
  return text;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The error for a column name `key` gives that the header lacks.
Error no_such_column(const std::string& key, const std::string& name, const std::string& path,
                     const std::vector<std::string>& header) {
  const std::string closest = config::closest_match(name, header);
  // One column whose name holds another delimiter: the table is not separated as it was read.
  if (header.size() == 1) {
    for (const char delimiter : {';', '\t', '|', ','}) {
      if (header.front().find(delimiter) == std::string::npos) continue;
      const std::string shown = delimiter == '\t' ? "\\t" : std::string(1, delimiter);
      return Error(key,
                   path + " has no column '" + name + "': its header reads as one column, '" + header.front() +
                       "', so its cells are not separated by the delimiter it was read with",
                   "Set the delimiter the file uses: \"data.delimiter='" + shown +
                       "'\" (quoted so that the shell keeps the inner quotes).");
    }
  }
  return Error(key,
               path + " has no column '" + name + "'" + (closest.empty() ? "" : "; did you mean '" + closest + "'?"),
               "Its columns: " + listed(header, 30) + ".");
}

// The sorted distinct values of a text column: by value when they are all numbers ("2" < "10"),
// else as text.
// The distinct values of a column, sorted: by value when every one is a number, each number once
// however it is written (`1`, `1.0` and `01` are one category, as pandas reads them: its shortest
// spelling names it); as text otherwise.
std::vector<std::string> distinct_sorted(const std::vector<std::string>& texts) {
  std::vector<std::string> values(texts);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<double> numbers(values.size());
  bool numeric = true;
  for (size_t i = 0; i < values.size() && numeric; ++i) numeric = formats::parse_csv_number(values[i], numbers[i]);
  if (!numeric) return values;
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (numbers[a] != numbers[b]) return numbers[a] < numbers[b];
    return values[a].size() < values[b].size();
  });
  std::vector<std::string> sorted;
  sorted.reserve(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || numbers[order[k]] != numbers[order[k - 1]]) sorted.push_back(values[order[k]]);
  }
  return sorted;
}

// Where a cell's category lies among `categories`: by value when they are all numbers (the cell
// `1.0` is the category `1`), by text otherwise.
class CategoryIndex {
 public:
  explicit CategoryIndex(const std::vector<std::string>& categories) {
    std::vector<double> numbers(categories.size());
    for (size_t i = 0; i < categories.size() && numeric_; ++i) {
      numeric_ = formats::parse_csv_number(categories[i], numbers[i]);
    }
    for (size_t i = 0; i < categories.size(); ++i) {
      if (numeric_) by_value_.emplace(numbers[i], static_cast<int64_t>(i));
      by_text_.emplace(categories[i], static_cast<int64_t>(i));
    }
  }
  // -1: not a category.
  int64_t find(const std::string& cell) const {
    if (numeric_) {
      double value = 0.0;
      if (!formats::parse_csv_number(cell, value)) return -1;
      const auto found = by_value_.find(value);
      return found == by_value_.end() ? -1 : found->second;
    }
    const auto found = by_text_.find(cell);
    return found == by_text_.end() ? -1 : found->second;
  }

 private:
  bool numeric_ = true;
  std::map<double, int64_t> by_value_;
  std::map<std::string, int64_t> by_text_;
};

// A label as a class index, when it is a whole number.
bool class_index(const std::string& text, int64_t& index) {
  double value = 0.0;
  if (!formats::parse_csv_number(text, value) || value != std::floor(value) || std::abs(value) > 9.0e15) return false;
  index = static_cast<int64_t>(value);
  return true;
}

std::string at(const formats::CsvTable& table, const std::string& path, int64_t row, const formats::CsvColumn& c) {
  return path + ":" + std::to_string(table.lines[static_cast<size_t>(row)]) + ":" + std::to_string(c.position + 1) +
         " (" + c.name + ")";
}

// `crc32c` set: the file's CRC-32C is written to it.
formats::CsvTable read_table(
    const std::string& path, const std::string& key, char delimiter,
    const std::function<std::vector<formats::CsvWanted>(const std::vector<std::string>&)>& choose,
    uint32_t* crc32c = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const MappedFile file(expand_home(path), key);
  if (crc32c != nullptr) *crc32c = formats::crc32c(file.data(), file.size());
  formats::CsvTable table = formats::read_csv(file.data(), file.size(), path, key,
                                              delimiter != 0 ? delimiter : formats::csv_delimiter_for(path), choose);
  if (table.rows() == 0) {
    throw Error(key, path + " has a header but no rows", "Give a table with at least one row of data.");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("data: read " + path + ", " + std::to_string(table.rows()) + " rows x " +
            std::to_string(table.header.size()) + " columns (" + fixed_text(static_cast<double>(file.size()) / 1e6, 1) +
            " MB) in " + fixed_text(seconds, 2) + " s");
  return table;
}

// A regression's target cell that is not a number: the target is not a category input.
const TestAndTraining kTestTable{"data.test_path", "data.path", "table", "rows", "a table of held-out rows"};

const char* const kRegressionTargetFix =
    "The target of data.task=regression must hold numbers: correct the cell, or, for a target of class names, "
    "set data.task=classification.";

// The columns to read for `encoding`. When predicting, the target is optional: the column may be
// absent, and a row's cell empty (a row of unknown class, or value).
std::vector<formats::CsvWanted> wanted_for(const Encoding& encoding, bool target_optional) {
  std::vector<formats::CsvWanted> wanted;
  for (const Feature& f : encoding.features) {
    wanted.push_back({f.column, f.categorical ? formats::CsvKind::kText : formats::CsvKind::kNumber, false});
  }
  wanted.push_back({encoding.target, encoding.regression ? formats::CsvKind::kNumber : formats::CsvKind::kText,
                    target_optional, target_optional, kRegressionTargetFix});
  return wanted;
}

const formats::CsvColumn* column_named(const formats::CsvTable& table, const std::string& name) {
  for (const formats::CsvColumn& c : table.columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The inputs [rows, width] of `table` under `encoding`: numbers standardised, categories one-hot.
at::Tensor encode_inputs(const formats::CsvTable& table, const Encoding& encoding, const std::string& path,
                         const std::string& key) {
  const int64_t rows = table.rows();
  const int64_t width = encoding.width();
  at::Tensor inputs = at::zeros({rows, width}, at::kFloat);
  float* out = inputs.data_ptr<float>();
  // The numbers row by row (the table keeps them so): where each goes, its mean and std.
  struct Place {
    size_t slot;
    int64_t offset;
    double mean, std;
  };
  std::vector<Place> places;
  int64_t offset = 0;
  for (const Feature& f : encoding.features) {
    if (!f.categorical) places.push_back({column_named(table, f.column)->number_slot, offset, f.mean, f.std});
    offset += f.categorical ? static_cast<int64_t>(f.categories.size()) : 1;
  }
  const size_t stride = table.number_width;
  for (int64_t r = 0; r < rows; ++r) {
    const double* cells = table.numbers.data() + static_cast<size_t>(r) * stride;
    float* row = out + r * width;
    // In double: a timestamp's seconds survive (value - mean) / std; in float32 they would not.
    for (const Place& p : places) row[p.offset] = static_cast<float>((cells[p.slot] - p.mean) / p.std);
  }
  offset = 0;
  for (const Feature& f : encoding.features) {
    const formats::CsvColumn& c = *column_named(table, f.column);
    if (!f.categorical) {
      offset += 1;
      continue;
    }
    const CategoryIndex index(f.categories);
    for (int64_t r = 0; r < rows; ++r) {
      const std::string& value = c.texts[static_cast<size_t>(r)];
      if (formats::is_csv_missing(value)) {
        throw Error(key,
                    at(table, path, r, c) + ": the cell is '" + value + "' (a missing value) in a column of categories",
                    "Fill it with a category of its own (e.g. 'unknown', df.fillna in pandas), or drop the rows that "
                    "lack it; missing values are not imputed.");
      }
      const int64_t found = index.find(value);
      if (found < 0) {
        throw Error(key,
                    at(table, path, r, c) + ": category '" + value + "' is not one of the " +
                        std::to_string(f.categories.size()) + " the model was trained on (" + listed(f.categories) +
                        ")",
                    "Map it to one of them, or drop the row; a model learns nothing for a category it never saw.");
      }
      out[r * width + offset + found] = 1.0F;
    }
    offset += static_cast<int64_t>(f.categories.size());
  }
  return inputs;
}

// A regression's targets as the table holds them (float32; NaN for every row without a target column).
at::Tensor regression_target_values(const formats::CsvTable& table, const Encoding& encoding) {
  const int64_t rows = table.rows();
  at::Tensor values = at::full({rows}, std::nan(""), at::kFloat);
  const formats::CsvColumn* c = column_named(table, encoding.target);
  if (c == nullptr) return values;
  float* out = values.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) out[r] = static_cast<float>(table.number(r, *c));
  return values;
}

// The same scaled as the encoding says (in float64, then float32), as the model learns them.
at::Tensor encode_regression_targets(const formats::CsvTable& table, const Encoding& encoding) {
  const at::Tensor values = regression_target_values(table, encoding).to(at::kDouble);
  return ((values - encoding.target_mean) / encoding.target_std).to(at::kFloat);
}

// The labels of `table` under `encoding` as int64 class indices (-1 for every row when the table
// has no target column and `target_optional`, and for a row whose cell is empty); a regression's
// values as float32 (NaN where unknown).
at::Tensor encode_targets(const formats::CsvTable& table, const Encoding& encoding, const std::string& path,
                          const std::string& key, bool training) {
  if (encoding.regression) return encode_regression_targets(table, encoding);
  const int64_t rows = table.rows();
  at::Tensor targets = at::full({rows}, -1, at::kLong);
  const formats::CsvColumn* c = column_named(table, encoding.target);
  if (c == nullptr) return targets;
  int64_t* out = targets.data_ptr<int64_t>();
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < encoding.classes.size(); ++i) index.emplace(encoding.classes[i], static_cast<int64_t>(i));
  for (int64_t r = 0; r < rows; ++r) {
    const std::string& value = c->texts[static_cast<size_t>(r)];
    // A prediction's row of unknown class (CsvWanted::missing_cells): an empty cell or pandas' words
    // for a missing value (NA, nan, null), which are never a label (fit_classes refuses them): -1.
    if (value.empty() || (c->missing_cells && formats::is_csv_missing(value))) continue;
    if (!encoding.classes.empty()) {
      const auto found = index.find(value);
      if (found == index.end()) {
        throw Error(key,
                    at(table, path, r, *c) + ": label '" + value + "' is not one of the " +
                        std::to_string(encoding.classes.size()) + " classes the model knows (" +
                        listed(encoding.classes) + ")",
                    "Give only labels of the training table's classes.");
      }
      out[r] = found->second;
      continue;
    }
    int64_t label = 0;
    if (!class_index(value, label)) {
      throw Error(key, at(table, path, r, *c) + ": label '" + value + "' is not a class index like the training labels",
                  "Give the labels as the training table does (whole numbers 0 .. " +
                      std::to_string(encoding.num_classes - 1) + ").");
    }
    if (label < 0 || label >= encoding.num_classes) {
      throw Error(key,
                  at(table, path, r, *c) + ": label " + std::to_string(label) + " is outside the " +
                      std::to_string(encoding.num_classes) + " classes 0 .. " +
                      std::to_string(encoding.num_classes - 1),
                  label < 0  ? std::string("Class indices start at 0: map the labels to 0 .. classes - 1.")
                  : training ? std::string("Set data.num_classes to the number of classes, or null to take the largest "
                                           "label + 1.")
                             : std::string("The labels must be among the training classes."));
    }
    out[r] = label;
  }
  return targets;
}

// The columns to read from the training table's header, fitting the encoding's column list.
std::vector<formats::CsvWanted> choose_columns(const DataOptions& options, const std::vector<std::string>& header,
                                               Encoding& encoding) {
  if (!contains(header, options.target)) throw no_such_column("data.target", options.target, options.path, header);
  std::vector<std::string> features = options.features;
  if (features.empty()) {
    // Leading columns without a header name are a row index (pandas' DataFrame.to_csv writes its
    // index so, and a table read and written again gets another): as an input it tells the model
    // the row's position, which a table sorted by class gives away. Left out unless listed.
    std::vector<std::string> index_columns;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& name = header[i];
      if (name == options.target) continue;
      if (index_columns.size() == i && name == "Unnamed: " + std::to_string(i)) {
        index_columns.push_back(name);
      } else {
        features.push_back(name);
      }
    }
    if (features.empty()) {
      features = index_columns;  // nothing else to learn from: kept
    } else if (!index_columns.empty()) {
      log::warning("data.features: " + options.path + "'s first column" +
                   (index_columns.size() > 1 ? "s have" : " has") + " no name in the header (" +
                   listed(index_columns, 4) +
                   "): a row index, as pandas' to_csv writes it, left out of the inputs; to train on " +
                   (index_columns.size() > 1 ? "them" : "it") + ", list the input columns in data.features");
    }
    if (features.empty()) {
      throw Error("data.path", options.path + " has one column, the target '" + options.target + "': no input",
                  "Give a table with input columns beside the label column.");
    }
  }
  for (size_t i = 0; i < features.size(); ++i) {
    if (!contains(header, features[i])) throw no_such_column("data.features", features[i], options.path, header);
    if (features[i] == options.target) {
      throw Error("data.features", "lists the target column '" + options.target + "' as an input",
                  "Leave it out of data.features: a model must not see the label it predicts.");
    }
    for (size_t j = 0; j < i; ++j) {
      if (features[j] == features[i]) {
        throw Error("data.features", "lists the column '" + features[i] + "' twice", "List each input column once.");
      }
    }
  }
  for (const std::string& name : options.categorical) {
    if (!contains(features, name)) {
      const std::string closest = contains(header, name) ? "" : config::closest_match(name, features);
      throw Error("data.categorical",
                  "names '" + name + "', which is not an input column" +
                      (name == options.target   ? std::string(" (it is the target, not an input)")
                       : contains(header, name) ? " (data.features leaves it out)"
                                                : " of " + options.path) +
                      (closest.empty() ? "" : "; did you mean '" + closest + "'?"),
                  "List only input columns: " + listed(features, 30) + ".");
    }
  }
  std::vector<formats::CsvWanted> wanted;
  for (const std::string& name : features) {
    Feature f;
    f.column = name;
    f.categorical = contains(options.categorical, name);
    wanted.push_back({name, f.categorical ? formats::CsvKind::kText : formats::CsvKind::kNumber, false});
    encoding.features.push_back(std::move(f));
  }
  encoding.target = options.target;
  encoding.regression = options.regression;
  wanted.push_back({options.target, options.regression ? formats::CsvKind::kNumber : formats::CsvKind::kText, false,
                    false, kRegressionTargetFix});
  return wanted;
}

// The classes of the training labels: names (sorted) unless every label is a whole number.
void fit_classes(const formats::CsvTable& table, const DataOptions& options, Encoding& encoding) {
  const formats::CsvColumn& c = *column_named(table, encoding.target);
  // Each label is a class index (a whole number), another number, or a name; a table mixing them
  // is a mistake, and so is a missing label (pandas' NA words).
  int64_t largest = -1;
  int64_t first_index = -1, first_fraction = -1, first_name = -1;
  for (size_t r = 0; r < c.texts.size(); ++r) {
    const std::string& text = c.texts[r];
    const auto row = static_cast<int64_t>(r);
    if (formats::is_csv_missing(text)) {
      throw Error("data.target", at(table, options.path, row, c) + ": the label is '" + text + "' (a missing value)",
                  "Give every row its label, or drop the rows without one.");
    }
    int64_t label = 0;
    double number = 0.0;
    if (class_index(text, label)) {
      if (label < 0) {
        throw Error("data.target", at(table, options.path, row, c) + ": label " + text + " is negative",
                    "Class indices start at 0: map the labels to 0 .. classes - 1 (or give them as names).");
      }
      if (first_index < 0) first_index = row;
      largest = std::max(largest, label);
    } else if (formats::parse_csv_number(text, number)) {
      if (first_fraction < 0) first_fraction = row;
    } else if (first_name < 0) {
      first_name = row;
    }
  }
  const auto label_at = [&](int64_t row) {
    return "'" + c.texts[static_cast<size_t>(row)] + "' (line " +
           std::to_string(table.lines[static_cast<size_t>(row)]) + ")";
  };
  if (first_name >= 0 && (first_index >= 0 || first_fraction >= 0)) {
    const int64_t number_row = first_index >= 0 ? first_index : first_fraction;
    throw Error("data.target",
                options.path + ": the labels of column '" + c.name + "' mix numbers, like " + label_at(number_row) +
                    ", and names, like " + label_at(first_name),
                "Make every label a class index (0 .. classes - 1) or every label a class name.");
  }
  if (first_fraction >= 0) {
    throw Error("data.target",
                at(table, options.path, first_fraction, c) + ": the label " +
                    c.texts[static_cast<size_t>(first_fraction)] +
                    " is not a whole number: data=csv trains classifiers, on class indices or names",
                "Set data.task=regression to predict the numbers themselves, or give class indices (0 .. "
                "classes - 1) or names.");
  }
  if (first_name < 0) {
    if (options.num_classes == 0 && largest >= 100000 && largest >= table.rows()) {
      throw Error("data.target",
                  options.path + ": the largest label is " + std::to_string(largest) +
                      ", so the model would get that many outputs plus one, for " + std::to_string(table.rows()) +
                      " rows",
                  "Map the labels to 0 .. classes - 1, or, if so many classes are meant, set data.num_classes.");
    }
    encoding.num_classes = options.num_classes > 0 ? options.num_classes : largest + 1;
    // Whole numbers nearly all different are more likely a quantity (a price, a count, a score)
    // than class labels: trained as classes, each value is its own output.
    std::vector<bool> seen(static_cast<size_t>(largest + 1), false);
    int64_t distinct = 0;
    for (const std::string& text : c.texts) {
      int64_t label = 0;
      if (class_index(text, label) && !seen[static_cast<size_t>(label)]) {
        seen[static_cast<size_t>(label)] = true;
        ++distinct;
      }
    }
    if (options.num_classes == 0 && distinct >= 20 && distinct * 5 >= table.rows()) {
      log::warning("data.target: column '" + c.name + "' holds " + std::to_string(distinct) +
                   " different whole numbers in " + std::to_string(table.rows()) + " rows, trained as " +
                   std::to_string(encoding.num_classes) +
                   " classes; if it is a quantity rather than a label, set data.task=regression");
    } else if (options.num_classes == 0) {
      if (const auto warning = missing_classes_warning("data.target", options.path, seen)) log::warning(*warning);
    }
  } else {
    encoding.classes = distinct_sorted(c.texts);
    encoding.num_classes = static_cast<int64_t>(encoding.classes.size());
    if (options.num_classes > 0 && options.num_classes != encoding.num_classes) {
      throw Error("data.num_classes",
                  "is " + std::to_string(options.num_classes) + ", but the labels of " + options.path + " name " +
                      std::to_string(encoding.num_classes) + " classes (" + listed(encoding.classes) + ")",
                  "Set data.num_classes=null: named classes are counted.");
    }
  }
  if (encoding.num_classes < 2) {
    throw Error("data.target",
                options.path + ": every label of column '" + c.name + "' is " + c.texts.front() +
                    ", one class: a classifier needs at least two",
                "Give a table with rows of at least two classes (or set data.num_classes when the others are "
                "merely absent from it).");
  }
}

// Whether float32 (24-bit significands) rounds values of this mean and spread by more than 0.1%
// of the spread: timestamps, large offsets.
bool float32_blurs(double mean, double std) { return std > 0.0 && std::abs(mean) * 6e-8 > 1e-3 * std; }

void warn_float32_blurs(const std::string& what, double mean, double std) {
  log::warning(what + " (mean " + fixed_text(mean, 1) + ", standard deviation " + fixed_text(std, 4) +
               ") reach the model as float32 with data.standardize=false, whose steps at that size are above 0.1% "
               "of their spread: keep data.standardize=true (standardised in float64 first), or subtract an offset "
               "from the column (e.g. its minimum)");
}

// Categories from the whole training table; mean and standard deviation from the training rows
// (with data.standardize=false only to warn of float32's rounding).
void fit_features(const formats::CsvTable& table, const DataOptions& options, const at::Tensor& train_rows,
                  Encoding& encoding) {
  const int64_t* rows = train_rows.data_ptr<int64_t>();
  const int64_t count = train_rows.numel();
  // Sums over the training rows in one pass over the row-major numbers, then the squares.
  std::vector<Feature*> numeric;
  std::vector<size_t> slots;
  for (Feature& f : encoding.features) {
    const formats::CsvColumn& c = *column_named(table, f.column);
    if (f.categorical) {
      f.categories = distinct_sorted(c.texts);
    } else {
      numeric.push_back(&f);
      slots.push_back(c.number_slot);
    }
  }
  if (numeric.empty()) return;
  const size_t stride = table.number_width;
  std::vector<double> sums(numeric.size(), 0.0), squares(numeric.size(), 0.0);
  for (int64_t i = 0; i < count; ++i) {
    const double* cells = table.numbers.data() + static_cast<size_t>(rows[i]) * stride;
    for (size_t k = 0; k < slots.size(); ++k) sums[k] += cells[slots[k]];
  }
  std::vector<double> means(numeric.size());
  for (size_t k = 0; k < means.size(); ++k) means[k] = sums[k] / static_cast<double>(count);
  for (int64_t i = 0; i < count; ++i) {
    const double* cells = table.numbers.data() + static_cast<size_t>(rows[i]) * stride;
    for (size_t k = 0; k < slots.size(); ++k) {
      const double d = cells[slots[k]] - means[k];
      squares[k] += d * d;
    }
  }
  // The population standard deviation, as scikit-learn's StandardScaler; a constant column is
  // only centred.
  for (size_t k = 0; k < numeric.size(); ++k) {
    const double std = std::sqrt(squares[k] / static_cast<double>(count));
    if (!options.standardize) {
      if (float32_blurs(means[k], std))
        warn_float32_blurs("data.features: the values of column '" + numeric[k]->column + "'", means[k], std);
      continue;
    }
    numeric[k]->mean = means[k];
    numeric[k]->std = std > 0.0 ? std : 1.0;
  }
}

// A regression's target statistics from the training rows (the population std, as for inputs);
// a constant target is only centred.
void fit_target(const formats::CsvTable& table, const DataOptions& options, const at::Tensor& train_rows,
                Encoding& encoding) {
  encoding.num_classes = 1;  // one output
  const size_t slot = column_named(table, encoding.target)->number_slot;
  const size_t stride = table.number_width;
  const int64_t* rows = train_rows.data_ptr<int64_t>();
  const int64_t count = train_rows.numel();
  double sum = 0.0, squares = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += table.numbers[static_cast<size_t>(rows[i]) * stride + slot];
  const double mean = sum / static_cast<double>(count);
  for (int64_t i = 0; i < count; ++i) {
    const double d = table.numbers[static_cast<size_t>(rows[i]) * stride + slot] - mean;
    squares += d * d;
  }
  const double std = std::sqrt(squares / static_cast<double>(count));
  if (!options.standardize) {
    if (float32_blurs(mean, std))
      warn_float32_blurs("data.target: the values of column '" + encoding.target + "'", mean, std);
    return;
  }
  encoding.target_mean = mean;
  encoding.target_std = std > 0.0 ? std : 1.0;
}

TensorDataset make_dataset(const at::Tensor& inputs, const at::Tensor& targets, const Encoding& encoding,
                           const std::string& json, const formats::CsvTable& table) {
  TensorDataset dataset(inputs, targets);
  if (encoding.regression) dataset.set_target_values(regression_target_values(table, encoding));
  dataset.set_num_classes(encoding.num_classes);
  dataset.set_class_names(encoding.classes);
  dataset.set_encoding(json);
  if (encoding.regression) dataset.set_regression({encoding.target_mean, encoding.target_std});
  return dataset;
}

TensorDataset read_encoded(const DataOptions& options, const std::string& path, const std::string& key,
                           const Encoding& encoding, const std::string& json, bool target_optional) {
  const formats::CsvTable table = read_table(path, key, options.delimiter, [&](const std::vector<std::string>& header) {
    for (const Feature& f : encoding.features) {
      if (!contains(header, f.column)) {
        // A header read as one column: the file has another delimiter than the run's (say so).
        if (header.size() == 1) throw no_such_column(key, f.column, path, header);
        throw Error(
            key, path + " has no column '" + f.column + "', an input of the model",
            "Give a table with the training table's input columns: " +
                [&] {
                  std::vector<std::string> names;
                  for (const Feature& g : encoding.features) names.push_back(g.column);
                  return listed(names, 30);
                }() +
                ".");
      }
    }
    if (!target_optional && !contains(header, encoding.target)) {
      throw no_such_column(key, encoding.target, path, header);
    }
    return wanted_for(encoding, target_optional);
  });
  return make_dataset(encode_inputs(table, encoding, path, key),
                      encode_targets(table, encoding, path, key, /*training=*/false), encoding, json, table);
}

// A checkpoint's encoding decides the columns: data keys that say otherwise are named, once.
void warn_overridden(const DataOptions& options, const Encoding& encoding) {
  std::vector<std::string> columns, categorical;
  bool standardized = false;
  for (const Feature& f : encoding.features) {
    columns.push_back(f.column);
    if (f.categorical) categorical.push_back(f.column);
    standardized = standardized || (!f.categorical && (f.mean != 0.0 || f.std != 1.0));
  }
  std::string ignored;
  if (options.target != encoding.target) ignored += " data.target (the checkpoint's: " + encoding.target + ")";
  if (options.regression != encoding.regression) {
    ignored +=
        std::string(" data.task (the checkpoint's: ") + (encoding.regression ? "regression" : "classification") + ")";
  }
  if (!options.features.empty() && options.features != columns) {
    ignored += " data.features (the checkpoint's: [" + listed(columns, 30) + "])";
  }
  std::vector<std::string> given = options.categorical;
  std::sort(given.begin(), given.end());
  std::sort(categorical.begin(), categorical.end());
  if (given != categorical) ignored += " data.categorical (the checkpoint's: [" + listed(categorical, 30) + "])";
  if (!options.standardize && standardized) ignored += " data.standardize (the checkpoint's inputs are standardised)";
  if (!ignored.empty()) {
    log::warning("data=csv: the checkpoint's encoding decides how rows become inputs; ignored:" + ignored);
  }
}

}  // namespace

DataSplits load_csv(const DataOptions& options) {
  const bool fitted = !options.encoding.empty();
  Encoding encoding = fitted ? Encoding::from_json(options.encoding) : Encoding{};
  if (fitted) warn_overridden(options, encoding);
  // trainer test from a checkpoint: its encoding says how rows become inputs, so the test table
  // alone is read (the training table may have moved; predict reads no more either).
  if (fitted && options.evaluated_split == "test" && !options.test_path.empty()) {
    warn_if_test_is_training_data(kTestTable, options.test_path, options.path, /*checkpoint=*/true);
    auto tested = std::make_shared<const TensorDataset>(read_encoded(
        options, options.test_path, "data.test_path", encoding, options.encoding, /*target_optional=*/false));
    log::info("data: " + options.test_path + " alone (the checkpoint's encoding says how rows become inputs; " +
              options.path + " is not read)");
    return DataSplits(tested, std::make_shared<const TensorDataset>(), tested);
  }
  uint32_t crc = 0;
  const formats::CsvTable table = read_table(
      options.path, "data.path", options.delimiter,
      [&](const std::vector<std::string>& header) {
        if (fitted) {
          for (const Feature& f : encoding.features) {
            if (!contains(header, f.column)) {
              throw Error("data.path", options.path + " has no column '" + f.column + "', an input of the checkpoint",
                          "Give the table the checkpoint was trained on.");
            }
          }
          if (!contains(header, encoding.target)) {
            throw Error("data.path", options.path + " has no column '" + encoding.target + "', the checkpoint's target",
                        "Give the table the checkpoint was trained on (its columns: " + listed(header, 30) + ").");
          }
          return wanted_for(encoding, false);
        }
        return choose_columns(options, header, encoding);
      },
      &crc);
  if (fitted && encoding.table_rows >= 0 && (crc != encoding.table_crc32c || table.rows() != encoding.table_rows)) {
    log::warning("data.path: " + options.path + " is not the table the checkpoint was trained on (" +
                 std::to_string(encoding.table_rows) + " rows then, " + std::to_string(table.rows()) +
                 " now; its checksum differs): the validation split is not the rows training held out, so val/* "
                 "metrics are not comparable with the run's, and a resumed fit trains on the changed rows");
  }
  if (!fitted) {
    encoding.table_rows = table.rows();
    encoding.table_crc32c = crc;
  }
  const auto start = std::chrono::steady_clock::now();
  if (!fitted && !encoding.regression) fit_classes(table, options, encoding);
  auto [train_rows, val_rows] = split_indices(table.rows(), options.val_fraction, options.seed);
  if (train_rows.numel() == 0) {
    throw Error("data.val_fraction",
                std::to_string(options.val_fraction) + " leaves 0 of the " + std::to_string(table.rows()) +
                    " rows of " + options.path + " for training",
                "Lower data.val_fraction (0.1 holds out a tenth).");
  }
  if (!fitted) fit_features(table, options, train_rows, encoding);
  if (!fitted && encoding.regression) fit_target(table, options, train_rows, encoding);
  const std::string json = encoding.to_json();
  const TensorDataset all = make_dataset(
      encode_inputs(table, encoding, options.path, "data.path"),
      encode_targets(table, encoding, options.path, "data.path", /*training=*/!fitted), encoding, json, table);
  log::info("data: encoded " + options.path + " as " + std::to_string(encoding.width()) + " inputs per row" +
            (fitted ? " (the checkpoint's encoding)" : "") + " in " +
            fixed_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2) + " s");
  TensorDataset test;
  if (!options.test_path.empty()) {
    warn_if_test_is_training_data(kTestTable, options.test_path, options.path, /*checkpoint=*/false);
    test = read_encoded(options, options.test_path, "data.test_path", encoding, json, /*target_optional=*/false);
  }
  return {all.view(train_rows), all.view(val_rows), std::move(test)};
}

std::shared_ptr<const Dataset> load_csv_to_predict(const DataOptions& options) {
  if (options.test_path.empty()) {
    throw Error("data.test_path", "is null: predict reads the rows of data.test_path",
                "Give the table to predict: trainer predict ckpt_path=... data.test_path=new_rows.csv (its label "
                "column may be absent).");
  }
  const Encoding encoding = Encoding::from_json(options.encoding);
  warn_overridden(options, encoding);
  return std::make_shared<const TensorDataset>(
      read_encoded(options, options.test_path, "data.test_path", encoding, options.encoding, /*target_optional=*/true));
}

}  // namespace trainer::data
