// Internal to the override grammar: a value as the parser produces it (Hydra's ParsedElementType
// plus its sweep objects: ChoiceSweep, RangeSweep, IntervalSweep, Glob) and what Hydra does with
// one: its Python type name in messages, Python's == and < (dict keys, sort()), the text the
// basic sweeper writes back into a job's override, and the config Node it becomes. Quoted strings
// stay apart from plain strings because the sweeper writes them back with their quotes.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/big_int.h"
#include "trainer/config/node.h"

namespace trainer::config::override_detail {

struct Value {
  enum Kind : uint8_t {
    kNull,
    kBool,
    kInt,
    kFloat,
    kStr,
    kQuoted,
    kList,
    kDict,  // elements
    kChoice,
    kRange,
    kInterval,
    kGlob  // sweeps
  };
  Kind kind = kNull;
  bool b = false;
  bool simple_form = false;  // kChoice: `a,b` rather than choice(a,b)
  bool shuffle = false;
  bool int_interval = false;  // kInterval: cast with int()
  char quote = 0;             // kQuoted: ' or "
  // kInt: the value; beyond int64 (Python ints are unbounded) the limit of its sign, with the
  // exact decimal text in `s`.
  int64_t i = 0;
  double f = 0.0;  // kFloat
  std::string s;   // kStr, kQuoted: the text; kInt: empty, or the decimal text of a big int
  // kList items; kDict keys and values interleaved; kChoice values; kRange start, stop, step;
  // kInterval start, end.
  std::vector<Value> items;
  std::vector<std::string> tags, include, exclude;

  bool is_sweep() const { return kind >= kChoice; }
  bool is_number() const { return kind == kBool || kind == kInt || kind == kFloat; }
  bool is_big() const { return kind == kInt && !s.empty(); }
  // A bool or int as a BigInt.
  BigInt big() const {
    if (kind == kBool) return BigInt(b ? 1 : 0);
    if (s.empty()) return BigInt(i);
    BigInt out;
    BigInt::parse_decimal(s, out);
    return out;
  }
  std::string int_text() const { return s.empty() ? std::to_string(i) : s; }
  // float(): a big int beyond the double range gives +-inf (Python raises OverflowError).
  double number() const {
    if (kind == kFloat) return f;
    if (kind == kBool) return b;
    if (s.empty()) return static_cast<double>(i);
    double out = 0;
    if (!big().to_double(out)) out = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    return out;
  }

  static Value str(std::string text) {
    Value v;
    v.kind = kStr;
    v.s = std::move(text);
    return v;
  }
  static Value integer(int64_t value) {
    Value v;
    v.kind = kInt;
    v.i = value;
    return v;
  }
  static Value integer(const BigInt& value) {
    int64_t small = 0;
    if (value.fits_int64(small)) return integer(small);
    Value v;
    v.kind = kInt;
    v.i = value.negative() ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    v.s = value.to_string();
    return v;
  }
  // An int node of any size.
  static Value integer(const Node& int_node) {
    return int_node.is_big_int() ? integer(BigInt::of(int_node)) : integer(int_node.as_int());
  }
  static Value floating(double value) {
    Value v;
    v.kind = kFloat;
    v.f = value;
    return v;
  }
  static Value boolean(bool value) {
    Value v;
    v.kind = kBool;
    v.b = value;
    return v;
  }
};

// Python's type name of the value ("NoneType", "QuotedString", "ChoiceSweep"), for messages that
// mirror Python's.
const char* python_type_name(const Value& v);

// Python's exact comparison of two numbers (bools count as 0 and 1, ints have any size): -1, 0 or
// 1, and 2 when a NaN makes them unordered.
int compare_numbers(const Value& a, const Value& b);
// Python's ==: numbers across types, lists and dicts item by item; a quoted string equals only the
// same text in the same quotes (Hydra's QuotedString is a dataclass).
bool values_equal(const Value& a, const Value& b);

// Thrown by value_less where Python raises TypeError; `message` is Python's.
struct NotOrderable {
  std::string message;
};
// a < b with Python's rules (numbers, strings, lists); throws NotOrderable for anything else.
bool value_less(const Value& a, const Value& b);

// The value as Hydra's Override._get_value_element_as_str writes it back, the way the basic
// sweeper writes every job override: "1000.0" for 1e3, "[1,2]" for [1, 2], "a\\,b", "'it\\'s'",
// "True". Sweeps render as nothing.
void render(std::string& out, const Value& v);
std::string render(const Value& v);
// QuotedString.with_quotes(): `text` between `quote`s, backslashes right before a quote (or the
// end) doubled, quotes of that kind escaped.
void append_with_quotes(std::string& out, const std::string& text, char quote);

// The config value: quoted and plain strings alike, dict keys typed (Node::Entry::key_type);
// null for sweeps.
Node to_node(const Value& v);

}  // namespace trainer::config::override_detail
