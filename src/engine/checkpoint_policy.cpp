#include "trainer/engine/checkpoint_policy.h"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace trainer::engine {

std::string format_checkpoint_name(const std::string& pattern, int64_t epoch, int64_t step) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string::npos) {
      out += pattern.substr(i);
      break;
    }
    std::string field = pattern.substr(i + 1, close - i - 1);
    std::string name = field.substr(0, field.find(':'));
    std::string spec = field.find(':') == std::string::npos ? "" : field.substr(field.find(':') + 1);
    int64_t value = name == "epoch" ? epoch : name == "step" ? step : -1;
    if (value < 0) {
      out += "{" + field + "}";
    } else {
      int width = spec.size() > 1 && spec.back() == 'd' ? std::atoi(spec.substr(0, spec.size() - 1).c_str()) : 0;
      std::ostringstream text;
      if (width > 0) text << std::setw(width) << std::setfill('0');
      text << value;
      out += text.str();
    }
    i = close;
  }
  return out;
}

std::string update_top_k(std::vector<TopKEntry>& top_k, const CheckpointOptions& c, double score, int64_t epoch,
                         int64_t step, std::vector<std::string>& dropped) {
  if (c.save_top_k == 0) return {};
  auto better = [&](double a, double b) { return c.mode_max ? a > b : a < b; };
  const bool keep_all = c.save_top_k < 0;
  if (!keep_all && static_cast<int64_t>(top_k.size()) >= c.save_top_k && !better(score, top_k.back().score)) {
    return {};
  }
  const std::string name = format_checkpoint_name(c.filename, epoch, step);
  std::string path = c.dirpath + "/" + name + ".ckpt";
  auto taken = [&](const std::string& candidate) {
    return std::any_of(top_k.begin(), top_k.end(), [&](const TopKEntry& e) { return e.path == candidate; });
  };
  for (int version = 1; taken(path); ++version) {
    path = c.dirpath + "/" + name + "-v" + std::to_string(version) + ".ckpt";
  }
  auto position = std::find_if(top_k.begin(), top_k.end(), [&](const TopKEntry& e) { return better(score, e.score); });
  top_k.insert(position, TopKEntry{score, path});
  while (!keep_all && static_cast<int64_t>(top_k.size()) > c.save_top_k) {
    if (top_k.back().path != path) dropped.push_back(top_k.back().path);
    top_k.pop_back();
  }
  return path;
}

}  // namespace trainer::engine
