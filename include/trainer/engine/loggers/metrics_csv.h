// metrics.csv as Lightning's CSVLogger writes it: columns `epoch`, `step`, then every metric name
// in the order first logged; one row per logging event with empty cells for metrics not in it.
// When a new metric name appears the file is rewritten with the wider header (atomically, like a
// checkpoint). A resumed run reads the existing file and keeps appending to it, less the rows
// logged after its checkpoint (they are logged again): a checkpoint keeps the count of rows
// written when it was taken (checkpoint_state), an older one only its step. A fit that starts
// afresh where an earlier attempt left rows (killed before its first checkpoint) keeps them as
// metrics.csv.1, .2, ...; one whose file lies in another run's directory is refused. A row that
// cannot be appended (a full disk) is written with the whole file at the next flush (before each
// checkpoint, at the end of a fit or test), which throws if there is still no room. A resume that
// finds the file damaged (another header, a row of other width or not numbers) keeps it as
// metrics.csv.damaged and starts a new one, saying so; one that finds rows missing says so.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "trainer/engine/loggers/metric_logger.h"

namespace trainer::engine {

class MetricsCsv final : public MetricLogger {
 public:
  // `run_dir`: the fit's own directory (a file elsewhere that holds rows belongs to another fit).
  explicit MetricsCsv(std::string path, std::string run_dir = {});
  ~MetricsCsv() override;
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  void log_metrics(const MetricRow& metrics, int64_t epoch, int64_t step) override;
  void flush() override;
  void on_fit_start(std::optional<int64_t> resumed_step, const std::string& saved_state) override;
  std::string checkpoint_state() const override;

  const std::vector<std::string>& columns() const { return columns_; }

 private:
  void rewrite();
  void open_for_append();
  void keep_earlier_rows_aside();
  // "" when the rows read are as this class writes them (a last row cut short is dropped, said);
  // else what is wrong, with its line: a resume does not build on rows it cannot read.
  std::string find_damage();
  // A damaged file is kept as metrics.csv.damaged (said), and a new one begins.
  void keep_damaged_aside(const std::string& damage, int64_t resumed_step);
  // Keeps the rows written before the checkpoint; returns how many were dropped.
  size_t drop_rows_after(int64_t resumed_step, const std::string& saved_state);

  std::string path_;
  std::string run_dir_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> columns_{"epoch", "step"};
  std::vector<std::vector<std::string>> rows_;  // every row so far, cells as written
  bool unwritten_ = false;                      // an append failed: flush() rewrites the file
  bool cut_short_ = false;                      // the file read did not end with a newline
};

}  // namespace trainer::engine
