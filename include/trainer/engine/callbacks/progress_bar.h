// The live progress bar on a terminal: epoch, batch, last logged loss, samples/s and the epoch's
// ETA, redrawn at most four times a second. It only reads host-side counters and the loss already
// brought to the host at logging steps, so it adds no device sync. Inactive when disabled or
// when the console is not a terminal (then the periodic log lines are the progress report).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace trainer::engine {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool active() const { return active_; }

  void start_epoch(int64_t epoch, int64_t max_epochs, int64_t total_batches, int64_t first_batch);
  // After each training batch; draws when the last draw is old enough.
  void update(int64_t batches_done, int64_t samples) {
    if (!active_) return;
    batches_done_ = batches_done;
    samples_ += samples;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ >= std::chrono::milliseconds(250)) draw(now);
  }
  void set_loss(double loss) { loss_ = loss; }
  // Removes the bar (before the epoch's summary line).
  void clear();

  // The bar's text for the given state (public for tests).
  static std::string render(int64_t epoch, int64_t max_epochs, int64_t done, int64_t total, std::optional<double> loss,
                            double samples_per_second, double eta_seconds, int width);

 private:
  void draw(std::chrono::steady_clock::time_point now);

  bool active_ = false;
  int64_t epoch_ = 0, max_epochs_ = 0, total_ = 0, first_batch_ = 0, batches_done_ = 0, samples_ = 0;
  std::optional<double> loss_;
  std::chrono::steady_clock::time_point epoch_start_, last_draw_;
};

}  // namespace trainer::engine
