// Hydra's grammar functions: the casts, choice, range, interval, tag, sort, shuffle and glob (see
// override_functions.h).
#include "override_functions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "trainer/config/big_int.h"
#include "trainer/config/python_str.h"
#include "trainer/config/python_value.h"

namespace trainer::config::override_detail {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Python's repr() of a str, used in messages that quote a value back.
std::string quote_for_message(std::string_view s) { return "'" + std::string(s) + "'"; }

// ---------------------------------------------------------------------------------------------
// Casts: int(), float(), str(), bool() with Python's conversions.

enum class Cast { kInt, kFloat, kStr, kBool };

const char* cast_name(Cast c) {
  switch (c) {
    case Cast::kInt:
      return "int";
    case Cast::kFloat:
      return "float";
    case Cast::kStr:
      return "str";
    case Cast::kBool:
      return "bool";
  }
  return "?";
}

[[noreturn]] void function_fail(std::string problem, std::string fix = {}) {
  throw FunctionFailure{std::move(problem), std::move(fix)};
}

Value cast_value(const Value& v, Cast c);

Value cast_scalar(const Value& v, Cast c) {
  switch (c) {
    case Cast::kInt:
      switch (v.kind) {
        case Value::kBool:
          return Value::integer(v.b ? 1 : 0);
        case Value::kInt:
          return v;
        case Value::kFloat:
          if (std::isinf(v.f)) function_fail("cannot convert float infinity to integer");
          if (std::isnan(v.f)) function_fail("cannot convert float NaN to integer");
          if (std::fabs(v.f) >= 9.2e18) return Value::integer(BigInt::from_double(v.f));
          return Value::integer(static_cast<int64_t>(std::trunc(v.f)));
        case Value::kStr: {
          Node out;
          if (!python_int_from_text(v.s, out)) {
            function_fail("invalid literal for int() with base 10: " + quote_for_message(v.s));
          }
          return Value::integer(out);
        }
        default:
          break;
      }
      break;
    case Cast::kFloat:
      switch (v.kind) {
        case Value::kBool:
          return Value::floating(v.b ? 1.0 : 0.0);
        case Value::kInt: {
          double out = 0;
          if (v.is_big() && !v.big().to_double(out)) {
            function_fail("int too large to convert to float");
          }
          return Value::floating(v.is_big() ? out : static_cast<double>(v.i));
        }
        case Value::kFloat:
          return v;
        case Value::kStr: {
          double out = 0;
          if (!python_float_from_text(v.s, out)) {
            function_fail("could not convert string to float: " + quote_for_message(v.s));
          }
          return Value::floating(out);
        }
        default:
          break;
      }
      break;
    case Cast::kStr:
      switch (v.kind) {
        case Value::kBool:
          return Value::str(v.b ? "true" : "false");
        case Value::kInt:
          return Value::str(v.int_text());
        case Value::kFloat:
          return Value::str(python_float_repr(v.f));
        case Value::kStr:
          return v;
        default:
          break;
      }
      break;
    case Cast::kBool:
      switch (v.kind) {
        case Value::kBool:
          return v;
        case Value::kInt:
          return Value::boolean(v.i != 0);  // a big int is never 0
        case Value::kFloat:
          return Value::boolean(v.f != 0.0);
        case Value::kStr: {
          std::string lowered;
          for (char ch : v.s) lowered += lower(ch);
          if (lowered == "true") return Value::boolean(true);
          if (lowered == "false") return Value::boolean(false);
          function_fail("Cannot cast " + quote_for_message(v.s) + " to bool",
                        "only true and false (any case) convert to bool");
        }
        default:
          break;
      }
      break;
  }
  function_fail(std::string("cannot cast ") + (v.kind == Value::kNull ? "null" : python_type_name(v)) + " with " +
                cast_name(c) + "()");
}

Value cast_value(const Value& v, Cast c) {
  switch (v.kind) {
    case Value::kQuoted:
      return cast_value(Value::str(v.s), c);
    case Value::kList: {
      Value out = v;
      for (Value& item : out.items) item = cast_value(item, c);
      return out;
    }
    case Value::kDict: {
      Value out = v;
      for (size_t k = 1; k < out.items.size(); k += 2) out.items[k] = cast_value(out.items[k], c);
      return out;
    }
    case Value::kChoice: {
      // Hydra builds a fresh sweep: tags and shuffle are dropped, the form is kept.
      Value out;
      out.kind = Value::kChoice;
      out.simple_form = v.simple_form;
      for (const Value& item : v.items) out.items.push_back(cast_value(item, c));
      return out;
    }
    case Value::kRange: {
      if (c != Cast::kInt && c != Cast::kFloat) {
        function_fail("Range can only be cast to int or float");
      }
      Value out;
      out.kind = Value::kRange;
      for (const Value& item : v.items) out.items.push_back(cast_scalar(item, c));
      return out;
    }
    case Value::kInterval: {
      if (c == Cast::kStr) function_fail("Intervals cannot be cast to str");
      if (c == Cast::kBool) function_fail("Intervals cannot be cast to bool");
      Value out = v;
      for (Value& item : out.items) item = Value::floating(cast_scalar(item, c).number());
      out.int_interval = c == Cast::kInt;
      return out;
    }
    case Value::kGlob:
      function_fail(std::string("glob() cannot be cast with ") + cast_name(c) + "()");
    default:
      return cast_scalar(v, c);
  }
}

// ---------------------------------------------------------------------------------------------
// The functions.

struct Arguments {
  std::vector<Value>& args;
  KeywordArguments& kwargs;
  const std::string& function;

  // Takes a keyword argument out; nullptr when absent.
  std::optional<Value> take(const char* name) {
    for (size_t k = 0; k < kwargs.size(); ++k) {
      if (kwargs[k].first == name) {
        Value v = std::move(kwargs[k].second);
        kwargs.erase(kwargs.begin() + static_cast<std::ptrdiff_t>(k));
        return v;
      }
    }
    return std::nullopt;
  }
  void no_more_kwargs() const {
    if (!kwargs.empty()) {
      function_fail(function + "() got an unexpected keyword argument '" + kwargs.front().first + "'");
    }
  }
};

Value as_element_list(std::vector<Value>& args, bool simple_form, const std::string& function) {
  Value choice;
  choice.kind = Value::kChoice;
  choice.simple_form = simple_form;
  for (Value& arg : args) {
    if (arg.is_sweep()) {
      function_fail(std::string("a ") + python_type_name(arg) + " cannot be one of several values of " + function +
                    "()");
    }
    choice.items.push_back(std::move(arg));
  }
  return choice;
}

Value do_cast(Arguments a, Cast c) {
  std::optional<Value> value = a.take("value");
  a.no_more_kwargs();
  if (value && !a.args.empty()) function_fail("cannot use both position and named arguments");
  if (value) return cast_value(*value, c);
  if (a.args.empty()) function_fail(a.function + "() needs a value", "e.g. int(3.7)");
  if (a.args.size() == 1) return cast_value(a.args[0], c);
  return cast_value(as_element_list(a.args, true, a.function), c);
}

Value do_choice(Arguments a) {
  a.no_more_kwargs();
  if (a.args.empty()) {
    function_fail("empty choice is not legal", "give choice() at least one value: choice(a,b)");
  }
  if (a.args.size() == 1 && a.args[0].kind == Value::kChoice) {
    if (!a.args[0].simple_form) function_fail("nesting choices is not supported");
    Value out = std::move(a.args[0]);
    out.simple_form = false;
    return out;
  }
  for (size_t k = 0; k < a.args.size(); ++k) {
    const Value& arg = a.args[k];
    if (arg.kind == Value::kChoice) function_fail("nesting choices is not supported");
    if (arg.kind == Value::kNull || arg.is_sweep()) {
      function_fail("mismatch type argument args[" + std::to_string(k) + "]: " + python_type_name(arg) +
                        " is not a value choice() can hold",
                    "choice() takes strings, numbers, booleans, lists and dicts");
    }
  }
  return as_element_list(a.args, false, "choice");
}

void check_number(const Value& v, const char* name, const std::string& function) {
  if (!v.is_number()) {
    function_fail("mismatch type argument " + std::string(name) + ": " + python_type_name(v) +
                      " is incompatible with Union[int, float]",
                  function + "() takes numbers, e.g. " + (function == "range" ? "range(1,10,2)" : "interval(0.1,1.0)"));
  }
}

// Binds positional and keyword arguments to named parameters, like Python's Signature.bind.
void bind(Arguments& a, const std::vector<const char*>& names, std::vector<std::optional<Value>>& out) {
  out.assign(names.size(), std::nullopt);
  if (a.args.size() > names.size()) function_fail("too many positional arguments");
  for (size_t k = 0; k < a.args.size(); ++k) out[k] = std::move(a.args[k]);
  for (auto& [name, value] : a.kwargs) {
    size_t k = 0;
    while (k < names.size() && name != names[k]) ++k;
    if (k == names.size()) {
      function_fail(a.function + "() got an unexpected keyword argument '" + name + "'");
    }
    if (out[k]) function_fail("multiple values for argument '" + name + "'");
    out[k] = std::move(value);
  }
}

Value int_if_bool(const Value& v) { return v.kind == Value::kBool ? Value::integer(v.b) : v; }

Value do_range(Arguments a) {
  std::vector<std::optional<Value>> p;
  bind(a, {"start", "stop", "step"}, p);
  if (!p[0]) function_fail("missing a required argument: 'start'", "e.g. range(1,10) or range(10)");
  Value start = *p[0];
  std::optional<Value> stop = p[1];
  if (stop && stop->kind == Value::kNull) stop.reset();
  Value step = p[2] ? *p[2] : Value::integer(1);
  check_number(start, "start", "range");
  if (stop) check_number(*stop, "stop", "range");
  check_number(step, "step", "range");
  Value out;
  out.kind = Value::kRange;
  if (!stop) {
    out.items = {Value::integer(0), int_if_bool(start), int_if_bool(step)};
  } else {
    out.items = {int_if_bool(start), int_if_bool(*stop), int_if_bool(step)};
  }
  return out;
}

Value do_interval(Arguments a) {
  std::vector<std::optional<Value>> p;
  bind(a, {"start", "end"}, p);
  if (!p[0] || !p[1]) {
    function_fail(std::string("missing a required argument: '") + (p[0] ? "end" : "start") + "'",
                  "e.g. interval(0.1,1.0)");
  }
  check_number(*p[0], "start", "interval");
  check_number(*p[1], "end", "interval");
  Value out;
  out.kind = Value::kInterval;
  out.items = {Value::floating(p[0]->number()), Value::floating(p[1]->number())};
  return out;
}

Value do_tag(Arguments a) {
  std::optional<Value> sweep = a.take("sweep");
  a.no_more_kwargs();
  if (sweep) a.args.push_back(std::move(*sweep));
  if (a.args.empty()) function_fail("Not enough arguments to tag, must take at least a sweep");
  for (size_t k = 0; k + 1 < a.args.size(); ++k) {
    if (a.args[k].kind != Value::kStr) {
      function_fail("mismatch type argument args[" + std::to_string(k) + "]: " + python_type_name(a.args[k]) +
                        " is incompatible with Union[str, Sweep]",
                    "tags are strings: tag(log,lr,interval(0,1))");
    }
  }
  Value out = std::move(a.args.back());
  if (out.kind != Value::kChoice && out.kind != Value::kRange && out.kind != Value::kInterval) {
    function_fail("Last argument to tag() must be a choice(), range() or interval()", "e.g. tag(log,choice(1,2))");
  }
  std::vector<std::string> tags;
  for (size_t k = 0; k + 1 < a.args.size(); ++k) tags.push_back(a.args[k].s);
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  out.tags = std::move(tags);
  return out;
}

std::mt19937_64& parse_time_rng() {
  // shuffle() of a plain list happens at parse time; Hydra uses the global `random` there too.
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

Value do_shuffle(Arguments a) {
  std::optional<Value> list = a.take("list");
  std::optional<Value> sweep = a.take("sweep");
  a.no_more_kwargs();
  if (list) {
    if (list->kind != Value::kList) function_fail("shuffle(list=...) needs a list");
    std::shuffle(list->items.begin(), list->items.end(), parse_time_rng());
    return std::move(*list);
  }
  if (sweep) {
    if (sweep->kind != Value::kChoice && sweep->kind != Value::kRange) {
      function_fail("shuffle(sweep=...) needs a choice() or range()");
    }
    sweep->shuffle = true;
    return std::move(*sweep);
  }
  if (a.args.size() == 1) {
    Value& arg = a.args[0];
    if (arg.kind == Value::kChoice || arg.kind == Value::kRange) {
      arg.shuffle = true;
      return std::move(arg);
    }
    if (arg.is_sweep() || arg.kind == Value::kNull) {
      function_fail(std::string("mismatch type argument args[0]: ") + python_type_name(arg) + " cannot be shuffled");
    }
    if (arg.kind == Value::kList) {
      std::shuffle(arg.items.begin(), arg.items.end(), parse_time_rng());
      return std::move(arg);
    }
    Value out;
    out.kind = Value::kList;
    out.items.push_back(std::move(arg));
    return out;
  }
  if (a.args.empty()) function_fail("shuffle() needs values", "e.g. shuffle(a,b,c)");
  Value out = as_element_list(a.args, true, "shuffle");
  out.shuffle = true;
  return out;
}

void sort_items(std::vector<Value>& items, bool reverse) {
  try {
    if (reverse) {
      std::stable_sort(items.begin(), items.end(), [](const Value& x, const Value& y) { return value_less(y, x); });
    } else {
      std::stable_sort(items.begin(), items.end(), value_less);
    }
  } catch (const NotOrderable& e) {
    function_fail(e.message, "sort values of one kind: all numbers or all strings");
  }
}

// x + y (sign 1) or x - y (sign -1) on ints of any size or floats.
Value add_numbers(const Value& x, const Value& y, int sign) {
  if (x.kind == Value::kInt && y.kind == Value::kInt) {
    int64_t out = 0;
    const bool overflow = sign > 0 ? __builtin_add_overflow(x.i, y.i, &out) : __builtin_sub_overflow(x.i, y.i, &out);
    if (!overflow && !x.is_big() && !y.is_big()) return Value::integer(out);
    return Value::integer(sign > 0 ? x.big() + y.big() : x.big() - y.big());
  }
  return Value::floating(x.number() + sign * y.number());
}

Value negate(const Value& v) {
  if (v.kind != Value::kInt) return Value::floating(-v.f);
  if (v.is_big() || v.i == std::numeric_limits<int64_t>::min()) {
    BigInt out = v.big();
    out.negate();
    return Value::integer(out);
  }
  return Value::integer(-v.i);
}

Value abs_number(const Value& v) {
  if (v.kind != Value::kInt) return Value::floating(std::fabs(v.f));
  return (v.is_big() ? v.s[0] == '-' : v.i < 0) ? negate(v) : v;
}

Value sort_sweep(Value sweep, bool reverse) {
  if (sweep.kind == Value::kChoice) {
    sort_items(sweep.items, reverse);
    return sweep;
  }
  // A range is sorted by flipping its direction when it runs the wrong way.
  Value start = sweep.items[0], stop = sweep.items[1], step = sweep.items[2];
  bool flip = compare_numbers(start, stop) == (reverse ? -1 : 1);
  if (flip) {
    Value magnitude = abs_number(step);
    int sign = reverse ? -1 : 1;
    sweep.items[0] = add_numbers(stop, magnitude, sign);
    sweep.items[1] = add_numbers(start, magnitude, sign);
    sweep.items[2] = negate(step);
  }
  return sweep;
}

Value do_sort(Arguments a) {
  std::optional<Value> list = a.take("list");
  std::optional<Value> sweep = a.take("sweep");
  std::optional<Value> reverse_arg = a.take("reverse");
  a.no_more_kwargs();
  bool reverse = false;
  if (reverse_arg) {
    if (reverse_arg->kind != Value::kBool) {
      function_fail(std::string("mismatch type argument reverse: ") + python_type_name(*reverse_arg) +
                        " is incompatible with bool",
                    "write reverse=true or reverse=false");
    }
    reverse = reverse_arg->b;
  }
  if (list) {
    if (list->kind != Value::kList) function_fail("sort(list=...) needs a list");
    sort_items(list->items, reverse);
    return std::move(*list);
  }
  if (sweep) {
    if (sweep->kind != Value::kChoice && sweep->kind != Value::kRange) {
      function_fail("sort(sweep=...) needs a choice() or range()");
    }
    return sort_sweep(std::move(*sweep), reverse);
  }
  if (a.args.size() == 1) {
    Value& arg = a.args[0];
    if (arg.kind == Value::kChoice || arg.kind == Value::kRange) return sort_sweep(std::move(arg), reverse);
    if (arg.kind == Value::kList) {
      sort_items(arg.items, reverse);
      return std::move(arg);
    }
    if (arg.is_sweep() || arg.kind == Value::kNull) {
      function_fail(std::string("mismatch type argument args[0]: ") + python_type_name(arg) +
                        " is incompatible with Union[str, int, bool, float, list, dict, "
                        "ChoiceSweep, RangeSweep]",
                    "sort() takes values, a list, a choice() or a range()");
    }
    return std::move(arg);
  }
  for (const Value& arg : a.args) {
    if (!arg.is_number() && arg.kind != Value::kStr) {
      function_fail(std::string("Invalid arguments: sort() of several values takes strings and "
                                "numbers, not ") +
                    python_type_name(arg));
    }
  }
  if (a.args.empty()) function_fail("empty sort input", "e.g. sort(3,1,2)");
  return sort_sweep(as_element_list(a.args, true, "sort"), reverse);
}

std::vector<std::string> glob_patterns(const Value& v, const char* name) {
  std::vector<std::string> out;
  if (v.kind == Value::kStr) {
    out.push_back(v.s);
    return out;
  }
  if (v.kind == Value::kList) {
    for (const Value& item : v.items) {
      if (item.kind != Value::kStr && item.kind != Value::kQuoted) {
        function_fail(std::string("glob ") + name + " patterns must be strings, got " + python_type_name(item));
      }
      out.push_back(item.s);
    }
    return out;
  }
  function_fail(std::string("mismatch type argument ") + name + ": " + python_type_name(v) +
                    " is incompatible with Union[List[str], str]",
                "e.g. glob(*) or glob([a*,b*],exclude=c*)");
}

Value do_glob(Arguments a) {
  std::vector<std::optional<Value>> p;
  bind(a, {"include", "exclude"}, p);
  if (!p[0]) function_fail("missing a required argument: 'include'", "e.g. glob(*)");
  Value out;
  out.kind = Value::kGlob;
  out.include = glob_patterns(*p[0], "include");
  if (p[1] && p[1]->kind != Value::kNull) out.exclude = glob_patterns(*p[1], "exclude");
  return out;
}

}  // namespace

std::optional<Value> call_function(const std::string& name, std::vector<Value>& args, KeywordArguments& kwargs) {
  // Hydra unquotes quoted strings passed directly as arguments (not those inside lists).
  for (Value& arg : args) {
    if (arg.kind == Value::kQuoted) arg.kind = Value::kStr;
  }
  for (auto& kv : kwargs) {
    if (kv.second.kind == Value::kQuoted) kv.second.kind = Value::kStr;
  }
  Arguments a{args, kwargs, name};
  if (name == "int") return do_cast(a, Cast::kInt);
  if (name == "float") return do_cast(a, Cast::kFloat);
  if (name == "str") return do_cast(a, Cast::kStr);
  if (name == "bool") return do_cast(a, Cast::kBool);
  if (name == "choice") return do_choice(a);
  if (name == "range") return do_range(a);
  if (name == "interval") return do_interval(a);
  if (name == "tag") return do_tag(a);
  if (name == "sort") return do_sort(a);
  if (name == "shuffle") return do_shuffle(a);
  if (name == "glob") return do_glob(a);
  return std::nullopt;
}

}  // namespace trainer::config::override_detail
