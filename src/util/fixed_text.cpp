#include "trainer/util/fixed_text.h"

#include <cstdio>

namespace trainer {

std::string fixed_text(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace trainer
