// Internal to the config module: the one UTF-8 encoder. The YAML loader writes the code points of
// escapes (`\u00e9`, `\N`) and the YAML writer the line breaks it folds with it.
#pragma once

#include <string>

namespace trainer::config::detail {

// Appends the UTF-8 bytes of `code_point` (1 to 4 bytes; a surrogate is encoded as is, as
// Python's surrogatepass would).
void append_utf8(std::string& out, char32_t code_point);

}  // namespace trainer::config::detail
