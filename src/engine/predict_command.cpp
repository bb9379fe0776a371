// trainer predict: a checkpoint's model over the images of data.root (data=image_folder) or the
// test split (other datasets), one CSV row per sample in the order the data lists them: the
// sample, the most likely class and its probability, the true class when known, and the top k; for
// a regression (data.task=regression), the predicted value and the true one when known.
// Written to the evaluation's own run directory, never into the training run.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/functional/activation.h>

#include "trainer/engine/precision/autocast_guard.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/options/option_reader.h"
#include "trainer/options/option_table.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

#include "trainer_impl.h"

namespace trainer::engine {
namespace {

// One CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string probability_text(float p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6f", static_cast<double>(p));
  return text;
}

// Ctrl-C / SIGTERM ends the pass before its next batch, and nothing is written.
void stop_if_signalled(int64_t rows, int64_t samples) {
  const int signal = stop_signal_received();
  if (signal == 0) return;
  throw Error("signal " + std::to_string(signal),
              "predict stopped after " + std::to_string(rows) + " of " + std::to_string(samples) +
                  " samples; predictions.csv was not written",
              "Run the same command again; predicting never changes the checkpoint.");
}

}  // namespace

at::Tensor Trainer::Impl::predict_forward(const data::Batch& batch) {
  AutocastGuard autocast_scope(device.type(), autocast_dtype, autocast);
  at::Tensor inputs = batch.inputs;
  if (param_dtype != at::kFloat) inputs = inputs.to(param_dtype);
  return model->forward(inputs);
}

int Trainer::Impl::predict_command() {
  if (group && group->world_size() > 1) {  // world_size counts a pipeline's processes as one
    throw Error("trainer.devices", "trainer predict runs in one process, not " + std::to_string(group->world_size()),
                "Set trainer.devices=1 (a prediction pass over a folder needs no data parallelism).");
  }
  const options::OptionReader predict(config::ConfigView(config).sub("predict"), "", "predict");
  const auto wanted_k = predict.get<int64_t>("top_k");
  if (predict_set->size() == 0) {
    throw Error("data", "predict has no sample: the test split is empty",
                data_options.name == "webdataset" ? "Give the shards to predict on: data.test_shards=<path or pattern>."
                : data_options.name == "tensors"  ? "Give the inputs to predict on: data.test_inputs=<.npy file> (with "
                                                    "data.test_targets=<.npy file>, or null when there are no labels)."
                : data_options.name == "csv"
                    ? "Give the table to predict on: data.test_path=<.csv file> (its label column is optional)."
                : data_options.name == "image_folder"
                    ? "Give the images to predict on: data.root=<a folder of images> (class folders are optional)."
                    : "Use a dataset with a test split, or data=image_folder with data.root=<a folder of images>.");
  }
  const int64_t batches = evaluation_batches(*predict_set, options.limit_predict);
  if (batches == 0) {
    throw Error("trainer.limit_predict_batches",
                "predict has no batch to run: trainer.limit_predict_batches leaves none",
                "Set trainer.limit_predict_batches to a share above 0 or a number of batches.");
  }
  load_model_to_evaluate("predicting with");
  if (regression) return predict_values(batches);
  const int64_t classes = input_spec.num_classes;
  const int64_t k = std::min<int64_t>(wanted_k, classes);
  // The default k (5) listing a 3-class model's 3 is no news; a k the user asked for is.
  const options::Section* section = options::find_section("predict", "");
  const options::Option* top_k = section != nullptr ? options::find_option(*section, "top_k") : nullptr;
  const bool asked = top_k == nullptr || options::default_node(*top_k).type() != config::NodeType::kInt ||
                     options::default_node(*top_k).as_int() != wanted_k;
  if (wanted_k > classes && asked) {
    log::warning("predict.top_k=" + std::to_string(wanted_k) + " is more than the " + std::to_string(classes) +
                 " classes: predictions.csv lists all " + std::to_string(classes));
  }
  // Data that names no classes (shards packed from an image folder keep only the indices) takes
  // the checkpoint's names, when it has one for every class.
  std::vector<std::string> names = class_names;
  if (names.empty() && options.ckpt_path) {
    names = formats::read_checkpoint_summary(resolve_ckpt_path(*options.ckpt_path)).summary.class_names;
    if (static_cast<int64_t>(names.size()) != classes) names.clear();
  }
  auto name_of = [&](int64_t label) {
    return names.empty() || label < 0 || label >= static_cast<int64_t>(names.size())
               ? std::to_string(label)
               : names[static_cast<size_t>(label)];
  };

  std::string csv = "sample,prediction,probability,target";
  for (int64_t i = 1; i <= k; ++i) {
    csv += ",top" + std::to_string(i) + ",top" + std::to_string(i) + "_probability";
  }
  csv += "\n";

  data::BatchLoader loader = make_loader(predict_set, /*train=*/false);
  torch::NoGradGuard no_grad;
  model->eval();
  loader.start_epoch(0);
  int64_t position = 0, labelled = 0, correct = 0, rows = 0;
  const int64_t samples = std::min(predict_set->size(), batches * data_options.batch_size);
  for (int64_t done = 0; done < batches; ++done) {
    stop_if_signalled(rows, samples);
    const auto batch = loader.next();
    if (!batch) break;
    const at::Tensor logits = predict_forward(*batch);
    const at::Tensor probabilities = torch::softmax(logits.to(at::kFloat), 1);
    const auto [top_p, top_class] = probabilities.topk(k, 1);
    const at::Tensor p = top_p.to(at::kCPU).contiguous();
    const at::Tensor c = top_class.to(at::kCPU).contiguous();
    const at::Tensor targets = batch->targets.to(at::kCPU).contiguous();
    const int64_t n = p.size(0);
    const float* pp = p.data_ptr<float>();
    const int64_t* cp = c.data_ptr<int64_t>();
    const int64_t* tp = targets.data_ptr<int64_t>();
    const int64_t* ip = batch->indices.defined() ? batch->indices.data_ptr<int64_t>() : nullptr;
    for (int64_t row = 0; row < n; ++row) {
      const int64_t sample = ip != nullptr ? ip[row] : position + row;
      const int64_t target = tp[row];
      csv += csv_field(batch->names.empty() ? predict_set->sample_name(sample) : batch->names[row]) + "," +
             csv_field(name_of(cp[row * k])) + "," + probability_text(pp[row * k]) + "," +
             (target >= 0 ? csv_field(name_of(target)) : std::string());
      for (int64_t i = 0; i < k; ++i) {
        csv += "," + csv_field(name_of(cp[row * k + i])) + "," + probability_text(pp[row * k + i]);
      }
      csv += "\n";
      if (target >= 0) {
        ++labelled;
        if (cp[row * k] == target) ++correct;
      }
    }
    position += batch->requested;  // the samples asked for, also those on_bad_sample=skip left out
    rows += n;
  }
  model->train();
  const std::string path = run_dir + "/predictions.csv";
  write_file_atomically(path, csv, {"predictions file"});
  std::string summary =
      "predict: wrote " + std::to_string(rows) + " predictions (top " + std::to_string(k) + ") to " + path;
  if (labelled > 0) {
    const double accuracy = static_cast<double>(correct) / static_cast<double>(labelled);
    summary += "; accuracy " + fixed(accuracy, 4) + " on the " + std::to_string(labelled) + " with a known class";
    std::printf("predict/acc=%.6f predict/count=%lld\n", accuracy, static_cast<long long>(labelled));
    std::fflush(stdout);
  }
  log::info(summary);
  return 0;
}

int Trainer::Impl::predict_values(int64_t batches) {
  std::string csv = "sample,prediction,target\n";
  data::BatchLoader loader = make_loader(predict_set, /*train=*/false);
  torch::NoGradGuard no_grad;
  model->eval();
  loader.start_epoch(0);
  int64_t position = 0, known = 0, rows = 0;
  double abs_error = 0.0, squared_error = 0.0;
  // The shortest text that reads back as the same value, as pandas writes floats (a double, or a
  // float32 target as the table gave it).
  const auto value_text = [](auto value) {
    char text[40];
    const auto written = std::to_chars(text, text + sizeof(text), value);
    return std::string(text, written.ptr);
  };
  const int64_t samples = std::min(predict_set->size(), batches * data_options.batch_size);
  for (int64_t done = 0; done < batches; ++done) {
    stop_if_signalled(rows, samples);
    const auto batch = loader.next();
    if (!batch) break;
    const at::Tensor outputs = predict_forward(*batch);
    const at::Tensor values = outputs.to(at::kCPU, at::kDouble).reshape({-1}).contiguous();
    const at::Tensor targets = batch->targets.to(at::kCPU, at::kDouble).contiguous();
    if (values.numel() != targets.numel()) {
      throw Error("model",
                  "gives " + std::to_string(values.numel() / std::max<int64_t>(1, targets.numel())) +
                      " outputs per sample, but data.task=regression predicts one number",
                  "Use a checkpoint of a model with one output.");
    }
    const int64_t n = values.numel();
    const double* vp = values.data_ptr<double>();
    const double* tp = targets.data_ptr<double>();
    const int64_t* ip = batch->indices.defined() ? batch->indices.data_ptr<int64_t>() : nullptr;
    for (int64_t row = 0; row < n; ++row) {
      // Back to the target's units: the model learnt (value - mean) / std.
      const double prediction = vp[row] * regression->std + regression->mean;
      const int64_t sample = ip != nullptr ? ip[row] : position + row;
      // The target as the data gave it where the dataset kept it (the batch's is scaled float32).
      const std::optional<float> given = predict_set->target_value(sample);
      const double target = given ? static_cast<double>(*given) : tp[row] * regression->std + regression->mean;
      csv += csv_field(batch->names.empty() ? predict_set->sample_name(sample) : batch->names[row]) + "," +
             value_text(prediction) + "," +
             (std::isnan(target) ? std::string()
              : given            ? value_text(*given)
                                 : value_text(target)) +
             "\n";
      if (!std::isnan(target)) {
        ++known;
        abs_error += std::abs(prediction - target);
        squared_error += (prediction - target) * (prediction - target);
      }
    }
    position += batch->requested;  // the samples asked for, also those on_bad_sample=skip left out
    rows += n;
  }
  model->train();
  const std::string path = run_dir + "/predictions.csv";
  write_file_atomically(path, csv, {"predictions file"});
  std::string summary = "predict: wrote " + std::to_string(rows) + " predictions to " + path;
  if (known > 0) {
    const double mae = abs_error / static_cast<double>(known);
    const double rmse = std::sqrt(squared_error / static_cast<double>(known));
    summary += "; mae " + general(mae) + ", rmse " + general(rmse) + " on the " + std::to_string(known) +
               " with a known target";
    std::printf("predict/mae=%.10g predict/rmse=%.10g predict/count=%lld\n", mae, rmse, static_cast<long long>(known));
    std::fflush(stdout);
  }
  log::info(summary);
  return 0;
}

}  // namespace trainer::engine
