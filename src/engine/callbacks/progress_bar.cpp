#include "trainer/engine/callbacks/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

int terminal_width() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 100;
}

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<long long>(seconds + 0.5);
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%02lld:%02lld", total / 60, total % 60);
  }
  return buffer;
}

}  // namespace

ProgressBar::ProgressBar(bool enabled) : active_(enabled && log::console_is_terminal()) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::start_epoch(int64_t epoch, int64_t max_epochs, int64_t total_batches, int64_t first_batch) {
  epoch_ = epoch;
  max_epochs_ = max_epochs;
  total_ = total_batches;
  first_batch_ = first_batch;
  batches_done_ = first_batch;
  samples_ = 0;
  epoch_start_ = std::chrono::steady_clock::now();
  last_draw_ = {};
}

void ProgressBar::clear() {
  if (active_) log::set_status("");
}

void ProgressBar::draw(std::chrono::steady_clock::time_point now) {
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - epoch_start_).count();
  const int64_t batches_this_run = batches_done_ - first_batch_;
  const double rate = elapsed > 0 ? static_cast<double>(samples_) / elapsed : 0.0;
  const double eta = batches_this_run > 0
                         ? elapsed / static_cast<double>(batches_this_run) * static_cast<double>(total_ - batches_done_)
                         : NAN;
  log::set_status(render(epoch_, max_epochs_, batches_done_, total_, loss_, rate, eta, terminal_width()));
}

std::string ProgressBar::render(int64_t epoch, int64_t max_epochs, int64_t done, int64_t total,
                                std::optional<double> loss, double samples_per_second, double eta_seconds, int width) {
  char head[64];
  if (max_epochs > 0) {
    std::snprintf(head, sizeof(head), "Epoch %lld/%lld ", static_cast<long long>(epoch),
                  static_cast<long long>(max_epochs - 1));
  } else {  // trainer.max_epochs=-1: no epoch limit
    std::snprintf(head, sizeof(head), "Epoch %lld ", static_cast<long long>(epoch));
  }
  char tail[160];
  char loss_text[32] = "";
  if (loss) std::snprintf(loss_text, sizeof(loss_text), " loss %.4f", *loss);
  std::snprintf(tail, sizeof(tail), " %lld/%lld%s %.0f samples/s ETA %s", static_cast<long long>(done),
                static_cast<long long>(total), loss_text, samples_per_second, clock_text(eta_seconds).c_str());
  std::string line = head;
  const int bar_width =
      std::max(10, std::min(40, width - static_cast<int>(line.size() + std::string(tail).size()) - 3));
  const double fraction =
      total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(fraction * bar_width);
  line += "|" + std::string(static_cast<size_t>(filled), '#') +
          std::string(static_cast<size_t>(bar_width - filled), '-') + "|";
  line += tail;
  if (static_cast<int>(line.size()) >= width) line.resize(static_cast<size_t>(width - 1));
  return line;
}

}  // namespace trainer::engine
