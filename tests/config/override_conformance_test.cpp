// Runs every case of tests/data/overrides/hydra_overrides.tsv (overrides and what Hydra 1.3 made of
// them, observed) through parse_override and prints the result in the file's own format, so the
// comparison is string for string.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/override.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::Node;
using trainer::config::NodeType;
using trainer::config::Override;
using trainer::config::OverrideKind;
using trainer::config::SweepKind;

// Python's repr() of a float.
std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto end = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific).ptr;
  std::string sci(buffer, end);
  std::string sign = sci[0] == '-' ? "-" : "";
  if (!sign.empty()) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  int n = static_cast<int>(digits.size());
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1) + (n > 1 ? "." + digits.substr(1) : "");
    std::string exp = std::to_string(std::abs(exponent));
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (exp.size() < 2 ? "0" : "") + exp;
  }
  int point = exponent + 1;
  if (point <= 0) return sign + "0." + std::string(-point, '0') + digits;
  if (point >= n) return sign + digits + std::string(point - n, '0') + ".0";
  return sign + digits.substr(0, point) + "." + digits.substr(point);
}

// json.dumps(s): ASCII only, \uXXXX for everything else.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  char buffer[16];
  for (size_t k = 0; k < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[k]);
    uint32_t code = c;
    size_t n = 1;
    if (c >= 0xF0) {
      code = c & 0x07;
      n = 4;
    } else if (c >= 0xE0) {
      code = c & 0x0F;
      n = 3;
    } else if (c >= 0xC0) {
      code = c & 0x1F;
      n = 2;
    }
    for (size_t j = 1; j < n && k + j < s.size(); ++j) code = (code << 6) | (s[k + j] & 0x3F);
    k += n;
    switch (code) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (code < 0x20 || code >= 0x7F) {
      if (code >= 0x10000) {
        uint32_t v = code - 0x10000;
        snprintf(buffer, sizeof(buffer), "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        snprintf(buffer, sizeof(buffer), "\\u%04x", code);
      }
      out += buffer;
    } else {
      out += static_cast<char>(code);
    }
  }
  return out + "\"";
}

// Python's repr() of a str.
std::string py_str(const std::string& s) {
  bool single = s.find('\'') != std::string::npos;
  bool dbl = s.find('"') != std::string::npos;
  char q = (single && !dbl) ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == q) {
      out += '\\';
      out += c;
    } else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out + q;
}

std::string typed_float(double v) {
  std::string r = python_float_repr(v);
  return r == "inf" ? "+inf" : r;
}

std::string typed_key(const Node::Entry& e) {
  switch (e.key_type) {
    case NodeType::kNull:
      return "null";
    case NodeType::kBool:
      return e.key == "true" ? "True(bool)" : "False(bool)";
    case NodeType::kInt:
      return e.key + "(int)";
    case NodeType::kFloat:
      return e.key + "(float)";
    default:
      return json_string(e.key) + "(str)";
  }
}

// The "value=" column: 1(int), "abc"(str), [..], {k: v}.
std::string typed(const Node& n) {
  switch (n.type()) {
    case NodeType::kNull:
      return "null";
    case NodeType::kBool:
      return n.as_bool() ? "True(bool)" : "False(bool)";
    case NodeType::kInt:
      return n.int_text() + "(int)";
    case NodeType::kFloat:
      return typed_float(n.as_float()) + "(float)";
    case NodeType::kString:
      return json_string(n.as_string()) + "(str)";
    case NodeType::kList: {
      std::string out = "[";
      for (size_t k = 0; k < n.items().size(); ++k) out += (k ? ", " : "") + typed(n.items()[k]);
      return out + "]";
    }
    case NodeType::kMap: {
      std::string out = "{";
      for (size_t k = 0; k < n.entries().size(); ++k) {
        out += (k ? ", " : "") + typed_key(n.entries()[k]) + ": " + typed(n.entries()[k].value);
      }
      return out + "}";
    }
    default:
      return "?";
  }
}

std::string py_key(const Node::Entry& e) {
  switch (e.key_type) {
    case NodeType::kNull:
      return "None";
    case NodeType::kBool:
      return e.key == "true" ? "True" : "False";
    case NodeType::kInt:
    case NodeType::kFloat:
      return e.key;
    default:
      return py_str(e.key);
  }
}

// Python's repr() of a parsed value.
std::string py(const Node& n) {
  switch (n.type()) {
    case NodeType::kNull:
      return "None";
    case NodeType::kBool:
      return n.as_bool() ? "True" : "False";
    case NodeType::kInt:
      return n.int_text();
    case NodeType::kFloat:
      return python_float_repr(n.as_float());
    case NodeType::kString:
      return py_str(n.as_string());
    case NodeType::kList: {
      std::string out = "[";
      for (size_t k = 0; k < n.items().size(); ++k) out += (k ? ", " : "") + py(n.items()[k]);
      return out + "]";
    }
    case NodeType::kMap: {
      std::string out = "{";
      for (size_t k = 0; k < n.entries().size(); ++k) {
        out += (k ? ", " : "") + py_key(n.entries()[k]) + ": " + py(n.entries()[k].value);
      }
      return out + "}";
    }
    default:
      return "?";
  }
}

std::string py_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + py_str(items[k]);
  return out + "]";
}

std::string py_bool(bool b) { return b ? "True" : "False"; }

std::string sweep_repr(const Override& o) {
  const auto& s = o.sweep;
  std::string tags = "set()";
  if (!s.tags.empty()) {
    tags = "{";
    for (size_t k = 0; k < s.tags.size(); ++k) tags += (k ? ", " : "") + py_str(s.tags[k]);
    tags += "}";
  }
  switch (s.kind) {
    case SweepKind::kSimpleChoice:
    case SweepKind::kChoice: {
      std::string list = "[";
      for (size_t k = 0; k < s.choices.size(); ++k) {
        const auto& e = s.choices[k];
        std::string item = py(e.value);
        // A quoted string keeps its quotes in the element's text: Hydra's QuotedString.
        if (e.value.is_string() && !e.text.empty() && (e.text[0] == '\'' || e.text[0] == '"')) {
          item = "QuotedString(text=" + py_str(e.value.as_string()) +
                 ", quote=" + (e.text[0] == '\'' ? "<Quote.single: 0>" : "<Quote.double: 1>") + ")";
        }
        list += (k ? ", " : "") + item;
      }
      list += "]";
      return std::string(s.kind == SweepKind::kSimpleChoice ? "SIMPLE_CHOICE_SWEEP" : "CHOICE_SWEEP") +
             " ChoiceSweep(tags=" + tags + ", list=" + list +
             ", simple_form=" + py_bool(s.kind == SweepKind::kSimpleChoice) + ", shuffle=" + py_bool(s.shuffle) + ")";
    }
    case SweepKind::kRange:
      return "RANGE_SWEEP RangeSweep(tags=" + tags + ", start=" + py(s.range_start) + ", stop=" + py(s.range_stop) +
             ", step=" + py(s.range_step) + ", shuffle=" + py_bool(s.shuffle) + ")";
    case SweepKind::kInterval:
      return "INTERVAL_SWEEP IntervalSweep(tags=" + tags + ", start=" + python_float_repr(s.interval_start) +
             ", end=" + python_float_repr(s.interval_end) + ")";
    case SweepKind::kGlob:
      return "GLOB_CHOICE_SWEEP Glob(include=" + py_list(s.glob_include) + ", exclude=" + py_list(s.glob_exclude) + ")";
    default:
      return "?";
  }
}

std::string describe(const std::string& text) {
  Override o;
  try {
    o = trainer::config::parse_override(text);
  } catch (const trainer::Error& e) {
    return std::string("ERROR ") + e.what();
  }
  if (o.is_sweep()) {
    std::string strings;
    std::mt19937_64 rng(0);
    try {
      strings = py_list(trainer::config::sweep_value_texts(o, nullptr, rng));
    } catch (const trainer::Error&) {
      bool int_range = o.sweep.kind == SweepKind::kRange && o.sweep.range_start.type() == NodeType::kInt &&
                       o.sweep.range_stop.type() == NodeType::kInt && o.sweep.range_step.type() == NodeType::kInt;
      strings = std::string("not iterable (") + (int_range ? "ValueError" : "HydraException") + ")";
    }
    return "SWEEP " + sweep_repr(o) + " strings=" + strings;
  }
  const char* kind = "CHANGE";
  switch (o.kind) {
    case OverrideKind::kAdd:
      kind = "ADD";
      break;
    case OverrideKind::kForceAdd:
      kind = "FORCE_ADD";
      break;
    case OverrideKind::kDelete:
      kind = "DEL";
      break;
    default:
      break;
  }
  std::string out = std::string(kind) + " key=" + o.key;
  if (o.package) out += " pkg='" + *o.package + "'";
  return out + " value=" + typed(o.value);
}

// "strings=['2', '3', '1']" -> its items sorted (shuffle's order is random).
std::string sorted_strings(const std::string& line) {
  size_t at = line.find(" strings=[");
  if (at == std::string::npos) return line;
  std::string list = line.substr(at + 10, line.size() - at - 11);
  std::vector<std::string> items;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    items.push_back(item);
  }
  std::sort(items.begin(), items.end());
  std::string out = line.substr(0, at) + " strings=";
  for (const auto& i : items) out += i + ";";
  return out;
}

}  // namespace

TEST_CASE("every case of hydra_overrides.tsv parses as Hydra 1.3 parses it") {
  std::ifstream file(std::string(TRAINER_TEST_DATA_DIR) + "/overrides/hydra_overrides.tsv");
  REQUIRE(file.good());
  std::string line;
  int cases = 0;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    size_t tab = line.rfind('\t');
    REQUIRE(tab != std::string::npos);
    std::string input = line.substr(0, tab);
    std::string expected = line.substr(tab + 1);
    std::string actual = describe(input);
    ++cases;
    INFO("override: " << input);
    if (expected.rfind("ERROR", 0) == 0) {
      CHECK(actual.substr(0, 5) == "ERROR");
    } else if (expected.find("shuffle=True") != std::string::npos) {
      CHECK(sorted_strings(actual) == sorted_strings(expected));
    } else {
      CHECK(actual == expected);
    }
  }
  CHECK(cases == 180);
}
