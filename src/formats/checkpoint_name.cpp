#include "trainer/formats/checkpoint_name.h"

#include <cstdio>
#include <cstdlib>

namespace trainer::formats {
namespace {

struct Field {
  std::string name;
  std::string spec;  // after ':'; "" for none
};

// Python's format spec, the part a file name needs: [0][width][.precision][d|f|e|g].
struct Spec {
  bool zero = false;
  int width = 0;
  int precision = -1;
  char type = 0;
};

bool parse_spec(const std::string& text, Spec& spec) {
  size_t i = 0;
  if (i < text.size() && text[i] == '0') {
    spec.zero = true;
    ++i;
  }
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') spec.width = spec.width * 10 + (text[i++] - '0');
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size() || text[i] < '0' || text[i] > '9') return false;
    spec.precision = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      spec.precision = spec.precision * 10 + (text[i++] - '0');
  }
  if (i < text.size()) spec.type = text[i++];
  return i == text.size() &&
         (spec.type == 0 || spec.type == 'd' || spec.type == 'f' || spec.type == 'e' || spec.type == 'g');
}

bool is_integer_field(const std::string& name) { return name == "epoch" || name == "step"; }

// Splits a pattern into literal text and fields; false for an unclosed brace.
template <typename OnText, typename OnField>
bool scan(const std::string& pattern, OnText on_text, OnField on_field) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      on_text(pattern[i]);
      continue;
    }
    const size_t close = pattern.find('}', i);
    if (close == std::string::npos) return false;
    const std::string inside = pattern.substr(i + 1, close - i - 1);
    const size_t colon = inside.find(':');
    on_field(Field{inside.substr(0, colon), colon == std::string::npos ? "" : inside.substr(colon + 1)});
    i = close;
  }
  return true;
}

std::string render(const Field& field, double value) {
  Spec spec;
  parse_spec(field.spec, spec);
  char text[96];
  if (is_integer_field(field.name)) {
    std::snprintf(text, sizeof text, spec.zero ? "%0*lld" : "%*lld", spec.width, static_cast<long long>(value));
    return text;
  }
  const char type = spec.type == 0 ? 'g' : spec.type;
  const int precision = spec.precision >= 0 ? spec.precision : (spec.type == 0 ? 12 : 6);
  const char format[] = {'%', spec.zero ? '0' : '-', '*', '.', '*', type, '\0'};
  std::snprintf(text, sizeof text, format, spec.zero ? spec.width : 0, precision, value);
  return text;
}

}  // namespace

std::string format_checkpoint_name(const std::string& pattern, int64_t epoch, int64_t step,
                                   const std::map<std::string, double>& metrics) {
  std::string out;
  scan(
      pattern, [&](char c) { out += c; },
      [&](const Field& field) {
        double value = 0.0;
        if (field.name == "epoch")
          value = static_cast<double>(epoch);
        else if (field.name == "step")
          value = static_cast<double>(step);
        else if (const auto found = metrics.find(field.name); found != metrics.end())
          value = found->second;
        out += render(field, value);
      });
  return out;
}

std::string check_checkpoint_name(const std::string& pattern, const std::vector<std::string>& metrics) {
  if (pattern.empty()) return "an empty file name";
  std::string problem;
  bool slash = false;
  const bool closed = scan(
      pattern, [&](char c) { slash = slash || c == '/'; },
      [&](const Field& field) {
        if (!problem.empty()) return;
        bool known = is_integer_field(field.name);
        for (const std::string& metric : metrics) known = known || metric == field.name;
        Spec spec;
        if (!known) {
          std::string listed = "epoch, step";
          for (const std::string& metric : metrics) listed += ", " + metric;
          problem = "{" + field.name + "} is not a field a checkpoint name can hold (" + listed + ")";
        } else if (!parse_spec(field.spec, spec)) {
          problem = "{" + field.name + ":" + field.spec +
                    "} has a format trainer does not read "
                    "(use {epoch:03d} or {val/acc:.4f})";
        } else if (is_integer_field(field.name) && spec.type != 0 && spec.type != 'd') {
          problem = "{" + field.name + "} is an int: its format is d ({" + field.name + ":03d})";
        } else if (!is_integer_field(field.name) && spec.type == 'd') {
          problem = "{" + field.name + "} is a float: use f, e or g ({" + field.name + ":.4f})";
        }
      });
  if (!closed) return "a '{' without its '}'";
  if (!problem.empty()) return problem;
  if (slash) return "a '/' outside the {fields} would make a subdirectory";
  return "";
}

}  // namespace trainer::formats
