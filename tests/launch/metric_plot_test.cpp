// The sweep plot is a real PNG: read back with cairo, of the documented size, with the series'
// colours drawn on a white background.
#include "trainer/launch/metric_plot.h"

#include <cairo.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

namespace {

using trainer::launch::MetricSeries;

std::string temp_dir() {
  char pattern[] = "/tmp/trainer-plot-XXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  return pattern;
}

struct Pixels {
  int width = 0, height = 0;
  size_t non_white = 0;
  size_t tab_blue = 0;    // the first series' colour
  size_t tab_orange = 0;  // the second's
};

Pixels read_png(const std::string& path) {
  cairo_surface_t* surface = cairo_image_surface_create_from_png(path.c_str());
  REQUIRE(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS);
  Pixels out;
  out.width = cairo_image_surface_get_width(surface);
  out.height = cairo_image_surface_get_height(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  for (int y = 0; y < out.height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<ptrdiff_t>(y) * stride);
    for (int x = 0; x < out.width; ++x) {
      const uint32_t rgb = row[x] & 0xFFFFFF;
      out.non_white += rgb != 0xFFFFFF;
      out.tab_blue += rgb == 0x1F77B4;
      out.tab_orange += rgb == 0xFF7F0E;
    }
  }
  cairo_surface_destroy(surface);
  return out;
}

bool starts_with_png_signature(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return std::string(magic, 8) == std::string("\x89PNG\r\n\x1a\n", 8);
}

}  // namespace

TEST_CASE("write_metric_plot writes a PNG with one coloured line per job") {
  const std::string dir = temp_dir();
  const std::string path = dir + "/sweep_metrics.png";
  std::vector<MetricSeries> series(3);
  series[0].label = "0: optimizer.lr=0.1";
  series[1].label = "1: optimizer.lr=0.01";
  series[2].label = "2: optimizer.lr=1e-07 (stopped early)";
  for (int epoch = 1; epoch <= 10; ++epoch) {
    series[0].points.push_back({epoch, 0.6 + 0.03 * epoch});
    series[1].points.push_back({epoch, 0.5 + 0.02 * epoch});
    if (epoch <= 2) series[2].points.push_back({epoch, 0.1});
  }
  series[1].points[4].second = std::numeric_limits<double>::quiet_NaN();  // skipped, line breaks
  trainer::launch::write_metric_plot(path, "sweep 2026-11-24/18-00-00: val/acc per epoch", "val/acc", series);

  CHECK(starts_with_png_signature(path));
  const Pixels pixels = read_png(path);
  CHECK(pixels.width == trainer::launch::kMetricPlotWidth);
  CHECK(pixels.height == trainer::launch::kMetricPlotHeight);
  // Text, axes, grid and lines: a few percent of the image, far from all of it.
  const size_t total = static_cast<size_t>(pixels.width) * pixels.height;
  CHECK(pixels.non_white > total / 100);
  CHECK(pixels.non_white < total / 2);
  // Each line is drawn in its own colour (lines, dots, legend swatch).
  CHECK(pixels.tab_blue > 300);
  CHECK(pixels.tab_orange > 300);
  CHECK(access((path + ".tmp").c_str(), F_OK) != 0);  // renamed into place

  // Refreshed in place: a second write replaces the file.
  series.pop_back();
  trainer::launch::write_metric_plot(path, "refreshed", "val/acc", series);
  CHECK(read_png(path).width == trainer::launch::kMetricPlotWidth);
  std::system(("rm -rf " + dir).c_str());
}

// The mean row of the pixels of one colour inside the plot area (left of the legend).
double mean_row(const std::string& path, uint32_t colour) {
  cairo_surface_t* surface = cairo_image_surface_create_from_png(path.c_str());
  REQUIRE(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  double sum = 0;
  size_t count = 0;
  for (int y = 0; y < cairo_image_surface_get_height(surface); ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<ptrdiff_t>(y) * stride);
    for (int x = 0; x < 700; ++x) {
      if ((row[x] & 0xFFFFFF) == colour) {
        sum += y;
        ++count;
      }
    }
  }
  cairo_surface_destroy(surface);
  REQUIRE(count > 0);
  return sum / static_cast<double>(count);
}

TEST_CASE("values spanning decades get a log axis, so small losses stay apart") {
  const std::string dir = temp_dir();
  std::vector<MetricSeries> series(3);
  const double level[3] = {1e-6, 1e-3, 1.0};
  for (int k = 0; k < 3; ++k) {
    series[k].label = std::to_string(k) + ": data=synthetic lr=" + std::to_string(k);
    for (int epoch = 0; epoch < 5; ++epoch) series[k].points.push_back({epoch, level[k]});
  }
  trainer::launch::write_metric_plot(dir + "/log.png", "losses", "val/loss", series);
  // On a linear axis 1e-6 and 1e-3 would share the bottom row; on a log axis three decades apart.
  const double blue = mean_row(dir + "/log.png", 0x1F77B4), orange = mean_row(dir + "/log.png", 0xFF7F0E);
  CHECK(blue - orange > 100);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("a sweep with no results yet still gets a plot, and a single point shows") {
  const std::string dir = temp_dir();
  trainer::launch::write_metric_plot(dir + "/empty.png", "no jobs finished", "val/loss", {});
  const Pixels empty = read_png(dir + "/empty.png");
  CHECK(empty.width == trainer::launch::kMetricPlotWidth);
  CHECK(empty.non_white > 1000);  // axes and text
  CHECK(empty.tab_blue == 0);

  std::vector<MetricSeries> one(1);
  one[0].label = "0: seed=1";
  one[0].points = {{1, 0.25}};
  trainer::launch::write_metric_plot(dir + "/one.png", "one epoch", "val/loss", one);
  CHECK(read_png(dir + "/one.png").tab_blue > 20);  // the dot and the legend swatch
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("an unwritable plot path is an error naming the path") {
  try {
    trainer::launch::write_metric_plot("/nonexistent-dir/x/plot.png", "t", "y", {});
    FAIL("no error");
  } catch (const trainer::Error& e) {
    CHECK(e.where() == "/nonexistent-dir/x/plot.png");
    CHECK_FALSE(e.fix().empty());
  }
}
