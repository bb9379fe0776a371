// Hydra's basic sweeper: one slot per distinct `[prefix]key[@pkg]` (sweeper params first, then
// the command line, a later override of a slot replacing its values in place), each slot a list of
// full override strings, and the jobs are the cartesian product of the slots.
#include "trainer/config/sweep.h"

#include <utility>

#include "trainer/util/error.h"

namespace trainer::config {
namespace {

struct Slot {
  std::string key_element;  // "+db@src", "a.b", "~x"
  std::vector<std::string> values;
};

std::string key_element(const Override& override) {
  std::string out = override.prefix();
  out += override.key;
  if (override.package) {
    out += '@';
    out += *override.package;
  }
  return out;
}

void add_override(std::vector<Slot>& slots, const Override& override,
                  const GroupOptionsLookup& group_options, std::mt19937_64& rng) {
  Slot slot;
  slot.key_element = key_element(override);
  if (override.is_sweep()) {
    std::optional<std::vector<std::string>> options;
    if (override.sweep.kind == SweepKind::kGlob && group_options) {
      options = group_options(override.key);
    }
    std::vector<std::string> texts =
        sweep_value_texts(override, options ? &*options : nullptr, rng);
    slot.values.reserve(texts.size());
    for (const std::string& text : texts) slot.values.push_back(slot.key_element + "=" + text);
  } else {
    slot.values.push_back(slot.key_element + "=" + override.value_text);
  }
  for (Slot& existing : slots) {
    if (existing.key_element == slot.key_element) {
      existing.values = std::move(slot.values);
      return;
    }
  }
  slots.push_back(std::move(slot));
}

}  // namespace

bool is_hydra_override(std::string_view text) {
  size_t k = 0;
  while (k < text.size() && (text[k] == '+' || text[k] == '~')) ++k;
  std::string_view key = text.substr(k);
  return key.compare(0, 6, "hydra.") == 0 || key.compare(0, 6, "hydra/") == 0;
}

std::vector<SweepJob> expand_sweep(
    const std::vector<Override>& overrides,
    const std::vector<std::pair<std::string, std::string>>& sweeper_params,
    const GroupOptionsLookup& group_options, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Slot> slots;
  slots.reserve(sweeper_params.size() + overrides.size());
  for (const auto& [key, value] : sweeper_params) {
    Override parsed;
    try {
      parsed = parse_override(key + "=" + value);
    } catch (const Error& e) {
      throw Error("hydra.sweeper.params." + key, e.problem(),
                  e.fix().empty() ? "write the value as on the command line, e.g. 1,2,3 or "
                                    "range(1,4)"
                                  : e.fix());
    }
    add_override(slots, parsed, group_options, rng);
  }
  for (const Override& override : overrides) add_override(slots, override, group_options, rng);

  constexpr uint64_t kMaxJobs = 100'000'000;
  uint64_t count = 1;
  for (const Slot& slot : slots) {
    count *= slot.values.size();
    if (count > kMaxJobs) {
      throw Error("multirun", "the sweep has more than 100 million jobs",
                  "sweep fewer values, or use a sampling sweeper");
    }
  }
  std::vector<SweepJob> jobs(count);
  std::vector<size_t> index(slots.size(), 0);
  for (uint64_t j = 0; j < count; ++j) {
    SweepJob& job = jobs[j];
    job.number = static_cast<int>(j);
    job.overrides.reserve(slots.size());
    for (size_t s = 0; s < slots.size(); ++s) job.overrides.push_back(slots[s].values[index[s]]);
    // Odometer: the last slot turns fastest, so the first varies slowest.
    for (size_t s = slots.size(); s-- > 0;) {
      if (++index[s] < slots[s].values.size()) break;
      index[s] = 0;
    }
  }
  return jobs;
}

}  // namespace trainer::config
