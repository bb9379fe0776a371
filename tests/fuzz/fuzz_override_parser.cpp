// libFuzzer target for Hydra's override grammar: parse_override must either return an Override or
// throw trainer::Error for any input. A crash, a hang, a sanitizer report or any other exception
// is a bug in the parser.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <string_view>

#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/util/error.h"

namespace {

double as_number(const trainer::config::Node& node) {
  switch (node.type()) {
    case trainer::config::NodeType::kInt:
      // An int beyond int64 saturates in as_int(); its true size counts here (range(1,5555...,1e32)
      // has ~1e54 elements, not a handful).
      if (node.is_big_int()) return node.int_text()[0] == '-' ? -HUGE_VAL : HUGE_VAL;
      return static_cast<double>(node.as_int());
    case trainer::config::NodeType::kFloat:
      return node.as_float();
    default:
      return 0.0;
  }
}

// A range is enumerated only when it has at most a few thousand elements (a zero step is passed
// through: it must be rejected with trainer::Error).
bool small_enough(const trainer::config::Sweep& sweep) {
  if (sweep.kind != trainer::config::SweepKind::kRange) return true;
  const double start = as_number(sweep.range_start);
  const double stop = as_number(sweep.range_stop);
  const double step = sweep.range_step.is_null() ? 1.0 : as_number(sweep.range_step);
  if (step == 0.0) return true;
  const double count = (stop - start) / step;
  return std::isfinite(count) && count <= 4096.0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const trainer::config::Override parsed = trainer::config::parse_override(text);
    // Exercise what the CLI does next with a parsed override (printing it back, enumerating a
    // sweep), with a fixed seed so a finding reproduces. Ranges are enumerated only when short:
    // range(0,1e18) is valid and would (rightly) run out of memory.
    (void)parsed.key_with_package();
    (void)parsed.prefix();
    if (parsed.is_sweep() && small_enough(parsed.sweep)) {
      std::mt19937_64 rng(0);
      (void)trainer::config::sweep_value_texts(parsed, nullptr, rng);
    }
  } catch (const trainer::Error&) {
    // The expected outcome for invalid input.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parse_override threw a non-trainer::Error exception: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "parse_override threw a non-std::exception\n");
    std::abort();
  }
  return 0;
}
