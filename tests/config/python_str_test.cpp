// Python's repr() and str() of config values, as OmegaConf puts them into strings. Expected values
// are what python3 prints for the same values (repr(1e-05), str([1, 'a', None]), ...).
#include "trainer/config/python_str.h"

#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/node.h"
#include "trainer/config/yaml.h"

using trainer::config::Node;
using trainer::config::python_float_repr;
using trainer::config::python_str;
using trainer::config::python_string_repr;

namespace {

// str() of the value under `v` in a one-key YAML document.
std::string str_of(const std::string& yaml_value) {
  const trainer::config::YamlDocument document = trainer::config::load_yaml_string("v: " + yaml_value + "\n", "t.yaml");
  const Node* value = document.root.find("v");
  REQUIRE(value != nullptr);
  return python_str(*value);
}

}  // namespace

TEST_CASE("python_float_repr is repr(float): shortest digits, exponent below 1e-4 and from 1e16") {
  CHECK(python_float_repr(1e-05) == "1e-05");
  CHECK(python_float_repr(1.5e-5) == "1.5e-05");
  CHECK(python_float_repr(-2.5e-7) == "-2.5e-07");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(0.5) == "0.5");
  CHECK(python_float_repr(100.0) == "100.0");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(0.1 + 0.2) == "0.30000000000000004");
  CHECK(python_float_repr(123456789012345.6) == "123456789012345.6");
  CHECK(python_float_repr(1e15) == "1000000000000000.0");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(12345678901234567.0) == "1.2345678901234568e+16");
  CHECK(python_float_repr(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
  CHECK(python_float_repr(std::numeric_limits<double>::denorm_min()) == "5e-324");
  CHECK(python_float_repr(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(python_float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("python_string_repr quotes as Python does") {
  CHECK(python_string_repr("plain") == "'plain'");
  CHECK(python_string_repr("it's") == "\"it's\"");
  CHECK(python_string_repr("say \"hi\"") == "'say \"hi\"'");
  CHECK(python_string_repr("it's \"x\"") == "'it\\'s \"x\"'");
  CHECK(python_string_repr("a\tb\n\x01\x7f\\") == "'a\\tb\\n\\x01\\x7f\\\\'");
}

TEST_CASE("python_str is str(): scalars bare, strings inside containers quoted") {
  CHECK(str_of("null") == "None");
  CHECK(str_of("true") == "True");
  CHECK(str_of("3") == "3");
  CHECK(str_of("1.0e-3") == "0.001");
  CHECK(str_of("text") == "text");
  CHECK(str_of("'?\?\?'") == "?\?\?");
  CHECK(str_of("[1, a, null, true, 1.0e-05, {k: 1, 2: v}, \"it's\", '?\?\?']") ==
        "[1, 'a', None, True, 1e-05, {'k': 1, 2: 'v'}, \"it's\", '?\?\?']");
  CHECK(str_of("{true: 1, 1.5: []}") == "{True: 1, 1.5: []}");
  CHECK(str_of("123456789012345678901234567890") == "123456789012345678901234567890");  // Python's ints are unbounded
}
