#include "trainer/util/duration_text.h"

#include <cstdio>

namespace trainer {

std::string duration_text(double seconds) {
  char text[48];
  if (seconds < 60) {
    std::snprintf(text, sizeof(text), "%.1f s", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof(text), "%dm%02ds", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(text, sizeof(text), "%dh%02dm", static_cast<int>(seconds) / 3600,
                  (static_cast<int>(seconds) % 3600) / 60);
  }
  return text;
}

}  // namespace trainer
