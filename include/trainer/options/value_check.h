// Whether a config value fits its declaration (option.h): the type, the range or the choices.
// One function, used by the schema check before any job runs and by the engine's reader
// (option_reader.h) for values that only resolve in the job, so both say the same thing.
#pragma once

#include <optional>
#include <string>

#include "trainer/config/node.h"
#include "trainer/options/option.h"

namespace trainer::options {

// "" when `value` (resolved, not an interpolation) is valid for `option`; otherwise what is
// wrong, e.g. "-5 is out of range: epochs to train (...), at least 0 or -1".
std::string check_value(const Option& option, const config::Node& value);

// What the option accepts, for a message's fix: "an int >= 1", "one of epoch, step or null".
std::string accepted(const Option& option);

// "DD:HH:MM:SS" (all four fields, as Lightning's Timer takes it) or a number, in seconds; nullopt
// when the text is neither ("0:02" is neither).
std::optional<double> parse_duration(const std::string& text);

// The text of a choice's value (an int reads as its digits: precision=16 is "16").
std::optional<std::string> choice_text(const config::Node& value);

}  // namespace trainer::options
