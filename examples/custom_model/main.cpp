// my_trainer: the trainer command line plus a model, a dataset, a callback and a logger of this
// program's own, each added with one TRAINER_REGISTER_* line. Their configs live in configs/
// (passed with -cd); everything else (flags, overrides, sweeps, run directories, checkpoints)
// is trainer's:
//   my_trainer fit -cd configs model=logreg data=quadrants callbacks=with_summary logger=with_jsonl
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include "trainer/cli/in_process_engine.h"
#include "trainer/cli/run_cli.h"
#include "trainer/data/datasets.h"
#include "trainer/engine/callbacks/callback.h"
#include "trainer/engine/loggers/metric_logger.h"
#include "trainer/models/model_registry.h"
#include "trainer/util/error.h"

namespace {

// --- A model: multinomial logistic regression on the flattened image. -------------------------
class LogisticRegression : public trainer::models::Model {
 public:
  LogisticRegression(int64_t inputs, int64_t classes, bool bias) : Model("LogisticRegression") {
    linear_ = register_module("linear", torch::nn::Linear(torch::nn::LinearOptions(inputs, classes).bias(bias)));
  }
  at::Tensor forward(const at::Tensor& inputs) override { return linear_->forward(inputs.flatten(1)); }
  int64_t flops_per_sample() const override {
    return 2 * linear_->options.in_features() * linear_->options.out_features();
  }

 private:
  torch::nn::Linear linear_{nullptr};
};

TRAINER_REGISTER_MODEL("logreg", [](const trainer::config::ConfigView& cfg, const trainer::models::InputSpec& spec) {
  int64_t inputs = 1;
  for (int64_t d : spec.sample_shape) inputs *= d;
  return std::make_shared<LogisticRegression>(inputs, spec.num_classes, cfg.get_or<bool>("bias", true));
});

// --- A dataset: one bright quadrant per image, the quadrant is the label. ----------------------
trainer::data::DataSplits make_quadrants(const trainer::data::DataOptions& options) {
  const int64_t h = options.image_shape.size() == 3 ? options.image_shape[1] : 0;
  const int64_t w = options.image_shape.size() == 3 ? options.image_shape[2] : 0;
  if (h < 2 || w < 2 || options.num_classes != 4) {
    throw trainer::Error("data", "quadrants needs image_shape [C, H, W] with H, W >= 2 and num_classes 4",
                         "Use data=quadrants as shipped in examples/custom_model/configs.");
  }
  // A key of this dataset's own (configs/data/quadrants.yaml), read from the `data` section.
  const double brightness = options.section ? options.section->get_or<double>("brightness", 0.6) : 0.6;
  if (!(brightness > 0.0 && brightness <= 1.0)) {
    throw trainer::Error("data.brightness", "must lie in (0, 1], got " + std::to_string(brightness));
  }
  at::Generator gen = at::detail::createCPUGenerator(options.seed);
  const int64_t test_count = std::max<int64_t>(1, options.num_samples / 8);
  const int64_t total = options.num_samples + test_count;
  at::Tensor labels = at::randint(0, 4, {total}, gen, at::kLong);
  at::Tensor images = at::rand({total, options.image_shape[0], h, w}, gen, at::kFloat).mul_(0.3);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t q = labels[i].item<int64_t>();
    images[i].narrow(1, (q / 2) * (h / 2), h / 2).narrow(2, (q % 2) * (w / 2), w / 2).add_(brightness);
  }
  images = images.clamp(0, 1).mul(255).to(at::kByte);  // uint8 like every built-in dataset
  trainer::data::TensorDataset all(images, labels);
  trainer::data::TensorDataset pool = all.subset(at::arange(options.num_samples, at::kLong));
  trainer::data::TensorDataset test = all.subset(at::arange(options.num_samples, total, at::kLong));
  auto [train, val] = trainer::data::split_train_val(pool, options.val_fraction, options.seed);
  return {std::move(train), std::move(val), std::move(test)};
}

TRAINER_REGISTER_DATASET("quadrants", make_quadrants);

// --- A callback: one line per epoch in a text file, and a metric sent to every logger. ----------
class EpochSummary : public trainer::engine::Callback {
 public:
  EpochSummary(std::string path, std::string monitor) : path_(std::move(path)), monitor_(std::move(monitor)) {}

  void on_epoch_end(trainer::engine::FitContext& ctx, const std::map<std::string, double>& metrics,
                    bool validated) override {
    auto found = metrics.find(monitor_);
    if (validated && found != metrics.end() && found->second > best_) best_ = found->second;
    std::ofstream out(path_, std::ios::app);
    out << "epoch " << ctx.epoch() << " step " << ctx.global_step() << " " << monitor_ << " "
        << (found != metrics.end() ? std::to_string(found->second) : "n/a") << "\n";
    if (!out) throw trainer::Error(path_, "cannot write the epoch summary");
    if (best_ > -1.0) ctx.log({{"summary/best", best_}});
  }
  // Kept in checkpoints, so a resumed run remembers its best value.
  std::string state() const override { return std::to_string(best_); }
  void load_state(const std::string& state) override { best_ = std::stod(state); }

 private:
  std::string path_, monitor_;
  double best_ = -1.0;
};

TRAINER_REGISTER_CALLBACK("epoch_summary", [](const trainer::config::ConfigView& cfg) {
  return std::make_unique<EpochSummary>(cfg.get<std::string>("path"), cfg.get_or<std::string>("monitor", "val/acc"));
});

// --- A logger: every logging event as one JSON object per line. --------------------------------
class JsonLinesLogger : public trainer::engine::MetricLogger {
 public:
  explicit JsonLinesLogger(const std::string& path) : out_(path, std::ios::app) {
    if (!out_) throw trainer::Error(path, "cannot open the JSON-lines log", "Check logger.jsonl.save_dir.");
  }
  void log_metrics(const trainer::engine::MetricRow& metrics, int64_t epoch, int64_t step) override {
    std::ostringstream line;
    line.precision(9);
    line << "{\"epoch\": " << epoch << ", \"step\": " << step;
    for (const auto& [name, value] : metrics) {
      line << ", \"" << name << "\": ";
      if (std::isfinite(value)) {
        line << value;
      } else {
        line << "null";
      }
    }
    out_ << line.str() << "}\n";
  }
  void flush() override { out_.flush(); }

 private:
  std::ofstream out_;
};

TRAINER_REGISTER_LOGGER("jsonl", [](const trainer::config::ConfigView& cfg, const std::string& run_dir) {
  const std::string dir = cfg.get_or<std::string>("save_dir", run_dir);
  return std::make_unique<JsonLinesLogger>(dir + "/" + cfg.get_or<std::string>("name", "metrics.jsonl"));
});

}  // namespace

int main(int argc, char** argv) { return trainer::run_cli(argc, argv, &trainer::kInProcessEngine); }
