#include "trainer/options/value_check.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"

namespace trainer::options {
namespace {

std::string number_text(double value) {
  char text[48];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string range_text(const Option& option) {
  std::string text;
  const bool low = option.minimum != -HUGE_VAL;
  const bool high = option.maximum != HUGE_VAL;
  if (low && high) {
    text = "in " + std::string(option.minimum_open ? "(" : "[") + number_text(option.minimum) + ", " +
           number_text(option.maximum) + (option.maximum_open ? ")" : "]");
  } else if (low) {
    text = (option.minimum_open ? "above " : "at least ") + number_text(option.minimum);
  } else if (high) {
    text = (option.maximum_open ? "below " : "at most ") + number_text(option.maximum);
  }
  if (option.minus_one) text += " or -1";
  return text;
}

bool in_range(const Option& option, double value) {
  if (option.minus_one && value == -1) return true;
  if (option.minimum_open ? !(value > option.minimum) : !(value >= option.minimum)) return false;
  if (option.maximum_open ? !(value < option.maximum) : !(value <= option.maximum)) return false;
  return true;
}

std::string join(const std::vector<std::string>& names, const std::string& last) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : (i + 1 == names.size() ? " " + last + " " : ", ")) + names[i];
  }
  return text;
}

bool is_number(const config::Node& value) {
  return value.type() == config::NodeType::kInt || value.type() == config::NodeType::kFloat;
}

double as_number(const config::Node& value) {
  return value.type() == config::NodeType::kInt ? static_cast<double>(value.as_int()) : value.as_float();
}

std::string got(const config::Node& value) {
  return std::string(config::type_name(value.type())) + " " + config::python_str(value);
}

std::string out_of_range(const Option& option, const config::Node& value) {
  return config::python_str(value) + " is out of range: " + option.help + ", " + range_text(option);
}

std::string expected(const Option& option, const std::string& what, const config::Node& value) {
  return "expected " + what + " (" + option.help + "), got " + got(value);
}

std::string too_big(const Option& option, const config::Node& value) {
  return value.int_text() + " does not fit in 64 bits (" + option.help +
         "); use a value between -9223372036854775808 and 9223372036854775807";
}

std::string check_number(const Option& option, const config::Node& value, bool integer) {
  const bool is_int = value.type() == config::NodeType::kInt;
  if (!is_number(value) || (integer && !is_int)) {
    return expected(option, integer ? "an int" : "a number", value);
  }
  if (value.is_big_int()) return too_big(option, value);
  if (!std::isfinite(as_number(value))) {
    return config::python_str(value) + " is not a finite number (" + option.help + ")";
  }
  return in_range(option, as_number(value)) ? "" : out_of_range(option, value);
}

std::string check_list(const Option& option, const config::Node& value, bool integer) {
  if (!value.is_list()) return expected(option, integer ? "a list of ints" : "a list of numbers", value);
  if (value.items().empty()) return "an empty list: " + option.help + " needs at least one value";
  for (size_t i = 0; i < value.items().size(); ++i) {
    const config::Node& item = value.items()[i];
    if (item.is_interpolation()) continue;
    const std::string problem = check_number(option, item, integer);
    if (!problem.empty()) return "item " + std::to_string(i) + ": " + problem;
  }
  if (option.key == "betas" && value.items().size() != 2) return "needs exactly two values (" + option.help + ")";
  return "";
}

// A list of strings (it may be empty: data.categorical: []).
std::string check_texts(const Option& option, const config::Node& value) {
  if (option.one_text && (value.is_string() || value.is_interpolation())) return "";
  if (!value.is_list()) return expected(option, "a list of strings", value);
  for (size_t i = 0; i < value.items().size(); ++i) {
    const config::Node& item = value.items()[i];
    if (item.is_string() || item.is_interpolation()) continue;
    return "item " + std::to_string(i) + ": " + expected(option, "a string (quote names that look like numbers)", item);
  }
  return "";
}

// The shape of a list of steps: each item a name, or a map of one name to its parameters (a
// section of them, or one value for the first). The names and parameters are the reader's.
std::string check_steps(const Option& option, const config::Node& value) {
  const std::string shape = "a list of steps, each a name or {name: its parameters}";
  if (!value.is_list()) return expected(option, shape, value);
  for (size_t i = 0; i < value.items().size(); ++i) {
    const config::Node& item = value.items()[i];
    if (item.is_string() || item.is_interpolation()) continue;
    if (item.is_map() && item.entries().size() == 1) continue;
    return "item " + std::to_string(i) + ": " + expected(option, "a name or a map of one name to its parameters", item);
  }
  return "";
}

}  // namespace

std::optional<std::string> choice_text(const config::Node& value) {
  if (value.is_string()) return value.as_string();
  if (value.type() == config::NodeType::kInt) return value.int_text();
  return std::nullopt;
}

std::optional<double> parse_duration(const std::string& text) {
  std::vector<double> fields;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ':')) {
    try {
      size_t used = 0;
      fields.push_back(std::stod(part, &used));
      if (used != part.size()) return std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  // Lightning's Timer takes DD:HH:MM:SS whole: "0:02" read from the right would be 2 s, from the
  // left 2 hours. A text without ':' is a number of seconds.
  if ((fields.size() != 1 && fields.size() != 4) || (!text.empty() && text.back() == ':')) return std::nullopt;
  static const double kUnits[] = {1.0, 60.0, 3600.0, 86400.0};
  double seconds = 0.0;
  for (size_t i = 0; i < fields.size(); ++i) seconds += fields[fields.size() - 1 - i] * kUnits[i];
  return seconds;
}

std::string accepted(const Option& option) {
  std::string text;
  switch (option.type) {
    case Type::kBool:
      text = option.bool_as_int ? "true, false or an int" : "true or false";
      break;
    case Type::kInt:
      text = "an int";
      break;
    case Type::kFloat:
      text = "a number";
      break;
    case Type::kString:
      text = "a string";
      break;
    case Type::kChoice:
      text = "one of " + join(option.choices, "or");
      break;
    case Type::kDuration:
      text = "DD:HH:MM:SS or a number of seconds";
      break;
    case Type::kLimit:
      text = "a float share in [0, 1] or an int count >= 0";
      break;
    case Type::kIntList:
      text = "a list of ints";
      break;
    case Type::kFloatList:
      text = "a list of numbers";
      break;
    case Type::kTextList:
      text = "a list of strings";
      break;
    case Type::kMap:
      text = "a section of keys";
      break;
    case Type::kSteps:
      text = "a list of steps, each a name or {name: its parameters}";
      break;
  }
  if (option.type != Type::kLimit && option.has_range()) text += " " + range_text(option);
  if (option.type == Type::kInt && !option.choices.empty()) text += " or " + join(option.choices, "or");
  if (option.type == Type::kInt && option.bool_as_int) text += " (true: 1, false: 0)";
  if (option.nullable) text += ", or null";
  return text;
}

std::string check_value(const Option& option, const config::Node& value) {
  if (value.is_null()) {
    return option.nullable ? "" : "null is not allowed (" + option.help + "); expected " + accepted(option);
  }
  if (value.is_missing()) return option.mandatory ? "" : "a value is needed (" + option.help + ")";
  switch (option.type) {
    case Type::kBool:
      if (value.type() == config::NodeType::kBool) return "";
      return expected(option, option.nullable ? "true, false or null" : "true or false", value);
    case Type::kInt:
      if (value.type() == config::NodeType::kBool && option.bool_as_int) return "";
      if (value.is_string()) {
        for (const std::string& word : option.choices) {
          if (word == value.as_string()) return "";
        }
        if (!option.choices.empty()) return expected(option, "an int or " + join(option.choices, "or"), value);
      }
      return check_number(option, value, true);
    case Type::kFloat:
      return check_number(option, value, false);
    case Type::kString:
      return value.is_string() ? "" : expected(option, "a string", value);
    case Type::kChoice: {
      if (value.type() == config::NodeType::kBool && option.bool_as_int) return "";
      const std::optional<std::string> name = choice_text(value);
      if (name) {
        for (const std::string& known : option.choices) {
          if (known == *name) return "";
        }
      }
      std::string problem =
          config::python_str(value) + " is not one of " + join(option.choices, "or") + " (" + option.help + ")";
      if (name) {
        const std::string closest = config::closest_match(*name, option.choices);
        if (!closest.empty()) problem += "; did you mean '" + closest + "'?";
      }
      return problem;
    }
    case Type::kDuration: {
      double seconds = 0;
      if (is_number(value)) {
        seconds = as_number(value);
      } else if (value.is_string() && parse_duration(value.as_string())) {
        seconds = *parse_duration(value.as_string());
      } else {
        return expected(option, "DD:HH:MM:SS or a number of seconds", value);
      }
      if (!std::isfinite(seconds)) return config::python_str(value) + " is not a finite duration (" + option.help + ")";
      return in_range(option, seconds) ? ""
                                       : config::python_str(value) + " is out of range: " + option.help + ", " +
                                             range_text(option) + " seconds";
    }
    case Type::kLimit:
      if (value.type() == config::NodeType::kInt) {
        if (value.is_big_int()) return too_big(option, value);
        return value.as_int() >= 0 ? ""
                                   : config::python_str(value) + " is out of range: a batch count cannot be negative";
      }
      if (value.type() == config::NodeType::kFloat) {
        const double share = value.as_float();
        return share >= 0.0 && share <= 1.0 ? ""
                                            : config::python_str(value) +
                                                  " is out of range: a share of the batches lies in [0, 1] (an int "
                                                  "counts batches)";
      }
      return expected(option, "a float share in [0, 1] or an int count", value);
    case Type::kIntList:
      return check_list(option, value, true);
    case Type::kFloatList:
      return check_list(option, value, false);
    case Type::kTextList:
      return check_texts(option, value);
    case Type::kMap:
      return value.is_map() ? "" : expected(option, "a section of keys", value);
    case Type::kSteps:
      return check_steps(option, value);
  }
  return "";
}

}  // namespace trainer::options
