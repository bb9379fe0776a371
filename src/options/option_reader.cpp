#include "trainer/options/option_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>

#include "trainer/options/option_table.h"
#include "trainer/options/value_check.h"
#include "trainer/util/error.h"

namespace trainer::options {
namespace {

std::mutex& reads_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<std::string>& reads() {
  static auto* set = new std::set<std::string>();  // never destroyed: read at exit
  return *set;
}

// "trainer" + "grad_scaler.init_scale" -> ("trainer.grad_scaler", "init_scale").
std::pair<std::string, std::string> split(const std::string& prefix, std::string_view key) {
  std::string full = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
  const size_t dot = full.rfind('.');
  if (dot == std::string::npos) return {"", full};
  return {full.substr(0, dot), full.substr(dot + 1)};
}

}  // namespace

OptionReader::OptionReader(config::ConfigView view, std::string variant, std::optional<std::string> path)
    : view_(std::move(view)),
      variant_(std::move(variant)),
      path_(path.has_value() ? std::move(path).value() : view_.prefix()) {}

const Option& OptionReader::declared(std::string_view key) const {
  const auto [path, name] = split(path_, key);
  const Section* section = find_section(path, variant_);
  const Option* option = section == nullptr ? nullptr : find_option(*section, name);
  if (option == nullptr) {
    // A programmer error: every key the code reads is declared in src/options/*_section.cpp.
    throw std::logic_error("trainer reads the undeclared option " + path +
                           (variant_.empty() ? "" : "[" + variant_ + "]") + "." + name +
                           ": declare it in src/options/");
  }
  std::lock_guard<std::mutex> lock(reads_mutex());
  reads().insert(path + (section->variant.empty() ? "" : "[" + section->variant + "]") + "." + name);
  return *option;
}

std::string OptionReader::where(std::string_view key) const {
  std::string full = view_.full_path(key);
  if (!view_.has(key)) return full;
  return view_.node(key).origin().describe_key(full);
}

const config::Node* OptionReader::checked(std::string_view key, bool computed) const {
  const Option& option = declared(key);
  if (option.computed_default != computed) {
    throw std::logic_error(
        "option " + view_.full_path(key) +
        (computed ? " has a declared default: read it with get" : " is computed: read it with get_or"));
  }
  if (!view_.has(key)) {
    if (computed) return nullptr;
    const config::Node& fallback = default_node(option);
    if (option.mandatory) {
      throw Error(view_.full_path(key), "is required (" + option.help + ") but the config does not set it",
                  "Give it on the command line: " + view_.full_path(key) + "=...");
    }
    return &fallback;
  }
  const config::Node& value = view_.node(key);  // resolved; a missing `???` throws here
  if (option.type == Type::kMap) return &value;
  const std::string problem = check_value(option, value);
  if (!problem.empty()) {
    throw Error(where(key), problem, "Set " + view_.full_path(key) + " to " + accepted(option) + ".");
  }
  return &value;
}

int64_t OptionReader::count(std::string_view key) const {
  const config::Node* value = checked(key, declared(key).computed_default);
  if (value == nullptr || value->is_null()) return 0;
  if (value->type() == config::NodeType::kBool) return value->as_bool() ? 1 : 0;
  return value->as_int();
}

std::string OptionReader::choice(std::string_view key) const {
  const config::Node* value = checked(key, declared(key).computed_default);
  if (value == nullptr || value->is_null()) return "";
  if (value->type() == config::NodeType::kBool) return value->as_bool() ? "true" : "false";
  return choice_text(*value).value_or("");
}

std::optional<double> OptionReader::seconds(std::string_view key) const {
  const config::Node* value = checked(key, false);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (value->type() == config::NodeType::kInt) return static_cast<double>(value->as_int());
  if (value->type() == config::NodeType::kFloat) return value->as_float();
  return parse_duration(value->as_string());
}

Limit OptionReader::limit(std::string_view key) const {
  const config::Node* value = checked(key, false);
  Limit out;
  if (value == nullptr || value->is_null()) return out;
  if (value->type() == config::NodeType::kInt) {
    out.is_fraction = false;
    out.count = value->as_int();
  } else {
    out.fraction = value->as_float();
  }
  return out;
}

const config::Node* OptionReader::steps(std::string_view key) const {
  const config::Node* value = checked(key, false);
  return value == nullptr || value->is_null() ? nullptr : value;
}

std::string OptionReader::word(std::string_view key) const {
  const config::Node* value = checked(key, false);
  return value != nullptr && value->is_string() ? value->as_string() : "";
}

std::vector<std::string> OptionReader::texts(std::string_view key) const {
  const config::Node* value = checked(key, false);
  if (value == nullptr || value->is_null()) return {};
  if (value->is_string()) return {value->as_string()};
  return config::ConfigConverter<std::vector<std::string>>::convert(*value, view_.full_path(key));
}

bool OptionReader::declares(std::string_view key) const {
  const auto [path, name] = split(path_, key);
  const Section* section = find_section(path, variant_);
  return section != nullptr && find_option(*section, name) != nullptr;
}

bool OptionReader::given(std::string_view key) const {
  declared(key);
  return view_.has(key) && !view_.node(key).is_null();
}

OptionReader OptionReader::sub(std::string_view key) const {
  const Option& option = declared(key);
  if (option.type != Type::kMap) throw std::logic_error("option " + view_.full_path(key) + " is not a section");
  return OptionReader(view_.sub(key), variant_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

std::vector<std::string> keys_read() {
  std::lock_guard<std::mutex> lock(reads_mutex());
  return {reads().begin(), reads().end()};
}

void write_keys_read() {
  const char* path = std::getenv("TRAINER_OPTION_READS");
  if (path == nullptr || path[0] == '\0') return;
  std::string text;
  for (const std::string& key : keys_read()) text += key + "\n";
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t written = ::write(fd, text.data(), text.size());
  (void)written;
  ::close(fd);
}

}  // namespace trainer::options
