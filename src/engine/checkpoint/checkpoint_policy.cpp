#include "trainer/engine/checkpoint/checkpoint_policy.h"

#include <algorithm>

#include "trainer/formats/checkpoint_name.h"

namespace trainer::engine {

std::string update_top_k(std::vector<TopKEntry>& top_k, const CheckpointOptions& c, double score, int64_t epoch,
                         int64_t step, const std::map<std::string, double>& metrics,
                         std::vector<std::string>& dropped) {
  if (c.save_top_k == 0) return {};
  auto better = [&](double a, double b) { return c.mode_max ? a > b : a < b; };
  const bool keep_all = c.save_top_k < 0;
  if (!keep_all && static_cast<int64_t>(top_k.size()) >= c.save_top_k && !better(score, top_k.back().score)) {
    return {};
  }
  const std::string name = formats::format_checkpoint_name(c.filename, epoch, step, metrics);
  std::string path = c.dirpath + "/" + name + ".ckpt";
  // As Lightning's version counter: a name is taken by a kept file, not by the one this save
  // pushes out of a full top k (its name is used again, and that file replaced).
  const bool full = !keep_all && static_cast<int64_t>(top_k.size()) >= c.save_top_k;
  const std::string replaced = full ? top_k.back().path : std::string();
  auto taken = [&](const std::string& candidate) {
    return candidate != replaced &&
           std::any_of(top_k.begin(), top_k.end(), [&](const TopKEntry& e) { return e.path == candidate; });
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
