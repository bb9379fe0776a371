#include "trainer/models/option_reading.h"

#include <sstream>
#include <utility>

#include "trainer/util/error.h"

namespace trainer::models {
namespace {

// 1.5 rather than std::to_string's 1.500000.
std::string shortest(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string option_where(const config::ConfigView& view, std::string_view key) {
  if (view.has(key)) {
    const config::Origin& origin = view.node(key).origin();
    if (origin.known()) return origin.describe() + " (" + view.full_path(key) + ")";
  }
  return view.full_path(key);
}

int64_t read_positive_int(const config::ConfigView& view, std::string_view key, int64_t fallback) {
  const int64_t value = view.get_or<int64_t>(key, fallback);
  if (value < 1) {
    throw Error(option_where(view, key),
                view.full_path(key) + " is " + std::to_string(value) + ", but it must be at least 1",
                "Set it to a positive size, e.g. " + view.full_path(key) + "=" + std::to_string(fallback));
  }
  return value;
}

std::vector<int64_t> read_positive_int_list(const config::ConfigView& view, std::string_view key,
                                            std::vector<int64_t> fallback) {
  std::vector<int64_t> values = view.get_or<std::vector<int64_t>>(key, std::move(fallback));
  const std::string example = view.full_path(key) + "=[32,64]";
  if (values.empty()) {
    throw Error(option_where(view, key), view.full_path(key) + " is an empty list",
                "List at least one size, e.g. " + example);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 1) {
      throw Error(option_where(view, key),
                  view.full_path(key) + "[" + std::to_string(i) + "] is " + std::to_string(values[i]) +
                      ", but sizes must be at least 1",
                  "Use positive sizes, e.g. " + example);
    }
  }
  return values;
}

double read_dropout(const config::ConfigView& view, std::string_view key, double fallback) {
  const double value = view.get_or<double>(key, fallback);
  if (!(value >= 0.0 && value < 1.0)) {
    throw Error(option_where(view, key),
                view.full_path(key) + " is " + shortest(value) + ", but a dropout probability must be in [0, 1)",
                "Set e.g. " + view.full_path(key) + "=0.2 (or 0 for no dropout)");
  }
  return value;
}

namespace {

int64_t agree_num_classes(const config::ConfigView& view, const InputSpec& spec, int64_t value) {
  if (value != spec.num_classes) {
    throw Error(option_where(view, "num_classes"),
                view.full_path("num_classes") + " is " + std::to_string(value) + ", but the data " +
                    (spec.num_classes == 1 ? std::string("needs one output")
                                           : "has " + std::to_string(spec.num_classes) + " classes") +
                    " (" + spec.num_classes_key + ")",
                "Set " + view.full_path("num_classes") + "=" + std::to_string(spec.num_classes) +
                    " (or remove it: the model then takes the data's class count)");
  }
  return value;
}

void check_reported_classes(const config::ConfigView& view, const InputSpec& spec) {
  if (spec.num_classes < 1) {
    throw Error(view.prefix(), "the data reports " + std::to_string(spec.num_classes) + " classes",
                "This is a bug in the dataset: it must report at least one class");
  }
}

int64_t image_channels(const config::ConfigView& view, const InputSpec& spec, const std::string& model) {
  if (spec.sample_shape.size() != 3) {
    throw Error(view.prefix(),
                "the " + model +
                    " model needs image samples shaped [channels, height, width], "
                    "but the data gives samples of shape " +
                    shape_string(spec.sample_shape),
                "Use image data (e.g. data=fashion_mnist), or model=mlp for flat samples");
  }
  // [height, width, channels] (numpy's and Pillow's layout) read as [channels, height, width]
  // would train on `height` channels of width-3 images, or fail later with advice that misleads.
  const std::vector<int64_t>& shape = spec.sample_shape;
  if (shape[2] >= 1 && shape[2] <= 4 && shape[0] > 4 && shape[1] > 4) {
    throw Error(spec.channels_key,
                "the data's samples are shaped " + shape_string(shape) + ": channels last (height, width, " +
                    std::to_string(shape[2]) + " channel" + (shape[2] == 1 ? "" : "s") + "), but the " + model +
                    " model reads [channels, height, width]",
                "Save the images channels first: numpy.transpose(x, (0, 3, 1, 2)) (PyTorch: x.permute(0, 3, 1, 2)).");
  }
  return spec.sample_shape[0];
}

int64_t agree_in_channels(const config::ConfigView& view, const InputSpec& spec, const std::string& model,
                          int64_t value) {
  const int64_t channels = spec.sample_shape[0];
  if (value != channels) {
    throw Error(option_where(view, "in_channels"),
                view.full_path("in_channels") + " is " + std::to_string(value) + " (the " + model +
                    " model's input channels), but the data gives samples of shape " + shape_string(spec.sample_shape) +
                    " (" + std::to_string(channels) + " channels, " + spec.channels_key + ")",
                "Set " + view.full_path("in_channels") + "=" + std::to_string(channels));
  }
  return value;
}

}  // namespace

int64_t read_num_classes(const config::ConfigView& view, const InputSpec& spec) {
  check_reported_classes(view, spec);
  return agree_num_classes(view, spec, read_positive_int(view, "num_classes", spec.num_classes));
}

int64_t read_num_classes(const options::OptionReader& reader, const InputSpec& spec) {
  check_reported_classes(reader.view(), spec);
  return agree_num_classes(reader.view(), spec,
                           reader.get<std::optional<int64_t>>("num_classes").value_or(spec.num_classes));
}

int64_t read_in_channels(const options::OptionReader& reader, const InputSpec& spec, const std::string& model) {
  const int64_t channels = image_channels(reader.view(), spec, model);
  return agree_in_channels(reader.view(), spec, model,
                           reader.get<std::optional<int64_t>>("in_channels").value_or(channels));
}

int64_t read_in_channels(const config::ConfigView& view, const InputSpec& spec, const std::string& model) {
  const int64_t channels = image_channels(view, spec, model);
  return agree_in_channels(view, spec, model, read_positive_int(view, "in_channels", channels));
}

}  // namespace trainer::models
