// Python's str() and repr() of config values: OmegaConf converts interpolated values with str()
// when it concatenates them into a string ("lr_${lr}" -> "lr_1e-05", "${flag}" -> "True").
#pragma once

#include <string>

#include "trainer/config/node.h"

namespace trainer::config {

// repr(float): shortest round-trip digits, exponent form below 1e-4 and from 1e16 ("1e-05").
std::string python_float_repr(double value);
// repr(str): quoted the way Python quotes it ('a', "it's").
std::string python_string_repr(const std::string& value);
// str(value): None, True, 3, 0.001, text as is, [1, 'a'], {'k': 1}.
std::string python_str(const Node& value);
void append_python_str(const Node& value, std::string& out);

}  // namespace trainer::config
