// metrics.csv as Lightning's CSVLogger writes it: one row per logging event, a fixed set of
// columns, empty cells for metrics not logged in that row. Appends when resuming.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace trainer::engine {

class MetricsCsv {
 public:
  explicit MetricsCsv(const std::string& path);
  ~MetricsCsv();
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  // epoch/step -1 leave their cells empty.
  void row(int64_t epoch, int64_t step, double lr, const std::vector<std::pair<std::string, double>>& metrics);

  static const std::vector<std::string>& columns();

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace trainer::engine
