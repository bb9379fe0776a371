// Python's semantics of config values, where Hydra and OmegaConf inherit them from Python: int()
// and float() of a text, the exact comparison of numbers across bool, int (any size) and float,
// and `==` between values. The override grammar's casts and sort(), the YAML float constructor
// and the composer's delete check all go through here. (str() and repr() are in python_str.h.)
#pragma once

#include <string_view>

#include "trainer/config/node.h"

namespace trainer::config {

// Whether Python's int() (base 10) and float() accept an ASCII text that has no surrounding
// whitespace: the grammar alone, without converting. `_` only between digits; an optional sign;
// float() also takes inf, infinity and nan in any case.
bool python_int_syntax(std::string_view text);
bool python_float_syntax(std::string_view text);

// Python's int(text) in base 10: surrounding whitespace, an optional sign, `_` only between
// digits, any size (an int node, big beyond int64). False where Python raises ValueError.
bool python_int_from_text(std::string_view text, Node& value);

// Python's float(text): surrounding whitespace, an optional sign, decimal and exponent forms with
// `_` only between digits, inf/infinity/nan in any case. A value beyond the double range gives
// +-inf, one below it +-0.0, as Python's float() does. False where Python raises ValueError.
bool python_float_from_text(std::string_view text, double& value);

// True for bool, int and float nodes: the numbers Python compares with each other.
bool is_python_number(const Node& value);

// Python's exact comparison of two numbers (bools count as 0 and 1, ints have any size, an int
// and a float compare by their exact values): -1, 0 or 1, and 2 when a NaN leaves them unordered.
int python_compare_numbers(const Node& a, const Node& b);

// Python's `==` between config values: 1 == 1.0 == True, lists item by item, dicts key by key in
// any order, everything else by type and value.
bool python_equal(const Node& a, const Node& b);

}  // namespace trainer::config
