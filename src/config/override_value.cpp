// The override grammar's parsed values: Python type names, == and <, rendering back to override
// text and conversion to config nodes (see override_value.h).
#include "override_value.h"

#include <algorithm>
#include <cstring>

#include "trainer/config/python_str.h"
#include "trainer/config/python_value.h"

namespace trainer::config::override_detail {
namespace {

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    if (std::strchr("\\()[]{}:=, \t", c) && c != '\0') out += '\\';
    out += c;
  }
}

std::string dict_key_text(const Value& key) {
  switch (key.kind) {
    case Value::kNull:
      return "null";
    case Value::kBool:
      return key.b ? "true" : "false";
    case Value::kInt:
      return key.int_text();
    case Value::kFloat:
      return python_float_repr(key.f);
    default:
      return key.s;
  }
}

NodeType dict_key_type(const Value& key) {
  switch (key.kind) {
    case Value::kNull:
      return NodeType::kNull;
    case Value::kBool:
      return NodeType::kBool;
    case Value::kInt:
      return NodeType::kInt;
    case Value::kFloat:
      return NodeType::kFloat;
    default:
      return NodeType::kString;
  }
}

}  // namespace

const char* python_type_name(const Value& v) {
  switch (v.kind) {
    case Value::kNull:
      return "NoneType";
    case Value::kBool:
      return "bool";
    case Value::kInt:
      return "int";
    case Value::kFloat:
      return "float";
    case Value::kStr:
      return "str";
    case Value::kQuoted:
      return "QuotedString";
    case Value::kList:
      return "list";
    case Value::kDict:
      return "dict";
    case Value::kChoice:
      return "ChoiceSweep";
    case Value::kRange:
      return "RangeSweep";
    case Value::kInterval:
      return "IntervalSweep";
    case Value::kGlob:
      return "Glob";
  }
  return "?";
}

int compare_numbers(const Value& a, const Value& b) { return python_compare_numbers(to_node(a), to_node(b)); }

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::kNull:
      return true;
    case Value::kStr:
      return a.s == b.s;
    case Value::kQuoted:
      return a.s == b.s && a.quote == b.quote;
    case Value::kList:
    case Value::kDict:
      if (a.items.size() != b.items.size()) return false;
      for (size_t k = 0; k < a.items.size(); ++k) {
        if (!values_equal(a.items[k], b.items[k])) return false;
      }
      return true;
    default:
      return false;
  }
}

bool value_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == -1;
  if (a.kind == Value::kStr && b.kind == Value::kStr) return a.s < b.s;
  if (a.kind == Value::kList && b.kind == Value::kList) {
    size_t n = std::min(a.items.size(), b.items.size());
    for (size_t k = 0; k < n; ++k) {
      if (!values_equal(a.items[k], b.items[k])) return value_less(a.items[k], b.items[k]);
    }
    return a.items.size() < b.items.size();
  }
  throw NotOrderable{std::string("'<' not supported between instances of '") + python_type_name(a) + "' and '" +
                     python_type_name(b) + "'"};
}

void append_with_quotes(std::string& out, const std::string& text, char qc) {
  out += qc;
  size_t k = 0;
  while (k < text.size()) {
    if (text[k] == '\\') {
      size_t run = k;
      while (run < text.size() && text[run] == '\\') ++run;
      size_t n = run - k;
      if (run == text.size() || text[run] == qc) {
        out.append(2 * n, '\\');
      } else {
        out.append(n, '\\');
      }
      k = run;
      continue;
    }
    if (text[k] == qc) out += '\\';
    out += text[k];
    ++k;
  }
  out += qc;
}

void render(std::string& out, const Value& v) {
  switch (v.kind) {
    case Value::kNull:
      out += "null";
      return;
    case Value::kBool:
      out += v.b ? "True" : "False";
      return;
    case Value::kInt:
      out += v.int_text();
      return;
    case Value::kFloat:
      out += python_float_repr(v.f);
      return;
    case Value::kStr:
      append_escaped(out, v.s);
      return;
    case Value::kQuoted:
      append_with_quotes(out, v.s, v.quote);
      return;
    case Value::kList:
      out += '[';
      for (size_t k = 0; k < v.items.size(); ++k) {
        if (k) out += ',';
        render(out, v.items[k]);
      }
      out += ']';
      return;
    case Value::kDict:
      out += '{';
      for (size_t k = 0; k + 1 < v.items.size(); k += 2) {
        if (k) out += ',';
        render(out, v.items[k]);
        out += ':';
        render(out, v.items[k + 1]);
      }
      out += '}';
      return;
    default:
      return;  // sweeps are never rendered as one value
  }
}

std::string render(const Value& v) {
  std::string out;
  render(out, v);
  return out;
}

Node to_node(const Value& v) {
  switch (v.kind) {
    case Value::kNull:
      return Node();
    case Value::kBool:
      return Node::boolean(v.b);
    case Value::kInt:
      return v.s.empty() ? Node::integer(v.i) : Node::integer_text(v.s);
    case Value::kFloat:
      return Node::floating(v.f);
    case Value::kStr:
    case Value::kQuoted:
      return Node::string(v.s);
    case Value::kList: {
      Node list = Node::list();
      list.items().reserve(v.items.size());
      for (const Value& item : v.items) list.push_back(to_node(item));
      return list;
    }
    case Value::kDict: {
      Node map = Node::map();
      for (size_t k = 0; k + 1 < v.items.size(); k += 2) {
        std::string key = dict_key_text(v.items[k]);
        map.set(key, to_node(v.items[k + 1]));
        for (Node::Entry& entry : map.entries()) {
          if (entry.key == key) entry.key_type = dict_key_type(v.items[k]);
        }
      }
      return map;
    }
    default:
      return Node();
  }
}

}  // namespace trainer::config::override_detail
