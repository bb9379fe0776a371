#include "trainer/engine/loggers/metrics_csv.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "trainer/config/python_str.h"
#include "trainer/engine/posix_files.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

std::string join_row(const std::vector<std::string>& cells, size_t width) {
  std::string line;
  for (size_t i = 0; i < width; ++i) {
    if (i > 0) line += ',';
    if (i < cells.size()) line += cells[i];
  }
  return line + "\n";
}

}  // namespace

MetricsCsv::MetricsCsv(std::string path) : path_(std::move(path)) {
  if (posix::exists(path_)) {  // a resumed run: keep what is there
    std::ifstream in(path_);
    std::string line;
    if (std::getline(in, line) && !line.empty()) columns_ = split_csv_line(line);
    while (std::getline(in, line)) rows_.push_back(split_csv_line(line));
  }
  if (!posix::make_directories(posix::parent(path_))) {
    throw Error(path_, "cannot create the directory for metrics.csv", "Check the run directory's permissions.");
  }
  rewrite();
}

MetricsCsv::~MetricsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsCsv::open_for_append() {
  file_ = std::fopen(path_.c_str(), "a");
  if (file_ == nullptr) throw Error(path_, "cannot open metrics.csv for writing", "Check the run directory.");
}

void MetricsCsv::rewrite() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  std::string text = join_row(columns_, columns_.size());
  for (const auto& row : rows_) text += join_row(row, columns_.size());
  AtomicWriteOptions options;
  options.noun = "metrics.csv";
  options.fix = "Check free disk space and the directory's permissions.";
  write_file_atomically(path_, text, options);
  open_for_append();
}

void MetricsCsv::log_metrics(const MetricRow& metrics, int64_t epoch, int64_t step) {
  bool widened = false;
  for (const auto& entry : metrics) {
    if (std::find(columns_.begin(), columns_.end(), entry.first) == columns_.end()) {
      columns_.push_back(entry.first);
      widened = true;
    }
  }
  std::vector<std::string> cells(columns_.size());
  if (epoch >= 0) cells[0] = std::to_string(epoch);
  if (step >= 0) cells[1] = std::to_string(step);
  for (const auto& [name, value] : metrics) {
    size_t column = static_cast<size_t>(std::find(columns_.begin(), columns_.end(), name) - columns_.begin());
    cells[column] = config::python_float_repr(value);
  }
  rows_.push_back(cells);
  if (widened) {
    rewrite();
    return;
  }
  const std::string line = join_row(cells, columns_.size());
  std::fwrite(line.data(), 1, line.size(), file_);
}

void MetricsCsv::on_fit_start(std::optional<int64_t> resumed_step) {
  if (rows_.empty()) return;
  if (!resumed_step) {
    std::string kept;
    for (int n = 1; kept.empty() || posix::exists(kept); ++n) kept = path_ + "." + std::to_string(n);
    if (std::rename(path_.c_str(), kept.c_str()) != 0) {
      throw Error(path_, "cannot move an earlier attempt's metrics aside", "Check the run directory's permissions.");
    }
    log::warning(path_ + " held " + std::to_string(rows_.size()) +
                 " rows of an earlier attempt that left no checkpoint; kept as " + kept +
                 ", this fit starts a new one");
    rows_.clear();
    columns_ = {"epoch", "step"};
    rewrite();
    return;
  }
  const size_t before = rows_.size();
  rows_.erase(std::remove_if(rows_.begin(), rows_.end(),
                             [&](const std::vector<std::string>& row) {
                               if (row.size() < 2 || row[1].empty()) return false;
                               char* end = nullptr;
                               const long long step = std::strtoll(row[1].c_str(), &end, 10);
                               return *end == '\0' && step > *resumed_step;
                             }),
              rows_.end());
  if (rows_.size() == before) return;
  log::info(path_ + ": " + std::to_string(before - rows_.size()) + " row(s) logged after the checkpoint's step " +
            std::to_string(*resumed_step) + " dropped; they are logged again as the run resumes");
  rewrite();
}

void MetricsCsv::flush() {
  if (file_ != nullptr) std::fflush(file_);
}

}  // namespace trainer::engine
