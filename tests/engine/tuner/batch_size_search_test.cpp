// The batch-size search's order of trials and its results (Lightning's power and binsearch modes)
// against a trial that fits exactly the batches up to a known size; the tuner options' checks; and
// the counting CPU allocator of TrialMemoryMeter on real tensors.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/tuner/batch_size_search.h"

#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/tuner/trial_memory_meter.h"
#include "trainer/util/error.h"

namespace {

using trainer::engine::BatchSizeTrial;
using trainer::engine::ScaleMode;
using trainer::engine::search_batch_size;

// A trial that fits every batch up to `largest`, recording the sizes asked for.
struct Threshold {
  int64_t largest;
  std::vector<int64_t> asked;
  BatchSizeTrial operator()(int64_t batch_size) {
    asked.push_back(batch_size);
    BatchSizeTrial trial;
    trial.fits = batch_size <= largest;
    if (!trial.fits) trial.failure = "above the limit";
    return trial;
  }
};

trainer::engine::TunerOptions options_from(const std::string& yaml) {
  const trainer::config::YamlDocument document = trainer::config::load_yaml_string(yaml, "test");
  return trainer::engine::TunerOptions::from_config(trainer::config::ConfigView(document.root));
}

}  // namespace

CATCH_TEST_CASE("power doubles from init_val until a trial fails, and keeps the last batch that fit") {
  Threshold fits_100{100, {}};
  auto result = search_batch_size(ScaleMode::kPower, 2, 25, 100000, std::ref(fits_100));
  CATCH_CHECK(fits_100.asked == std::vector<int64_t>{2, 4, 8, 16, 32, 64, 128});
  CATCH_CHECK(result.batch_size == 64);
  CATCH_CHECK(result.trials.size() == 7);
  CATCH_CHECK_FALSE(result.trials.back().fits);
}

CATCH_TEST_CASE("binsearch bisects between the last fit and the first failure down to one") {
  Threshold fits_100{100, {}};
  auto result = search_batch_size(ScaleMode::kBinsearch, 2, 25, 100000, std::ref(fits_100));
  CATCH_CHECK(result.batch_size == 100);
  // 2..128 doubling, then 96, 112, 104, 100, 102, 101.
  CATCH_CHECK(fits_100.asked == std::vector<int64_t>{2, 4, 8, 16, 32, 64, 128, 96, 112, 104, 100, 102, 101});
}

CATCH_TEST_CASE("the training set size caps the batch; max_trials caps the trials") {
  Threshold fits_all{1 << 30, {}};
  auto capped = search_batch_size(ScaleMode::kPower, 3, 25, 50, std::ref(fits_all));
  CATCH_CHECK(fits_all.asked == std::vector<int64_t>{3, 6, 12, 24, 48, 50});
  CATCH_CHECK(capped.batch_size == 50);
  CATCH_CHECK(capped.stopped_because.find("training set size") != std::string::npos);

  Threshold few{1 << 30, {}};
  auto limited = search_batch_size(ScaleMode::kBinsearch, 2, 4, 100000, std::ref(few));
  CATCH_CHECK(few.asked == std::vector<int64_t>{2, 4, 8, 16});
  CATCH_CHECK(limited.batch_size == 16);
  CATCH_CHECK(limited.stopped_because.find("max_trials") != std::string::npos);
}

CATCH_TEST_CASE("a first trial that fails ends the search with no batch") {
  Threshold none{1, {}};
  auto result = search_batch_size(ScaleMode::kBinsearch, 2, 25, 1000, std::ref(none));
  CATCH_CHECK(result.batch_size == 0);
  CATCH_CHECK(none.asked == std::vector<int64_t>{2});
}

CATCH_TEST_CASE("tuner options: defaults, Lightning's spellings, and refusals naming the key") {
  auto defaults = options_from("seed: 1\n");
  CATCH_CHECK_FALSE(defaults.auto_scale.has_value());
  CATCH_CHECK(defaults.init_val == 2);
  CATCH_CHECK(defaults.max_trials == 25);
  CATCH_CHECK(defaults.steps_per_trial == 3);
  CATCH_CHECK_FALSE(defaults.max_memory_mb.has_value());
  CATCH_CHECK(options_from("trainer: {auto_scale_batch_size: true}\n").auto_scale == ScaleMode::kPower);
  CATCH_CHECK_FALSE(options_from("trainer: {auto_scale_batch_size: false}\n").auto_scale.has_value());
  CATCH_CHECK(options_from("trainer: {auto_scale_batch_size: binsearch}\n").auto_scale == ScaleMode::kBinsearch);
  CATCH_CHECK(options_from("tuner: {mode: binsearch, max_memory_mb: 64}\n").max_memory_mb == 64.0);
  CATCH_CHECK_THROWS_WITH(options_from("tuner: {mode: triple}\n"),
                          Catch::Contains("tuner.mode") && Catch::Contains("triple is not one of power or binsearch"));
  CATCH_CHECK_THROWS_WITH(options_from("trainer: {auto_scale_batch_size: exhaustive}\n"),
                          Catch::Contains("trainer.auto_scale_batch_size"));
  CATCH_CHECK_THROWS_WITH(options_from("tuner: {init_val: 0}\n"), Catch::Contains("tuner.init_val"));
  CATCH_CHECK_THROWS_WITH(options_from("tuner: {max_memory_mb: -1}\n"), Catch::Contains("tuner.max_memory_mb"));
}

CATCH_TEST_CASE("the CPU meter counts a trial's tensors above its start and refuses past its limit") {
  at::Tensor held = at::ones({1024, 256});  // 1 MiB allocated before the meter: not the trial's
  trainer::engine::TrialMemoryMeter meter(at::Device(at::kCPU));
  meter.start();
  {
    at::Tensor a = at::empty({4 * 1024 * 1024 / 4}, at::kFloat);  // 4 MiB
    at::Tensor b = at::empty({2 * 1024 * 1024 / 4}, at::kFloat);  // 2 MiB
  }
  at::Tensor c = at::empty({1024 * 1024 / 4}, at::kFloat);  // 1 MiB after both died
  CATCH_CHECK(meter.peak_mb() >= 6.0);
  CATCH_CHECK(meter.peak_mb() < 6.1);

  meter.start(3.0);
  at::Tensor small = at::empty({2 * 1024 * 1024 / 4}, at::kFloat);
  CATCH_CHECK_THROWS_WITH(at::empty({2 * 1024 * 1024 / 4}, at::kFloat), Catch::Contains("not enough memory"));
  CATCH_CHECK(meter.peak_mb() >= 4.0);  // what the refused allocation asked for
  small = at::Tensor();
  c = at::Tensor();
  CATCH_CHECK(held.sum().item<float>() == 1024.0f * 256.0f);
}
