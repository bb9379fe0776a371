#include "trainer/data/loader_timing.h"

#include <cstdio>

namespace trainer::data {
namespace {

std::string rounded(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

std::optional<std::string> data_bound_warning(const LoaderTiming& timing, double epoch_seconds, int num_workers,
                                              int64_t epoch, int cores) {
  if (timing.batches_timed < kDataBoundMinBatches || !(epoch_seconds > 0)) return std::nullopt;
  const double share = timing.waited_seconds / epoch_seconds;
  if (!(share > kDataBoundShare)) return std::nullopt;
  const double per_thread = timing.samples_per_thread_second();
  std::string text = "data-bound: the training loop waited for batches " + rounded(100 * share, "%.0f") +
                     "% of epoch " + std::to_string(epoch) + " (" + rounded(timing.waited_seconds, "%.2f") + " of " +
                     rounded(epoch_seconds, "%.2f") + " s). ";
  text += num_workers == 0 ? std::string("The batches are made on the training thread (data.num_workers=0)")
                           : "The loader has " + std::to_string(num_workers) + " worker thread(s)";
  if (per_thread > 0) {
    text += ", making " + rounded(per_thread, "%.0f") + " samples/s per thread (read, decoded, transformed)";
  }
  const std::string smaller = "or store the images nearer the size they are used at (smaller files decode faster)";
  if (num_workers < cores) {
    text += ". Raise data.num_workers (" + std::to_string(num_workers) + " now; data.num_workers=auto gives " +
            std::to_string(cores) + " here, this process's share of the cores), " + smaller + ".";
  } else {
    text += ", as many as this process's share of the cores (" + std::to_string(cores) +
            "): more threads would not help; give the job more cores " + smaller + ".";
  }
  return text;
}

}  // namespace trainer::data
