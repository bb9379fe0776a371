// logger.tensorboard: scalars into TensorBoard event files under `save_dir`.
#include "trainer/engine/loggers/tensorboard_logger.h"

#include "trainer/formats/tensorboard_writer.h"
#include "trainer/options/option_reader.h"

namespace trainer::engine {
namespace {

class TensorBoardLogger final : public MetricLogger {
 public:
  explicit TensorBoardLogger(const std::string& directory) : writer_(directory) {}

  void log_metrics(const MetricRow& metrics, int64_t epoch, int64_t step) override {
    MetricRow values = metrics;
    if (epoch >= 0) values.emplace_back("epoch", static_cast<double>(epoch));  // as Lightning logs it
    writer_.add_scalars(std::max<int64_t>(step, 0), values);
  }
  void flush() override { writer_.flush(); }

 private:
  formats::TensorBoardWriter writer_;
};

}  // namespace

std::unique_ptr<MetricLogger> make_tensorboard_logger(const config::ConfigView& section, const std::string& run_dir) {
  return std::make_unique<TensorBoardLogger>(
      options::OptionReader(section).get_or<std::string>("save_dir", run_dir + "/tensorboard"));
}

}  // namespace trainer::engine
