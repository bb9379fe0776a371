#include "trainer/options/option.h"

namespace trainer::options {
namespace {

Option make(std::string key, Type type, std::string default_text) {
  Option option;
  option.key = std::move(key);
  option.type = type;
  option.default_text = std::move(default_text);
  option.nullable = option.default_text == "null";
  option.mandatory = option.default_text == "???";
  return option;
}

}  // namespace

std::string type_text(Type type) {
  switch (type) {
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kFloat:
      return "float";
    case Type::kString:
      return "string";
    case Type::kChoice:
      return "choice";
    case Type::kDuration:
      return "duration";
    case Type::kLimit:
      return "float share or int count";
    case Type::kIntList:
      return "list of ints";
    case Type::kFloatList:
      return "list of floats";
    case Type::kTextList:
      return "list of strings";
    case Type::kMap:
      return "section";
    case Type::kSteps:
      return "list of steps";
  }
  return "?";
}

Option flag(std::string key, std::string default_text) {
  return make(std::move(key), Type::kBool, std::move(default_text));
}
Option integer(std::string key, std::string default_text) {
  return make(std::move(key), Type::kInt, std::move(default_text));
}
Option number(std::string key, std::string default_text) {
  return make(std::move(key), Type::kFloat, std::move(default_text));
}
Option text(std::string key, std::string default_text) {
  return make(std::move(key), Type::kString, std::move(default_text));
}
Option choice(std::string key, std::string default_text, std::vector<std::string> names) {
  Option option = make(std::move(key), Type::kChoice, std::move(default_text));
  option.choices = std::move(names);
  return option;
}
Option duration(std::string key, std::string default_text) {
  return make(std::move(key), Type::kDuration, std::move(default_text));
}
Option limit(std::string key, std::string default_text) {
  return make(std::move(key), Type::kLimit, std::move(default_text)).at_least(0);
}
Option integers(std::string key, std::string default_text) {
  return make(std::move(key), Type::kIntList, std::move(default_text));
}
Option numbers(std::string key, std::string default_text) {
  return make(std::move(key), Type::kFloatList, std::move(default_text));
}
Option texts(std::string key, std::string default_text) {
  return make(std::move(key), Type::kTextList, std::move(default_text));
}
Option section(std::string key) { return make(std::move(key), Type::kMap, "{}"); }
Option steps(std::string key, std::string default_text) {
  return make(std::move(key), Type::kSteps, std::move(default_text));
}

}  // namespace trainer::options
