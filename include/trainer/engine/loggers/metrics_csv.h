// metrics.csv as Lightning's CSVLogger writes it: columns `epoch`, `step`, then every metric name
// in the order first logged; one row per logging event with empty cells for metrics not in it.
// When a new metric name appears the file is rewritten with the wider header (atomically, like a
// checkpoint). A resumed run reads the existing file and keeps appending to it, less the rows
// logged after its checkpoint (they are logged again); a fit that starts afresh where an earlier
// attempt left rows (killed before its first checkpoint) keeps them as metrics.csv.1, .2, ...
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "trainer/engine/loggers/metric_logger.h"

namespace trainer::engine {

class MetricsCsv final : public MetricLogger {
 public:
  explicit MetricsCsv(std::string path);
  ~MetricsCsv() override;
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  void log_metrics(const MetricRow& metrics, int64_t epoch, int64_t step) override;
  void flush() override;
  void on_fit_start(std::optional<int64_t> resumed_step) override;

  const std::vector<std::string>& columns() const { return columns_; }

 private:
  void rewrite();
  void open_for_append();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> columns_{"epoch", "step"};
  std::vector<std::vector<std::string>> rows_;  // every row so far, cells as written
};

}  // namespace trainer::engine
