#include "trainer/engine/metrics_csv.h"


#include "trainer/engine/posix_files.h"
#include "trainer/util/error.h"

namespace trainer::engine {

const std::vector<std::string>& MetricsCsv::columns() {
  static const std::vector<std::string> names = {
      "epoch",    "step",           "lr",           "train/loss", "train/acc", "train/loss_epoch",
      "train/acc_epoch", "val/loss", "val/acc",     "test/loss",  "test/acc",  "samples_per_sec"};
  return names;
}

MetricsCsv::MetricsCsv(const std::string& path) {
  const bool exists = posix::exists(path);
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr) throw Error(path, "cannot open metrics file for writing");
  if (!exists) {
    std::string header;
    for (const auto& name : columns()) header += (header.empty() ? "" : ",") + name;
    std::fprintf(file_, "%s\n", header.c_str());
    std::fflush(file_);
  }
}

MetricsCsv::~MetricsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsCsv::row(int64_t epoch, int64_t step, double lr,
                     const std::vector<std::pair<std::string, double>>& metrics) {
  std::string line = epoch >= 0 ? std::to_string(epoch) : "";
  line += ",";
  line += step >= 0 ? std::to_string(step) : "";
  line += ",";
  if (lr > 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.6g", lr);
    line += buffer;
  }
  const auto& names = columns();
  for (size_t i = 3; i < names.size(); ++i) {
    line += ",";
    for (const auto& [name, value] : metrics) {
      if (name == names[i]) {
        char buffer[32];
        std::snprintf(buffer, sizeof(buffer), "%.6g", value);
        line += buffer;
      }
    }
  }
  std::fprintf(file_, "%s\n", line.c_str());
  std::fflush(file_);
}

}  // namespace trainer::engine
