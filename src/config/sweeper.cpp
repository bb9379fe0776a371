// Picks the sweeper named by hydra.sweeper._target_ and reads its settings.
#include "trainer/config/sweeper.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "trainer/config/known_settings.h"
#include "trainer/config/random_sweep.h"
#include "trainer/util/error.h"

namespace trainer::config {
namespace {

// An integer setting of hydra.sweeper: nullopt when null or absent.
std::optional<int64_t> int_setting(const Node& sweeper, const char* key, const char* example) {
  const Node* node = sweeper.is_map() ? sweeper.find(key) : nullptr;
  if (node == nullptr || node->is_null()) return std::nullopt;
  if (node->type() == NodeType::kInt && !node->is_big_int()) return node->as_int();
  if (node->is_string()) {  // e.g. given as a quoted number
    const std::string& text = node->as_string();
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end == text.c_str() + text.size() && errno == 0) return value;
  }
  throw Error(
      std::string("hydra.sweeper.") + key,
      "expected an integer, got '" + (node->is_string() ? node->as_string() : std::string("a non-integer value")) + "'",
      std::string("set it to a whole number, e.g. hydra.sweeper.") + key + "=" + example);
}

}  // namespace

SweeperKind sweeper_kind(const Node& sweeper) {
  refuse_plugin_value(sweeper, "hydra.sweeper", "hydra/sweeper");
  const Node* target = sweeper.is_map() ? sweeper.find("_target_") : nullptr;
  if (target == nullptr || target->is_null()) return SweeperKind::kBasic;
  const std::string name = target->is_string() ? target->as_string() : std::string();
  if (name == kBasicSweeperTarget) return SweeperKind::kBasic;
  if (name == kRandomSweeperTarget) return SweeperKind::kRandom;
  if (name == kAshaSweeperTarget) return SweeperKind::kAsha;
  if (name == kOptunaSweeperTarget) return SweeperKind::kOptuna;
  throw Error("hydra.sweeper._target_", "trainer has no sweeper '" + name + "'",
              "choose one of trainer's sweepers: hydra/sweeper=basic (grid), hydra/sweeper=random "
              "(random search), hydra/sweeper=asha (early stopping) or hydra/sweeper=optuna (TPE)");
}

std::vector<SweepJob> make_sweep_jobs(const Node& sweeper, const std::vector<Override>& overrides,
                                      const std::vector<std::pair<std::string, std::string>>& params,
                                      const GroupOptionsLookup& group_options) {
  const SweeperKind kind = sweeper_kind(sweeper);
  if (kind == SweeperKind::kBasic) {
    refuse_unknown_settings(sweeper, "hydra.sweeper", "the basic sweeper", {"_target_", "max_batch_size", "params"});
    return expand_sweep(overrides, params, group_options);
  }
  if (kind == SweeperKind::kOptuna) {
    throw Error("hydra.sweeper._target_",
                "the Optuna sweeper asks for its trials while the sweep runs; they cannot be listed beforehand",
                "run the sweep (trainer fit -m ...), or list one trial's config with --cfg job");
  }
  if (kind == SweeperKind::kRandom) {
    refuse_unknown_settings(sweeper, "hydra.sweeper", "the random sweeper",
                            {"_target_", "num_samples", "seed", "params"});
  } else {
    refuse_unknown_settings(
        sweeper, "hydra.sweeper", "the ASHA sweeper",
        {"_target_", "metric", "mode", "max_t", "grace_period", "reduction_factor", "num_samples", "seed", "params"});
  }
  const std::optional<int64_t> num_samples = int_setting(sweeper, "num_samples", "20");
  if (!num_samples) {
    if (kind == SweeperKind::kAsha) {
      for (const Override& override : overrides) {
        if (override.sweep.kind != SweepKind::kInterval) continue;
        throw Error("override '" + override.text + "'",
                    "interval() is a continuous range: the ASHA sweeper draws from it only with a number of jobs "
                    "(without hydra.sweeper.num_samples it runs the grid of the listed values)",
                    "set hydra.sweeper.num_samples=N (e.g. 20), or list values with a,b,c / range()");
      }
      return expand_sweep(overrides, params, group_options);
    }
    throw Error("hydra.sweeper.num_samples", "random search needs a number of jobs to draw",
                "set hydra.sweeper.num_samples=N, e.g. hydra.sweeper.num_samples=20");
  }
  const std::optional<int64_t> seed = int_setting(sweeper, "seed", "0");
  if (!seed) {
    throw Error("hydra.sweeper.seed",
                "random search needs a seed so that the same command gives the same jobs (a sweep "
                "resumes only when its job list matches)",
                "set hydra.sweeper.seed to any integer, e.g. hydra.sweeper.seed=1");
  }
  return sample_sweep(overrides, params, group_options, *num_samples, static_cast<uint64_t>(*seed));
}

}  // namespace trainer::config
