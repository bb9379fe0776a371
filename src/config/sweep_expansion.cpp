// Hydra's basic sweeper: one slot per distinct `[prefix]key[@pkg]` (sweeper params first, then
// the command line, a later override of a slot replacing its values in place), each slot a list of
// full override strings, and the jobs are the cartesian product of the slots. A slot's values are
// what the sweep override enumerates (sweep_value_texts): choices as written, range() stepped as
// Python steps it, glob() matched against the group's options.
#include "trainer/config/sweep_expansion.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "trainer/config/big_int.h"
#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

#include "decimal.h"

namespace trainer::config {
namespace {

// fnmatch on POSIX: case-sensitive, `*`, `?`, `[seq]`, `[!seq]`.
bool fnmatch(std::string_view name, std::string_view pattern) {
  size_t n = 0, p = 0, star_p = std::string_view::npos, star_n = 0;
  auto match_class = [&](size_t& pp, char c) -> int {  // -1: not a class, 0 no match, 1 match
    size_t k = pp + 1;
    bool negate = false;
    if (k < pattern.size() && pattern[k] == '!') {
      negate = true;
      ++k;
    }
    size_t first = k;
    bool matched = false;
    while (k < pattern.size() && (pattern[k] != ']' || k == first)) {
      if (k + 2 < pattern.size() && pattern[k + 1] == '-' && pattern[k + 2] != ']') {
        if (c >= pattern[k] && c <= pattern[k + 2]) matched = true;
        k += 3;
      } else {
        if (c == pattern[k]) matched = true;
        ++k;
      }
    }
    if (k >= pattern.size()) return -1;  // no closing ']': a literal '['
    pp = k + 1;
    return matched != negate ? 1 : 0;
  };
  while (n < name.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_n = n;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++n;
        continue;
      }
      if (pc == '[') {
        size_t pp = p;
        int r = match_class(pp, name[n]);
        if (r == 1) {
          p = pp;
          ++n;
          continue;
        }
        if (r == -1 && name[n] == '[') {
          ++p;
          ++n;
          continue;
        }
      } else if (pc == name[n]) {
        ++p;
        ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p + 1;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

struct Slot {
  std::string key_element;  // "+db@src", "a.b", "~x"
  std::vector<std::string> values;
};

void add_override(std::vector<Slot>& slots, const Override& override, const GroupOptionsLookup& group_options,
                  std::mt19937_64& rng) {
  Slot slot;
  slot.key_element = override.prefix() + override.key_with_package();
  if (override.is_sweep()) {
    std::optional<std::vector<std::string>> options;
    if (override.sweep.kind == SweepKind::kGlob && group_options) {
      options = group_options(override.key);
    }
    std::vector<std::string> texts = sweep_value_texts(override, options ? &*options : nullptr, rng);
    slot.values.reserve(texts.size());
    for (const std::string& text : texts) slot.values.push_back(slot.key_element + "=" + text);
  } else if (override.key.rfind("hydra.", 0) == 0 || override.key.rfind("hydra/", 0) == 0) {
    // Hydra's own overrides reach each job as typed (its sweeper renders only the task's):
    // hydra.job.chdir=true, not True.
    slot.values.push_back(override.text);
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

std::vector<std::string> sweep_value_texts(const Override& override, const std::vector<std::string>* group_options,
                                           std::mt19937_64& rng) {
  using detail::Decimal;
  constexpr size_t kMaxValues = 10'000'000;
  const Sweep& sweep = override.sweep;
  std::vector<std::string> texts;
  switch (sweep.kind) {
    case SweepKind::kNone:
      texts.push_back(override.value_text);
      return texts;
    case SweepKind::kSimpleChoice:
    case SweepKind::kChoice:
      texts.reserve(sweep.choices.size());
      for (const SweepElement& element : sweep.choices) texts.push_back(element.text);
      break;
    case SweepKind::kRange: {
      const Node& start = sweep.range_start;
      const Node& stop = sweep.range_stop;
      const Node& step = sweep.range_step;
      if (start.type() == NodeType::kInt && stop.type() == NodeType::kInt && step.type() == NodeType::kInt) {
        if (step.as_int() == 0) {
          throw Error("override '" + override.text + "'", "range() step must not be zero",
                      "use a positive step to count up or a negative one to count down: "
                      "range(1,10,2)");
        }
        constexpr int64_t kSafe = int64_t{1} << 62;  // v + s cannot overflow below this
        auto safe = [](const Node& n) { return !n.is_big_int() && n.as_int() > -kSafe && n.as_int() < kSafe; };
        if (safe(start) && safe(stop) && safe(step)) {
          int64_t a = start.as_int(), b = stop.as_int(), s = step.as_int();
          long double count = s > 0 ? std::ceil((static_cast<long double>(b) - a) / s)
                                    : std::ceil((static_cast<long double>(a) - b) / -s);
          if (count > static_cast<long double>(kMaxValues)) {
            throw Error("override '" + override.text + "'", "range() gives more than 10 million values",
                        "use a larger step");
          }
          for (int64_t v = a; s > 0 ? v < b : v > b; v += s) texts.push_back(std::to_string(v));
        } else {
          // Python's range() over ints of any size.
          const BigInt a = BigInt::of(start), b = BigInt::of(stop), s = BigInt::of(step);
          double span = 0, stride = 0;
          const bool finite = (b - a).to_double(span) && s.to_double(stride);
          const double count = std::ceil(span / stride);
          if (!finite || count > static_cast<double>(kMaxValues)) {
            throw Error("override '" + override.text + "'", "range() gives more than 10 million values",
                        "use a larger step");
          }
          const int direction = s.negative() ? 1 : -1;
          for (BigInt v = a; BigInt::compare(v, b) == direction; v = v + s) {
            texts.push_back(v.to_string());
          }
        }
      } else {
        auto as_double = [](const Node& n) {
          double value = 0;
          if (n.type() != NodeType::kInt) return n.as_float();
          if (!int_to_double(n, value)) value = n.int_text()[0] == '-' ? -HUGE_VAL : HUGE_VAL;
          return value;
        };
        const double first = as_double(start), last = as_double(stop), delta = as_double(step);
        if (!std::isfinite(first) || !std::isfinite(last) || !std::isfinite(delta)) {
          // Python's arithmetic: only `start` can come before a non-finite bound or step.
          if (std::isnan(first) || std::isnan(last) || std::isnan(delta) || delta == 0.0) {
            if (delta == 0.0) {
              throw Error("override '" + override.text + "'", "range() step must not be zero",
                          "use a positive step to count up or a negative one to count down");
            }
            break;
          }
          const bool runs = delta > 0 ? first < last : first > last;
          if (runs && !std::isfinite(first)) {
            throw Error("override '" + override.text + "'", "range() from an infinite start never ends",
                        "use finite bounds");
          }
          if (runs && std::isfinite(delta)) {
            throw Error("override '" + override.text + "'", "range() towards an infinite stop never ends",
                        "use a finite stop");
          }
          if (runs) texts.push_back(python_float_repr(first));
          break;
        }
        // Decimal(int) is exact for ints of any size, Decimal(float) the double's exact value.
        auto decimal = [](const Node& n) {
          return n.type() == NodeType::kInt ? Decimal::of_int(n.int_text()) : Decimal::exact(n.as_float());
        };
        Decimal value = decimal(start);
        Decimal end = decimal(stop);
        Decimal increment = decimal(step);
        if (increment.digits.empty()) {
          throw Error("override '" + override.text + "'", "range() step must not be zero",
                      "use a positive step to count up or a negative one to count down: "
                      "range(0.1,1.0,0.1)");
        }
        // Too many values is known from the doubles before any is written (writing 10 million
        // takes seconds); the count below stays exact at the limit.
        if (const double count = std::ceil((last - first) / delta); count > static_cast<double>(kMaxValues) + 1) {
          throw Error("override '" + override.text + "'", "range() gives more than 10 million values",
                      "use a larger step");
        }
        // Counting up runs while value < end, counting down while value > end.
        int direction = increment.negative ? -1 : 1;
        while (Decimal::compare(value, end) == -direction) {
          if (texts.size() >= kMaxValues) {
            throw Error("override '" + override.text + "'", "range() gives more than 10 million values",
                        "use a larger step");
          }
          texts.push_back(python_float_repr(value.to_double()));
          value = Decimal::add(value, increment);
        }
      }
      break;
    }
    case SweepKind::kInterval:
      throw Error("override '" + override.text + "'",
                  "interval() is a continuous range that the basic sweeper cannot enumerate",
                  "interval() is for sampling sweepers: use hydra/sweeper=random, or list "
                  "values with a,b,c / range()");
    case SweepKind::kGlob: {
      if (group_options == nullptr) {
        throw Error("override '" + override.text + "'",
                    "glob() selects options of a config group, but '" + override.key + "' is not a config group",
                    "use glob() on a config group (db=glob(*)), or list the values with a,b,c");
      }
      std::vector<std::string> names = *group_options;
      std::sort(names.begin(), names.end());
      auto any_match = [](const std::string& name, const std::vector<std::string>& patterns) {
        for (const std::string& pattern : patterns) {
          if (fnmatch(name, pattern)) return true;
        }
        return false;
      };
      for (std::string& name : names) {
        if (any_match(name, sweep.glob_include) && !any_match(name, sweep.glob_exclude)) {
          texts.push_back(std::move(name));
        }
      }
      return texts;
    }
  }
  if (sweep.shuffle) std::shuffle(texts.begin(), texts.end(), rng);
  return texts;
}

Override parse_sweeper_param(const std::string& key, const std::string& value, const std::string& fix) {
  try {
    return parse_override(key + "=" + value);
  } catch (const Error& e) {
    throw Error("hydra.sweeper.params." + key, e.problem(), e.fix().empty() ? fix : e.fix());
  }
}

bool is_hydra_override(std::string_view text) {
  size_t k = 0;
  while (k < text.size() && (text[k] == '+' || text[k] == '~')) ++k;
  std::string_view key = text.substr(k);
  return key.compare(0, 6, "hydra.") == 0 || key.compare(0, 6, "hydra/") == 0;
}

std::vector<SweepJob> expand_sweep(const std::vector<Override>& overrides,
                                   const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                                   const GroupOptionsLookup& group_options, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Slot> slots;
  slots.reserve(sweeper_params.size() + overrides.size());
  for (const auto& [key, value] : sweeper_params) {
    const Override parsed =
        parse_sweeper_param(key, value, "write the value as on the command line, e.g. 1,2,3 or range(1,4)");
    add_override(slots, parsed, group_options, rng);
  }
  for (const Override& override : overrides) {
    // As Hydra's multirun, before any job: a job's hydra.* settings are the sweep's (it refused
    // `-m hydra.job.name=a,b` and `-m hydra/launcher=a,b`; trainer planned one job per value).
    if (override.is_sweep() && is_hydra_override(override.text)) {
      throw Error(Origin::override_text(override.text).describe(),
                  "Sweeping over Hydra's configuration is not supported : '" + override.text + "'",
                  "sweep over your own config keys, or set hydra.* once");
    }
    add_override(slots, override, group_options, rng);
  }

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
