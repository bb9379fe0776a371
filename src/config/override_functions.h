// Internal to the override grammar: Hydra's grammar functions (hydra/_internal/grammar/
// grammar_functions.py) on the arguments the parser read. The casts int(), float(), str() and
// bool() convert values, the items of lists and dicts, and sweeps; choice(), range(), interval(),
// tag(), sort(), shuffle() and glob() build or reorder sweeps (sort() and shuffle() also lists).
// Their checks and messages follow Hydra's, which are mostly Python's own.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "override_value.h"

namespace trainer::config::override_detail {

// Where Hydra's function raises: what is wrong, and a fix when there is a better one than the
// list of functions and their arguments.
struct FunctionFailure {
  std::string problem;
  std::string fix;
};

using KeywordArguments = std::vector<std::pair<std::string, Value>>;

// Calls the function `name` on its positional and keyword arguments (taken over). Quoted strings
// passed directly as arguments are unquoted first, as Hydra does (not those inside lists). nullopt
// when there is no function of that name; throws FunctionFailure where Hydra's function raises.
std::optional<Value> call_function(const std::string& name, std::vector<Value>& args, KeywordArguments& kwargs);

}  // namespace trainer::config::override_detail
