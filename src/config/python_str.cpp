#include "trainer/config/python_str.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace trainer::config {
namespace {

void append_repr(const Node& value, std::string& out);

void append_key_repr(const Node::Entry& entry, std::string& out) {
  switch (entry.key_type) {
    case NodeType::kInt:
    case NodeType::kFloat:
      out += entry.key;
      break;
    case NodeType::kBool:
      out += (entry.key == "true" || entry.key == "True") ? "True" : "False";
      break;
    case NodeType::kNull:
      out += "None";
      break;
    default:
      out += python_string_repr(entry.key);
      break;
  }
}

void append_repr(const Node& value, std::string& out) {
  switch (value.type()) {
    case NodeType::kString:
      out += python_string_repr(value.as_string());
      break;
    case NodeType::kMissing:
      out += "'\?\?\?'";
      break;
    default:
      append_python_str(value, out);
      break;
  }
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, then laid out the way Python's repr does.
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  const int point = exponent + 1;  // position of the decimal point relative to the digits
  std::string out = negative ? "-" : "";
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-point), '0');
      out += digits;
    } else if (static_cast<size_t>(point) >= digits.size()) {
      out += digits;
      out.append(static_cast<size_t>(point) - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(point));
      out += '.';
      out += digits.substr(static_cast<size_t>(point));
    }
    return out;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  char exp_text[16];
  std::snprintf(exp_text, sizeof(exp_text), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += exp_text;
  return out;
}

std::string python_string_repr(const std::string& value) {
  const bool has_single = value.find('\'') != std::string::npos;
  const bool has_double = value.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

void append_python_str(const Node& value, std::string& out) {
  switch (value.type()) {
    case NodeType::kNull:
      out += "None";
      break;
    case NodeType::kBool:
      out += value.as_bool() ? "True" : "False";
      break;
    case NodeType::kInt:
      out += value.int_text();
      break;
    case NodeType::kFloat:
      out += python_float_repr(value.as_float());
      break;
    case NodeType::kString:
      out += value.as_string();
      break;
    case NodeType::kMissing:
      out += "\?\?\?";
      break;
    case NodeType::kList: {
      out += '[';
      bool first = true;
      for (const Node& item : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_repr(item, out);
      }
      out += ']';
      break;
    }
    case NodeType::kMap: {
      out += '{';
      bool first = true;
      for (const Node::Entry& entry : value.entries()) {
        if (!first) out += ", ";
        first = false;
        append_key_repr(entry, out);
        out += ": ";
        append_repr(entry.value, out);
      }
      out += '}';
      break;
    }
  }
}

std::string python_str(const Node& value) {
  std::string out;
  append_python_str(value, out);
  return out;
}

}  // namespace trainer::config
