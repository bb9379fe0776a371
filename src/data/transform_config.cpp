#include "trainer/data/transform_config.h"

#include <cmath>
#include <tuple>
#include <utility>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

namespace trainer::data {
namespace {

using Kind = image::TransformStep::Kind;

struct Spec {
  std::string name;                 // torchvision's, snake case
  std::string torchvision;          // its class name
  std::vector<std::string> params;  // the first is the one a bare value gives
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = {
      {"resize", "Resize", {"size"}},
      {"center_crop", "CenterCrop", {"size"}},
      {"random_resized_crop", "RandomResizedCrop", {"size", "scale", "ratio"}},
      {"random_crop", "RandomCrop", {"size", "padding"}},
      {"horizontal_flip", "RandomHorizontalFlip", {"p"}},
      {"color_jitter", "ColorJitter", {"brightness", "contrast", "saturation"}},
      {"normalize", "Normalize", {"mean", "std"}},
  };
  return all;
}

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

// One step's parameters, read with errors that name the step.
class StepReader {
 public:
  StepReader(std::string where, const Spec& spec) : where_(std::move(where)), spec_(spec) {}

  // The given parameters: a map of them, one value for the first, or none.
  void take(const config::Node* given) {
    if (given == nullptr || given->is_null()) return;
    if (!given->is_map()) {
      values_.emplace_back(spec_.params.front(), given);
      return;
    }
    for (const config::Node::Entry& entry : given->entries()) {
      bool known = false;
      for (const std::string& param : spec_.params) known = known || param == entry.key;
      if (!known) {
        std::string problem = spec_.name + " has no parameter '" + entry.key + "'";
        const std::string closest = config::closest_match(entry.key, spec_.params);
        if (!closest.empty()) problem += "; did you mean '" + closest + "'?";
        if (entry.key == "hue") problem += " (hue is not supported: brightness, contrast and saturation are)";
        fail(problem,
             "Its parameters are " + join(spec_.params) + ", as torchvision's " + spec_.torchvision + " names them.");
      }
      values_.emplace_back(entry.key, &entry.value);
    }
  }

  const config::Node* find(const std::string& param) const {
    for (const auto& [name, value] : values_) {
      if (name == param) return value;
    }
    return nullptr;
  }

  double number(const std::string& param, double fallback, double minimum, double maximum) const {
    const config::Node* value = find(param);
    if (value == nullptr) return fallback;
    const double x = as_number(param, *value);
    if (!(x >= minimum && x <= maximum)) {
      fail(param + " is " + config::python_str(*value) + ", outside [" + text(minimum) + ", " + text(maximum) + "]");
    }
    return x;
  }

  // size: an int (a square for crops, the shorter side for resize), or [height, width].
  std::pair<int, int> size(bool shorter_side) const {
    const config::Node* value = find("size");
    if (value == nullptr)
      fail("needs its size", "Give it: {" + spec_.name + ": 64} or {" + spec_.name + ": [64, 48]}.");
    std::vector<int> sides;
    if (value->is_list()) {
      for (const config::Node& item : value->items()) sides.push_back(positive_int("size", item));
    } else {
      sides.push_back(positive_int("size", *value));
    }
    if (sides.size() == 1) return {sides[0], shorter_side ? 0 : sides[0]};
    if (sides.size() == 2) return {sides[0], sides[1]};
    fail("size is " + config::python_str(*value) + ": one side, or [height, width]");
  }

  int padding() const {
    const config::Node* value = find("padding");
    if (value == nullptr) return 0;
    if (value->type() != config::NodeType::kInt || value->as_int() < 0 || value->as_int() > 4096) {
      fail("padding is " + config::python_str(*value) + ": one int, 0 or more, on every side",
           "Give padding: 4 (a different padding per side is not supported).");
    }
    return static_cast<int>(value->as_int());
  }

  std::pair<double, double> range(const std::string& param, std::pair<double, double> fallback) const {
    const config::Node* value = find(param);
    if (value == nullptr) return fallback;
    if (!value->is_list() || value->items().size() != 2) {
      fail(param + " is " + config::python_str(*value) + ": expected [min, max]");
    }
    return {as_number(param, value->items()[0]), as_number(param, value->items()[1])};
  }

  std::vector<double> numbers(const std::string& param) const {
    const config::Node* value = find(param);
    if (value == nullptr) fail("needs " + param, "Give it: {normalize: {mean: [0.5], std: [0.25]}}.");
    std::vector<double> out;
    if (value->is_list()) {
      for (const config::Node& item : value->items()) out.push_back(as_number(param, item));
    } else {
      out.push_back(as_number(param, *value));
    }
    if (out.empty()) fail(param + " is empty: one value, or one per channel");
    return out;
  }

  [[noreturn]] void fail(const std::string& problem, const std::string& fix = {}) const {
    throw Error(where_, problem, fix.empty() ? "See docs/data.md (data.transforms) for each step's parameters." : fix);
  }

 private:
  static std::string text(double x) {
    return std::isinf(x) ? (x > 0 ? "inf" : "-inf") : config::python_str(config::Node::floating(x));
  }
  double as_number(const std::string& param, const config::Node& value) const {
    if (value.type() == config::NodeType::kInt) return static_cast<double>(value.as_int());
    if (value.type() == config::NodeType::kFloat && std::isfinite(value.as_float())) return value.as_float();
    fail(param + " is " + config::python_str(value) + ", not a number");
  }
  int positive_int(const std::string& param, const config::Node& value) const {
    if (value.type() != config::NodeType::kInt || value.as_int() < 1 || value.as_int() > 65535) {
      fail(param + " is " + config::python_str(value) + ": a side is a positive int");
    }
    return static_cast<int>(value.as_int());
  }

  std::string where_;
  const Spec& spec_;
  std::vector<std::pair<std::string, const config::Node*>> values_;
};

image::TransformStep read_step(const Spec& spec, const StepReader& r) {
  image::TransformStep s;
  if (spec.name == "resize") {
    s.kind = Kind::kResize;
    std::tie(s.height, s.width) = r.size(/*shorter_side=*/true);
  } else if (spec.name == "center_crop") {
    s.kind = Kind::kCenterCrop;
    std::tie(s.height, s.width) = r.size(false);
  } else if (spec.name == "random_resized_crop") {
    s.kind = Kind::kRandomResizedCrop;
    std::tie(s.height, s.width) = r.size(false);
    std::tie(s.scale_min, s.scale_max) = r.range("scale", {s.scale_min, s.scale_max});
    std::tie(s.ratio_min, s.ratio_max) = r.range("ratio", {s.ratio_min, s.ratio_max});
  } else if (spec.name == "random_crop") {
    s.kind = Kind::kRandomCrop;
    std::tie(s.height, s.width) = r.size(false);
    s.padding = r.padding();
  } else if (spec.name == "horizontal_flip") {
    s.kind = Kind::kHorizontalFlip;
    s.probability = r.number("p", 0.5, 0, 1);
  } else {  // color_jitter
    s.kind = Kind::kColorJitter;
    s.brightness = r.number("brightness", 0, 0, HUGE_VAL);
    s.contrast = r.number("contrast", 0, 0, HUGE_VAL);
    s.saturation = r.number("saturation", 0, 0, HUGE_VAL);
  }
  return s;
}

}  // namespace

const std::vector<std::string>& transform_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Spec& spec : specs()) out.push_back(spec.name);
    return out;
  }();
  return names;
}

TransformList parse_transform_list(const config::Node& list, const std::string& where) {
  TransformList out;
  if (!list.is_list()) {
    throw Error(where, "expected a list of steps, got " + config::python_str(list),
                "Give data.transforms.train=[{resize: 72}, {center_crop: 64}] or null (data.augment's preset).");
  }
  std::vector<std::string> known;
  for (const Spec& spec : specs()) {
    known.push_back(spec.name);
    known.push_back(spec.torchvision);
  }
  for (size_t i = 0; i < list.items().size(); ++i) {
    const config::Node& item = list.items()[i];
    std::string name;
    const config::Node* params = nullptr;
    if (item.is_string()) {
      name = item.as_string();
    } else if (item.is_map() && item.entries().size() == 1) {
      name = item.entries().front().key;
      params = &item.entries().front().value;
    } else {
      throw Error(where, "item " + std::to_string(i) + " is " + config::python_str(item) + ", not a step",
                  "Give each step as a name (horizontal_flip) or {name: its parameters} ({resize: 72}).");
    }
    const Spec* spec = nullptr;
    for (const Spec& candidate : specs()) {
      if (candidate.name == name || candidate.torchvision == name) spec = &candidate;
    }
    const std::string at = where + ", item " + std::to_string(i) + " (" + name + ")";
    if (spec == nullptr) {
      std::string problem = "unknown transform '" + name + "'";
      const std::string closest = config::closest_match(name, known);
      if (!closest.empty()) problem += "; did you mean '" + closest + "'?";
      if (name == "to_tensor" || name == "ToTensor") problem += " (the loader makes float tensors itself)";
      throw Error(at, problem, "The transforms are " + join(transform_names()) + " (torchvision's names).");
    }
    if (out.mean) {
      throw Error(at, "normalize must be the last step",
                  "Move normalize to the end: the loader normalises after every other transform, on the device.");
    }
    StepReader reader(at, *spec);
    reader.take(params);
    if (spec->name == "normalize") {
      out.mean = reader.numbers("mean");
      out.std = reader.numbers("std");
      for (const double s : *out.std) {
        if (!(s > 0)) reader.fail("std must be positive, got " + config::python_str(config::Node::floating(s)));
      }
      continue;
    }
    out.steps.push_back(read_step(*spec, reader));
  }
  // What torchvision would refuse (a scale with min > max, ...), named at the list.
  image::TransformPipeline check(out.steps, where);
  return out;
}

}  // namespace trainer::data
