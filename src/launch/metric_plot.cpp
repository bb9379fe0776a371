// The sweep's metric plot (see metric_plot.h), drawn with cairo's image surface and toy text API.
#include "trainer/launch/metric_plot.h"

#include <cairo.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"

namespace trainer::launch {
namespace {

struct Rgb {
  double r, g, b;
};

// Matplotlib's tab10: distinct, readable on white.
constexpr Rgb kPalette[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
                            {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
                            {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr size_t kLegendRows = 24;
constexpr double kPi = 3.14159265358979323846;

// Plot area inside the image.
constexpr double kLeft = 90, kTop = 56, kRight = kMetricPlotWidth - 290, kBottom = kMetricPlotHeight - 64;

struct Axis {
  double lo = 0, hi = 1, step = 0.2;  // for a log axis: decades (log10 of the values)
  int decimals = 1;
  bool log = false;
};

// A log axis over whole decades, a tick every decade (every few when there are many).
Axis log_axis(double lo, double hi) {
  Axis axis;
  axis.log = true;
  axis.lo = std::floor(std::log10(lo) + 1e-9);
  axis.hi = std::ceil(std::log10(hi) - 1e-9);
  if (axis.hi <= axis.lo) axis.hi = axis.lo + 1;
  axis.step = std::max(1.0, std::ceil((axis.hi - axis.lo) / 8));
  axis.lo = std::floor(axis.lo / axis.step) * axis.step;
  axis.hi = std::ceil(axis.hi / axis.step) * axis.step;
  return axis;
}

std::string decade_text(double exponent) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", std::pow(10.0, exponent));
  return buffer;
}

// Splits on spaces.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  size_t k = 0;
  while (k < text.size()) {
    while (k < text.size() && text[k] == ' ') ++k;
    const size_t start = k;
    while (k < text.size() && text[k] != ' ') ++k;
    if (k > start) out.push_back(text.substr(start, k - start));
  }
  return out;
}

// Legend labels without the words every label has ("3: data=synthetic lr=0.1" and
// "4: data=synthetic lr=0.2" become "3: lr=0.1" and "4: lr=0.2"); the shared words, in order.
std::vector<std::string> distinct_labels(const std::vector<MetricSeries>& series, std::string& shared) {
  std::vector<std::vector<std::string>> split;
  split.reserve(series.size());
  for (const MetricSeries& s : series) split.push_back(words(s.label));
  std::vector<std::string> common;
  if (series.size() >= 2) {
    for (const std::string& word : split.front()) {
      bool everywhere = word.back() != ':';  // keep the job numbers
      for (size_t k = 1; k < split.size() && everywhere; ++k) {
        everywhere = std::find(split[k].begin(), split[k].end(), word) != split[k].end();
      }
      if (everywhere && std::find(common.begin(), common.end(), word) == common.end()) common.push_back(word);
    }
  }
  std::vector<std::string> out;
  for (const auto& parts : split) {
    std::string label;
    for (const std::string& word : parts) {
      if (std::find(common.begin(), common.end(), word) != common.end()) continue;
      label += (label.empty() ? "" : " ") + word;
    }
    out.push_back(label);
  }
  shared.clear();
  for (const std::string& word : common) shared += (shared.empty() ? "" : " ") + word;
  return out;
}

// Ticks at multiples of 1, 2 or 5 x 10^k, about `target` of them, covering [lo, hi].
Axis nice_axis(double lo, double hi, int target, bool integer_steps) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  if (integer_steps) step = std::max(1.0, std::round(step));
  Axis axis;
  axis.step = step;
  axis.lo = std::floor(lo / step + 1e-9) * step;
  axis.hi = std::ceil(hi / step - 1e-9) * step;
  axis.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  return axis;
}

std::string tick_text(double value, int decimals) {
  char buffer[64];
  if (std::abs(value) < 1e-12) value = 0;  // no "-0.00"
  if (decimals > 6 || std::abs(value) >= 1e7) {
    std::snprintf(buffer, sizeof buffer, "%.3g", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  }
  return buffer;
}

// Cuts a label to `max_chars` characters (UTF-8 aware), with an ellipsis.
std::string shorten(const std::string& text, size_t max_chars) {
  size_t chars = 0, k = 0;
  for (; k < text.size(); ++k) {
    if ((static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) continue;
    if (++chars > max_chars) break;
  }
  if (k >= text.size()) return text;
  return text.substr(0, k) + "\xE2\x80\xA6";
}

void show_text(cairo_t* cr, double x, double y, const std::string& text, double align_x, double align_y) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  cairo_move_to(cr, x - extents.x_bearing - extents.width * align_x, y - extents.y_bearing - extents.height * align_y);
  cairo_show_text(cr, text.c_str());
}

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};

}  // namespace

void write_metric_plot(const std::string& png_path, const std::string& title, const std::string& y_label,
                       const std::vector<MetricSeries>& series) {
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, kMetricPlotWidth, kMetricPlotHeight));
  std::unique_ptr<cairo_t, ContextDeleter> context(cairo_create(surface.get()));
  cairo_t* cr = context.get();

  // Data bounds over the finite points.
  double x_lo = HUGE_VAL, x_hi = -HUGE_VAL, y_lo = HUGE_VAL, y_hi = -HUGE_VAL;
  double y_lo_positive = HUGE_VAL;
  size_t points = 0;
  for (const MetricSeries& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
      if (y > 0) y_lo_positive = std::min(y_lo_positive, y);
      ++points;
    }
  }
  if (points == 0) {
    x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  }
  const Axis ax = nice_axis(x_lo, x_hi, 8, true);
  // Losses heading to zero span decades: a log scale keeps them apart (a value of exactly 0 is
  // drawn on the bottom edge).
  const bool log_y = points > 0 && y_lo >= 0 && y_hi > 0 && y_hi / y_lo_positive >= 1000;
  const Axis ay = log_y ? log_axis(y_lo_positive, y_hi) : nice_axis(y_lo, y_hi, 6, false);
  auto px = [&](double x) { return kLeft + (x - ax.lo) / (ax.hi - ax.lo) * (kRight - kLeft); };
  auto py = [&](double y) {
    const double v = ay.log ? (y > 0 ? std::max(std::log10(y), ay.lo) : ay.lo) : y;
    return kBottom - (v - ay.lo) / (ay.hi - ay.lo) * (kBottom - kTop);
  };
  // Tick positions on y in the axis' own units (decades for a log axis).
  auto py_axis = [&](double v) { return kBottom - (v - ay.lo) / (ay.hi - ay.lo) * (kBottom - kTop); };

  // Background, grid, frame.
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_line_width(cr, 1);
  cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
  for (double x = ax.lo; x <= ax.hi + ax.step * 1e-6; x += ax.step) {
    cairo_move_to(cr, std::round(px(x)) + 0.5, kTop);
    cairo_line_to(cr, std::round(px(x)) + 0.5, kBottom);
  }
  for (double y = ay.lo; y <= ay.hi + ay.step * 1e-6; y += ay.step) {
    cairo_move_to(cr, kLeft, std::round(py_axis(y)) + 0.5);
    cairo_line_to(cr, kRight, std::round(py_axis(y)) + 0.5);
  }
  cairo_stroke(cr);
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_rectangle(cr, kLeft + 0.5, kTop + 0.5, kRight - kLeft, kBottom - kTop);
  cairo_stroke(cr);

  // Ticks and their labels.
  cairo_set_font_size(cr, 13);
  for (double x = ax.lo; x <= ax.hi + ax.step * 1e-6; x += ax.step) {
    const double X = std::round(px(x)) + 0.5;
    cairo_move_to(cr, X, kBottom);
    cairo_line_to(cr, X, kBottom + 5);
    cairo_stroke(cr);
    show_text(cr, X, kBottom + 9, tick_text(x, 0), 0.5, 0.0);
  }
  for (double y = ay.lo; y <= ay.hi + ay.step * 1e-6; y += ay.step) {
    const double Y = std::round(py_axis(y)) + 0.5;
    cairo_move_to(cr, kLeft - 5, Y);
    cairo_line_to(cr, kLeft, Y);
    cairo_stroke(cr);
    show_text(cr, kLeft - 9, Y, ay.log ? decade_text(y) : tick_text(y, ay.decimals), 1.0, 0.5);
  }

  // Axis labels and the title.
  cairo_set_font_size(cr, 15);
  show_text(cr, (kLeft + kRight) / 2, kBottom + 34, "epoch", 0.5, 0.0);
  cairo_save(cr);
  cairo_translate(cr, 22, (kTop + kBottom) / 2);
  cairo_rotate(cr, -kPi / 2);
  show_text(cr, 0, 0, shorten(y_label, 40) + (ay.log ? " (log scale)" : ""), 0.5, 0.5);
  cairo_restore(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 18);
  show_text(cr, kMetricPlotWidth / 2.0, 12, shorten(title, 80), 0.5, 0.0);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  std::string shared;
  const std::vector<std::string> labels = distinct_labels(series, shared);
  if (!shared.empty()) {  // what every job has, once, under the title
    cairo_set_font_size(cr, 12);
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    show_text(cr, kMetricPlotWidth / 2.0, 36, shorten("all jobs: " + shared, 140), 0.5, 0.0);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  }

  if (points == 0) {
    cairo_set_font_size(cr, 16);
    cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
    show_text(cr, (kLeft + kRight) / 2, (kTop + kBottom) / 2, "no results yet", 0.5, 0.5);
  }

  // The lines, clipped to the plot area; a dot on every point so one-epoch jobs show too.
  cairo_save(cr);
  cairo_rectangle(cr, kLeft, kTop, kRight - kLeft, kBottom - kTop);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (size_t k = 0; k < series.size(); ++k) {
    const Rgb c = kPalette[k % kPaletteSize];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_set_line_width(cr, 2);
    bool pen_down = false;
    for (const auto& [x, y] : series[k].points) {
      if (!std::isfinite(x) || !std::isfinite(y)) {
        pen_down = false;
        continue;
      }
      if (pen_down) {
        cairo_line_to(cr, px(x), py(y));
      } else {
        cairo_move_to(cr, px(x), py(y));
        pen_down = true;
      }
    }
    cairo_stroke(cr);
    for (const auto& [x, y] : series[k].points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      cairo_arc(cr, px(x), py(y), 3, 0, 2 * kPi);
      cairo_fill(cr);
    }
  }
  cairo_restore(cr);

  // Legend.
  cairo_set_font_size(cr, 12);
  const double legend_x = kRight + 18;
  double legend_y = kTop + 4;
  const size_t shown = std::min(series.size(), kLegendRows);
  for (size_t k = 0; k < shown; ++k) {
    const Rgb c = kPalette[k % kPaletteSize];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_set_line_width(cr, 3);
    cairo_move_to(cr, legend_x, legend_y + 7);
    cairo_line_to(cr, legend_x + 22, legend_y + 7);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    show_text(cr, legend_x + 30, legend_y + 7, shorten(labels[k], 34), 0.0, 0.5);
    legend_y += 19;
  }
  if (series.size() > shown) {
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    show_text(cr, legend_x, legend_y + 7, "+" + std::to_string(series.size() - shown) + " more", 0.0, 0.5);
  }

  cairo_surface_flush(surface.get());
  std::string png;
  const cairo_status_t status = cairo_surface_write_to_png_stream(
      surface.get(),
      [](void* closure, const unsigned char* data, unsigned int length) {
        static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
        return CAIRO_STATUS_SUCCESS;
      },
      &png);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw Error(png_path, std::string("cannot write the metric plot: ") + cairo_status_to_string(status),
                "check that the directory exists and is writable");
  }
  AtomicWriteOptions options;
  options.noun = "metric plot";
  options.fix = "check that the directory exists and is writable";
  write_file_atomically(png_path, png, options);
}

}  // namespace trainer::launch
