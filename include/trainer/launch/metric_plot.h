// A line chart of a metric per epoch, one coloured line per sweep job, drawn with cairo into a PNG
// of kMetricPlotWidth x kMetricPlotHeight pixels: title, axes with "nice" ticks (1, 2, 5 x 10^k)
// and their labels, the y label, "epoch" on x, a legend on the right (the first 24 jobs, then
// "+N more"). Words that every label has (overrides shared by all jobs) are printed once under the
// title and left out of the legend. The y axis turns logarithmic (decade ticks) when no value is
// negative and the positive ones span three decades or more, as losses heading to zero do (an
// exact 0 is drawn on the bottom edge). Non-finite
// points are skipped (the line breaks there). With no points at all the axes are drawn with
// "no results yet". Written to a temporary file and renamed into place, so a
// reader never sees half a PNG.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace trainer::launch {

inline constexpr int kMetricPlotWidth = 1000;
inline constexpr int kMetricPlotHeight = 600;

struct MetricSeries {
  std::string label;                              // e.g. "3: optimizer.lr=0.01 model=cnn"
  std::vector<std::pair<double, double>> points;  // (epoch, value)
};

// Throws trainer::Error naming png_path when the file cannot be written.
void write_metric_plot(const std::string& png_path, const std::string& title, const std::string& y_label,
                       const std::vector<MetricSeries>& series);

}  // namespace trainer::launch
