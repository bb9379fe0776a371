#include "trainer/engine/callbacks/model_summary.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "trainer/models/model.h"

namespace trainer::engine {
namespace {

// "torch::nn::LinearImpl" -> "Linear", "trainer::models::SyncBatchNormImpl<2ul>" -> "SyncBatchNorm2d".
std::string type_name(const torch::nn::Module& module) {
  std::string name = module.name();
  std::string dims;
  if (const size_t open = name.find('<'); open != std::string::npos) {
    const std::string argument = name.substr(open + 1, name.find_first_not_of("0123456789", open + 1) - open - 1);
    if (!argument.empty()) dims = argument + "d";
    name.resize(open);
  }
  const size_t colon = name.rfind("::");
  if (colon != std::string::npos) name = name.substr(colon + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0) name.resize(name.size() - 4);
  return name + dims;
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

std::string short_count(int64_t count) {
  static const char* const kUnits[] = {"", " K", " M", " B", " T"};
  double value = static_cast<double>(count);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(count));
  } else {
    std::snprintf(text, sizeof(text), "%.1f%s", value, kUnits[unit]);
  }
  return text;
}

std::string model_summary(const torch::nn::Module& model) {
  struct Row {
    std::string index, name, type, params;
  };
  std::vector<Row> rows = {{"", "Name", "Type", "Params"}};
  int index = 0;
  for (const auto& child : model.named_children()) {
    int64_t count = 0;
    for (const at::Tensor& parameter : child.value()->parameters()) count += parameter.numel();
    rows.push_back({std::to_string(index++), child.key(), type_name(*child.value()), short_count(count)});
  }
  int64_t trainable = 0;
  int64_t frozen = 0;
  double bytes = 0.0;
  for (const at::Tensor& parameter : models::unique_parameters(model)) {
    (parameter.requires_grad() ? trainable : frozen) += parameter.numel();
    bytes += static_cast<double>(parameter.numel() * parameter.element_size());
  }
  size_t widths[4] = {0, 0, 0, 0};
  for (const Row& row : rows) {
    widths[0] = std::max(widths[0], row.index.size());
    widths[1] = std::max(widths[1], row.name.size());
    widths[2] = std::max(widths[2], row.type.size());
    widths[3] = std::max(widths[3], row.params.size());
  }
  std::string table;
  const size_t rule = widths[0] + widths[1] + widths[2] + widths[3] + 9;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    table += pad(row.index, widths[0]) + " | " + pad(row.name, widths[1]) + " | " + pad(row.type, widths[2]) + " | " +
             row.params + "\n";
    if (r == 0) table += std::string(rule, '-') + "\n";
  }
  table += std::string(rule, '-') + "\n";
  char size[32];
  std::snprintf(size, sizeof(size), "%.3f", bytes / 1e6);
  table += pad(short_count(trainable), 10) + "Trainable params\n";
  table += pad(short_count(frozen), 10) + "Non-trainable params\n";
  table += pad(short_count(trainable + frozen), 10) + "Total params\n";
  table += pad(size, 10) + "Total estimated model params size (MB)\n";
  return table;
}

}  // namespace trainer::engine
