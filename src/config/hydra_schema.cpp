#include "trainer/config/hydra_schema.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "trainer/config/python_str.h"
#include "trainer/util/error.h"

namespace trainer::config {
namespace {

enum class Kind { kStr, kOptionalStr, kOptionalBool, kInt, kStrList, kStrDict, kRunMode };

struct Field {
  const char* path;  // below hydra.
  Kind kind;
};

// HydraConf's fields with a type OmegaConf enforces (Any-typed ones, such as verbose,
// job_logging or the launcher's and sweeper's plugin configs, are left out).
constexpr Field kFields[] = {
    {"run.dir", Kind::kStr},
    {"sweep.dir", Kind::kStr},
    {"sweep.subdir", Kind::kStr},
    {"output_subdir", Kind::kOptionalStr},
    {"mode", Kind::kRunMode},
    {"searchpath", Kind::kStrList},
    {"job.name", Kind::kStr},
    {"job.chdir", Kind::kOptionalBool},
    {"job.override_dirname", Kind::kStr},
    {"job.id", Kind::kStr},
    {"job.num", Kind::kInt},
    {"job.config_name", Kind::kOptionalStr},
    {"job.env_set", Kind::kStrDict},
    {"job.env_copy", Kind::kStrList},
    {"job.config.override_dirname.kv_sep", Kind::kStr},
    {"job.config.override_dirname.item_sep", Kind::kStr},
    {"job.config.override_dirname.exclude_keys", Kind::kStrList},
    {"help.app_name", Kind::kStr},
    {"help.header", Kind::kStr},
    {"help.footer", Kind::kStr},
    {"help.template", Kind::kStr},
    {"hydra_help.template", Kind::kStr},
    {"hydra_help.hydra_help", Kind::kStr},
};

const char* type_text(Kind kind) {
  switch (kind) {
    case Kind::kStr:
      return "str";
    case Kind::kOptionalStr:
      return "Optional[str]";
    case Kind::kOptionalBool:
      return "Optional[bool]";
    case Kind::kInt:
      return "int";
    case Kind::kStrList:
      return "List[str]";
    case Kind::kStrDict:
      return "Dict[str, str]";
    case Kind::kRunMode:
      return "Optional[RunMode]";
  }
  return "";
}

[[noreturn]] void refuse(const Node& value, const std::string& key, Kind kind, const std::string& problem,
                         const std::string& fix) {
  const std::string where = value.origin().describe();
  throw Error(where.empty() ? key : where, problem + " (" + key + " is " + type_text(kind) + " in Hydra's HydraConf)",
              fix);
}

// Python's int() of a text: an optional sign, then digits (underscores between them).
bool python_int_text(const std::string& text, int64_t& out) {
  std::string digits;
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (i < end && (text[i] == '+' || text[i] == '-')) digits += text[i++];
  bool digit_before = false;
  for (; i < end; ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
      digit_before = true;
    } else if (c == '_' && digit_before && i + 1 < end && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      continue;
    } else {
      return false;
    }
  }
  if (!digit_before || digits.size() > 18) return false;
  out = std::stoll(digits);
  return true;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// OmegaConf's StringNode: any scalar as Python's str(); containers refused.
void to_str(Node& value, const std::string& key, Kind kind) {
  if (!value.is_scalar()) {
    refuse(value, key, kind, "Cannot convert '" + std::string(value.is_list() ? "list" : "dict") + "' to string",
           "Give " + key + " one string.");
  }
  if (value.is_string()) return;
  Origin origin = value.origin();
  value = Node::string(python_str(value));
  value.set_origin(std::move(origin));
}

void convert(Node& value, const std::string& key, Kind kind) {
  if (value.is_missing() || value.is_interpolation()) return;
  Origin origin = value.origin();
  if (value.is_null()) {
    if (kind == Kind::kOptionalStr || kind == Kind::kOptionalBool || kind == Kind::kRunMode) return;
    refuse(value, key, kind, "field '" + key + "' is not Optional",
           "Give " + key + " a value (" + type_text(kind) + "), or leave it out for Hydra's default.");
  }
  switch (kind) {
    case Kind::kStr:
    case Kind::kOptionalStr:
      to_str(value, key, kind);
      return;
    case Kind::kOptionalBool: {
      std::optional<bool> result;
      int64_t number = 0;
      if (value.type() == NodeType::kBool) return;
      if (value.type() == NodeType::kInt) {
        result = value.is_big_int() || value.as_int() != 0;
      } else if (value.is_string()) {
        const std::string text = lower(value.as_string());
        if (python_int_text(text, number)) {
          result = number != 0;
        } else if (text == "yes" || text == "y" || text == "on" || text == "true") {
          result = true;
        } else if (text == "no" || text == "n" || text == "off" || text == "false") {
          result = false;
        }
      }
      if (!result) {
        refuse(value, key, kind,
               "Value '" + python_str(value) + "' is not a valid bool (type " + type_name(value.type()) + ")",
               "Give " + key + " true or false (yes/no, on/off and 1/0 read as those), or null.");
      }
      value = Node::boolean(*result);
      value.set_origin(std::move(origin));
      return;
    }
    case Kind::kInt: {
      int64_t number = 0;
      if (value.type() == NodeType::kInt) return;
      if (!value.is_string() || !python_int_text(value.as_string(), number)) {
        refuse(value, key, kind,
               "Value '" + python_str(value) + "' of type '" + type_name(value.type()) +
                   "' could not be converted to Integer",
               "Give " + key + " a whole number.");
      }
      value = Node::integer(number);
      value.set_origin(std::move(origin));
      return;
    }
    case Kind::kStrList:
      if (!value.is_list()) {
        refuse(value, key, kind, "Invalid value assigned: " + std::string(type_name(value.type())) + " is not a list",
               "Give " + key + " a list: " + key + "=[a,b].");
      }
      for (Node& item : value.items()) {
        if (!item.is_missing() && !item.is_interpolation()) to_str(item, key, kind);
      }
      return;
    case Kind::kStrDict:
      if (!value.is_map()) {
        refuse(value, key, kind, "Invalid value assigned: " + std::string(type_name(value.type())) + " is not a dict",
               "Give " + key + " a dict: " + key + "={NAME:value}, or +" + key + ".NAME=value.");
      }
      for (Node::Entry& entry : value.entries()) {
        if (!entry.value.is_missing() && !entry.value.is_interpolation())
          to_str(entry.value, key + "." + entry.key, kind);
      }
      return;
    case Kind::kRunMode: {
      // OmegaConf's EnumNode: a member's name (RunMode.RUN too) or its value (1, 2).
      std::string name;
      if (value.is_string()) {
        name = value.as_string();
        if (name.rfind("RunMode.", 0) == 0) name = name.substr(8);
      } else if (value.type() == NodeType::kInt && !value.is_big_int()) {
        name = value.as_int() == 1 ? "RUN" : value.as_int() == 2 ? "MULTIRUN" : "";
      }
      if (name != "RUN" && name != "MULTIRUN") {
        refuse(value, key, kind, "Invalid value '" + python_str(value) + "', expected one of [RUN, MULTIRUN]",
               "Give " + key + " RUN or MULTIRUN, or null.");
      }
      value = Node::string(name);
      value.set_origin(std::move(origin));
      return;
    }
  }
}

}  // namespace

void apply_hydra_schema(Node& hydra) {
  if (!hydra.is_map()) return;
  for (const Field& field : kFields) {
    Node* value = select(hydra, field.path);
    if (value != nullptr) convert(*value, std::string("hydra.") + field.path, field.kind);
  }
}

}  // namespace trainer::config
