// Random search over the override grammar's search spaces (see random_sweep.h).
#include "trainer/config/random_sweep.h"

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

namespace trainer::config {

double SweepRandom::uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

uint64_t SweepRandom::index(uint64_t n) {
  // 2^64 mod n outputs at the bottom would favour small indices: draw again when one comes.
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    const uint64_t r = engine_();
    if (r >= threshold) return r % n;
  }
}

std::string SweepRandom::state() const {
  std::ostringstream out;
  out << engine_;
  return out.str();
}

void SweepRandom::set_state(const std::string& state) {
  std::istringstream in(state);
  std::mt19937_64 engine;
  in >> engine;
  if (in.fail()) {
    throw Error("the sampler's saved state", "its random generator's state is malformed",
                "delete the search state file to start the search again");
  }
  engine_ = engine;
}

namespace {

enum class SpaceKind { kFixed, kList, kFloat, kLogFloat, kInt, kLogInt };

struct Slot {
  std::string key_element;  // "+db@src", "a.b", "~x"
  std::string where;        // "override 'lr=...'" or "hydra.sweeper.params.lr"
  SpaceKind kind = SpaceKind::kFixed;
  std::vector<std::string> texts;     // kFixed: one; kList: the values
  double low = 0.0, high = 0.0;       // kFloat, kLogFloat
  int64_t int_low = 0, int_high = 0;  // kInt, kLogInt
};

std::string describe_interval(const Sweep& sweep) {
  if (sweep.interval_int && std::abs(sweep.interval_start) < 1e18 && std::abs(sweep.interval_end) < 1e18) {
    return "int(interval(" + std::to_string(static_cast<int64_t>(sweep.interval_start)) + ", " +
           std::to_string(static_cast<int64_t>(sweep.interval_end)) + "))";
  }
  return "interval(" + python_float_repr(sweep.interval_start) + ", " + python_float_repr(sweep.interval_end) + ")";
}

void interval_space(Slot& slot, const Override& override) {
  const Sweep& sweep = override.sweep;
  const double low = sweep.interval_start, high = sweep.interval_end;
  bool log = false;
  for (const std::string& tag : sweep.tags) log = log || tag == "log";
  if (!std::isfinite(low) || !std::isfinite(high)) {
    throw Error(slot.where, describe_interval(sweep) + " has a bound that is not a finite number",
                "give finite bounds, e.g. interval(0.0001, 0.1)");
  }
  if (low > high) {
    throw Error(
        slot.where, describe_interval(sweep) + " starts above its end",
        "write the smaller bound first: interval(" + python_float_repr(high) + ", " + python_float_repr(low) + ")");
  }
  if (log && low <= 0.0 && !sweep.interval_int) {
    throw Error(slot.where, "a log-uniform " + describe_interval(sweep) + " needs bounds above zero",
                "start the interval above zero, e.g. tag(log, interval(1e-05, 0.1)), or drop "
                "tag(log, ...) to sample uniformly");
  }
  if (!sweep.interval_int) {
    slot.kind = log ? SpaceKind::kLogFloat : SpaceKind::kFloat;
    slot.low = low;
    slot.high = high;
    return;
  }
  constexpr double kLimit = 4.0e18;  // well inside int64, so high - low + 1 cannot overflow
  if (low < -kLimit || high > kLimit) {
    throw Error(slot.where, describe_interval(sweep) + " has a bound beyond +-4e18",
                "sample a smaller integer interval");
  }
  slot.int_low = static_cast<int64_t>(low);
  slot.int_high = static_cast<int64_t>(high);
  if (log && slot.int_low < 1) {
    throw Error(slot.where, "a log-uniform " + describe_interval(sweep) + " needs bounds of 1 or more",
                "start the interval at 1 or above, e.g. tag(log, int(interval(1, 1024)))");
  }
  slot.kind = log ? SpaceKind::kLogInt : SpaceKind::kInt;
}

Slot make_slot(const Override& override, std::string where, const GroupOptionsLookup& group_options,
               std::mt19937_64& shuffle_rng) {
  Slot slot;
  slot.key_element = override.prefix() + override.key_with_package();
  slot.where = std::move(where);
  if (!override.is_sweep()) {
    slot.texts.push_back(override.value_text);
    return slot;
  }
  if (override.sweep.kind == SweepKind::kInterval) {
    interval_space(slot, override);
    return slot;
  }
  std::optional<std::vector<std::string>> options;
  if (override.sweep.kind == SweepKind::kGlob && group_options) options = group_options(override.key);
  try {
    slot.texts = sweep_value_texts(override, options ? &*options : nullptr, shuffle_rng);
  } catch (const Error& e) {
    throw Error(slot.where, e.problem(), e.fix());
  }
  if (slot.texts.empty()) {
    throw Error(slot.where, "the search space has no values to sample",
                "give at least one value (check the bounds of range() or the patterns of glob())");
  }
  slot.kind = SpaceKind::kList;
  return slot;
}

void add_slot(std::vector<Slot>& slots, Slot slot) {
  for (Slot& existing : slots) {
    if (existing.key_element == slot.key_element) {
      existing = std::move(slot);
      return;
    }
  }
  slots.push_back(std::move(slot));
}

std::string draw(Slot& slot, SweepRandom& random) {
  switch (slot.kind) {
    case SpaceKind::kFixed:
      return slot.texts.front();
    case SpaceKind::kList:
      return slot.texts[slot.texts.size() == 1 ? 0 : random.index(slot.texts.size())];
    case SpaceKind::kFloat: {
      double x = slot.low + (slot.high - slot.low) * random.uniform01();
      if (x >= slot.high && slot.high > slot.low) x = std::nextafter(slot.high, slot.low);
      return python_float_repr(x);
    }
    case SpaceKind::kLogFloat: {
      const double a = std::log(slot.low), b = std::log(slot.high);
      double x = std::exp(a + (b - a) * random.uniform01());
      if (x < slot.low) x = slot.low;
      if (x >= slot.high && slot.high > slot.low) x = std::nextafter(slot.high, slot.low);
      return python_float_repr(x);
    }
    case SpaceKind::kInt: {
      const uint64_t n = static_cast<uint64_t>(slot.int_high - slot.int_low) + 1;
      return std::to_string(slot.int_low + static_cast<int64_t>(random.index(n)));
    }
    case SpaceKind::kLogInt: {
      const double a = std::log(static_cast<double>(slot.int_low));
      const double b = std::log(static_cast<double>(slot.int_high) + 1.0);
      double x = std::floor(std::exp(a + (b - a) * random.uniform01()));
      int64_t value = static_cast<int64_t>(x);
      if (value < slot.int_low) value = slot.int_low;
      if (value > slot.int_high) value = slot.int_high;
      return std::to_string(value);
    }
  }
  return {};
}

}  // namespace

std::vector<SweepJob> sample_sweep(const std::vector<Override>& overrides,
                                   const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                                   const GroupOptionsLookup& group_options, int64_t num_samples, uint64_t seed) {
  constexpr int64_t kMaxJobs = 100'000'000;
  if (num_samples < 1 || num_samples > kMaxJobs) {
    throw Error(
        "hydra.sweeper.num_samples",
        "num_samples is " + std::to_string(num_samples) + ": random search needs between 1 and 100 million jobs",
        "set hydra.sweeper.num_samples=N with N >= 1, e.g. hydra.sweeper.num_samples=20");
  }
  std::mt19937_64 shuffle_rng(seed);  // only shuffle() uses it; the draws do not depend on it
  std::vector<Slot> slots;
  slots.reserve(sweeper_params.size() + overrides.size());
  for (const auto& [key, value] : sweeper_params) {
    const Override parsed = parse_sweeper_param(key, value,
                                                "write the value as on the command line, e.g. "
                                                "tag(log, interval(1e-4, 0.1)) or choice(16, 32)");
    add_slot(slots, make_slot(parsed, "hydra.sweeper.params." + key, group_options, shuffle_rng));
  }
  for (const Override& override : overrides) {
    add_slot(slots, make_slot(override, "override '" + override.text + "'", group_options, shuffle_rng));
  }

  SweepRandom random(seed);
  std::vector<SweepJob> jobs(static_cast<size_t>(num_samples));
  for (size_t j = 0; j < jobs.size(); ++j) {
    SweepJob& job = jobs[j];
    job.number = static_cast<int>(j);
    job.overrides.reserve(slots.size());
    for (Slot& slot : slots) job.overrides.push_back(slot.key_element + "=" + draw(slot, random));
  }
  return jobs;
}

}  // namespace trainer::config
