#include "trainer/engine/loggers/metrics_csv.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "trainer/config/python_str.h"
#include "trainer/engine/posix_files.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"
#include "trainer/util/lies_within.h"
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

// The rows metrics.csv held when a checkpoint was written ("rows=N" in its state); nullopt for a
// checkpoint of an older trainer, which kept only its step.
std::optional<size_t> rows_when_saved(const std::string& saved_state) {
  if (saved_state.rfind("rows=", 0) != 0) return std::nullopt;
  char* end = nullptr;
  const unsigned long long written = std::strtoull(saved_state.c_str() + 5, &end, 10);
  if (*end != '\0') return std::nullopt;
  return static_cast<size_t>(written);
}

}  // namespace

MetricsCsv::MetricsCsv(std::string path, std::string run_dir) : path_(std::move(path)), run_dir_(std::move(run_dir)) {
  if (posix::exists(path_)) {  // a resumed run: keep what is there (written again once this fit logs)
    std::ifstream in(path_);
    std::string line;
    if (std::getline(in, line) && !line.empty()) columns_ = split_csv_line(line);
    while (std::getline(in, line)) rows_.push_back(split_csv_line(line));
    // A last row without its newline was cut short as it was appended (the process killed).
    in.clear();
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size > 0 && !rows_.empty()) {
      in.seekg(size - 1);
      cut_short_ = in.get() != '\n';
    }
    return;
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
  if (widened || file_ == nullptr) {
    rewrite();
    return;
  }
  const std::string line = join_row(cells, columns_.size());
  // A row not written (a full disk) is kept in rows_: flush() writes the whole file again.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) unwritten_ = true;
}

std::string MetricsCsv::checkpoint_state() const { return "rows=" + std::to_string(rows_.size()); }

void MetricsCsv::on_fit_start(std::optional<int64_t> resumed_step, const std::string& saved_state) {
  const bool plain_header = columns_.size() >= 2 && columns_[0] == "epoch" && columns_[1] == "step";
  if (rows_.empty() && plain_header) {  // nothing logged yet, or a resumed run's file deleted or emptied
    const std::optional<size_t> written = rows_when_saved(saved_state);
    if (resumed_step && written && *written > 0) {
      log::warning(path_ + " holds no row, but it held " + std::to_string(*written) + " when the checkpoint (step " +
                   std::to_string(*resumed_step) +
                   ") was written: the file was deleted or emptied since; the run goes on from the checkpoint, "
                   "logging from here on, and the rows before it stay lost");
    }
    return;
  }
  if (!resumed_step) {
    if (!rows_.empty()) {
      keep_earlier_rows_aside();
    } else {  // a header of nothing, or not one of ours: the file begins again
      columns_ = {"epoch", "step"};
      rewrite();
    }
    return;
  }
  const bool cut_short = cut_short_;
  if (const std::string damage = find_damage(); !damage.empty()) {
    keep_damaged_aside(damage, *resumed_step);
    return;
  }
  const size_t dropped = drop_rows_after(*resumed_step, saved_state);
  if (dropped > 0) {
    log::info(path_ + ": " + std::to_string(dropped) + " row(s) logged after the checkpoint (step " +
              std::to_string(*resumed_step) + ") dropped; they are logged again as the run resumes");
  }
  if (dropped > 0 || cut_short) rewrite();
}

void MetricsCsv::keep_earlier_rows_aside() {
  const std::string dir = posix::parent(path_);
  const bool own = run_dir_.empty() || same_place(dir.empty() ? "." : dir, run_dir_);
  const bool another_run = !own && (posix::exists(dir + "/.hydra") || posix::exists(dir + "/checkpoints") ||
                                    posix::exists(dir + "/trainer.log"));
  if (another_run) {
    throw Error("logger.csv.save_dir",
                dir + " is another run's directory: its " + path_.substr(path_.find_last_of('/') + 1) + " holds " +
                    std::to_string(rows_.size()) + " rows of that run, and a new fit would move them aside",
                "Leave logger.csv.save_dir at this run's directory (its default), or point it at a directory of "
                "its own; to continue that run, resume it with ckpt_path=last and hydra.run.dir=" +
                    dir + ".");
  }
  std::string kept;
  for (int n = 1; kept.empty() || posix::exists(kept); ++n) kept = path_ + "." + std::to_string(n);
  if (std::rename(path_.c_str(), kept.c_str()) != 0) {
    throw Error(path_, "cannot move an earlier attempt's metrics aside", "Check the run directory's permissions.");
  }
  log::warning(path_ + " held " + std::to_string(rows_.size()) + (rows_.size() == 1 ? " row" : " rows") +
               (own ? " of an earlier attempt that left no checkpoint" : " of an earlier fit") + "; kept as " + kept +
               ", this fit starts a new one");
  rows_.clear();
  columns_ = {"epoch", "step"};
  rewrite();
}

std::string MetricsCsv::find_damage() {
  if (cut_short_) {
    rows_.pop_back();
    cut_short_ = false;
    log::warning(path_ + ": its last row was cut short as it was written (the process stopped mid-row): dropped");
  }
  if (columns_.size() < 2 || columns_[0] != "epoch" || columns_[1] != "step") {
    return "its header does not begin with epoch,step";
  }
  const auto is_number = [](const std::string& cell, bool integer) {
    if (cell.empty()) return true;
    char* end = nullptr;
    if (integer) {
      (void)std::strtoll(cell.c_str(), &end, 10);
    } else {
      (void)std::strtod(cell.c_str(), &end);
    }
    return end != cell.c_str() && *end == '\0';
  };
  for (size_t r = 0; r < rows_.size(); ++r) {
    const std::vector<std::string>& row = rows_[r];
    const std::string line = "line " + std::to_string(r + 2);
    if (row.size() != columns_.size()) {
      return line + " has " + std::to_string(row.size()) + " cells where its header has " +
             std::to_string(columns_.size());
    }
    for (size_t c = 0; c < row.size(); ++c) {
      if (!is_number(row[c], c < 2)) return line + "'s " + columns_[c] + " is '" + row[c] + "', not a number";
    }
  }
  return "";
}

void MetricsCsv::keep_damaged_aside(const std::string& damage, int64_t resumed_step) {
  std::string kept;
  for (int n = 1; kept.empty() || posix::exists(kept); ++n) {
    kept = path_ + ".damaged" + (n == 1 ? std::string() : "." + std::to_string(n));
  }
  if (std::rename(path_.c_str(), kept.c_str()) != 0) {
    throw Error(path_, "is damaged (" + damage + ") and cannot be moved aside",
                "Check the run directory's permissions.");
  }
  log::warning(path_ + " is damaged (" + damage + "), so the rows logged before the checkpoint (step " +
               std::to_string(resumed_step) + ") cannot be kept in it: the file is kept as " + kept +
               ", and this run's metrics.csv starts again with the rows it logs from here on");
  rows_.clear();
  columns_ = {"epoch", "step"};
  rewrite();
}

size_t MetricsCsv::drop_rows_after(int64_t resumed_step, const std::string& saved_state) {
  const size_t before = rows_.size();
  // The rows written when the checkpoint was taken; a checkpoint of an older trainer has only its step.
  size_t kept = before;
  const std::optional<size_t> written = rows_when_saved(saved_state);
  if (written && *written <= before) {
    kept = *written;
  } else {
    if (written) {
      log::warning(path_ + " holds " + std::to_string(before) + " rows, but it held " + std::to_string(*written) +
                   " when the checkpoint (step " + std::to_string(resumed_step) +
                   ") was written: rows were lost (the file was cut short or edited); the run goes on from the "
                   "checkpoint, and the rows lost stay lost");
    }
    rows_.erase(std::remove_if(rows_.begin(), rows_.end(),
                               [&](const std::vector<std::string>& row) {
                                 if (row.size() < 2 || row[1].empty()) return false;
                                 char* step_end = nullptr;
                                 const long long step = std::strtoll(row[1].c_str(), &step_end, 10);
                                 return *step_end == '\0' && step > resumed_step;
                               }),
                rows_.end());
    kept = rows_.size();
  }
  rows_.resize(kept);
  if (kept == before) return 0;
  // The header of the rows kept: a metric first logged after the checkpoint comes back in its place
  // (columns are in the order first logged) when the resumed run logs it again.
  std::vector<bool> used(columns_.size(), false);
  for (size_t c = 0; c < 2 && c < used.size(); ++c) used[c] = true;  // epoch, step
  for (const auto& row : rows_) {
    for (size_t c = 2; c < row.size() && c < used.size(); ++c) used[c] = used[c] || !row[c].empty();
  }
  std::vector<std::string> columns;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (used[c]) columns.push_back(columns_[c]);
  }
  for (auto& row : rows_) {
    std::vector<std::string> cells;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (used[c]) cells.push_back(c < row.size() ? row[c] : std::string());
    }
    row = std::move(cells);
  }
  columns_ = std::move(columns);
  return before - kept;
}

void MetricsCsv::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) unwritten_ = true;
  if (!unwritten_) return;
  rewrite();  // throws where there is still no room: the rows are not lost silently
  unwritten_ = false;
}

}  // namespace trainer::engine
