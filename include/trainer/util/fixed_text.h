// A number with a fixed count of decimals for log lines and messages ("12.35" for 12.345, 2).
#pragma once

#include <string>

namespace trainer {

std::string fixed_text(double value, int digits);

}  // namespace trainer
