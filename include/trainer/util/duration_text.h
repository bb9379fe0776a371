// How trainer prints a duration to people: "12.3 s" under a minute, "4m05s" under an hour,
// "2h07m" above (the sweep launchers' progress lines, ETAs and totals).
#pragma once

#include <string>

namespace trainer {

std::string duration_text(double seconds);

}  // namespace trainer
