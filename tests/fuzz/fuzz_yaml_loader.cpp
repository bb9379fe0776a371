// libFuzzer target for the YAML loader and writer: any input either loads or throws
// trainer::Error; whatever loads must survive to_yaml and load back to an equal Node (the writer
// quotes every string a YAML 1.1 reader would retype). Anything else aborts: that is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "trainer/config/node.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& yaml, const char* detail) {
  std::fprintf(stderr, "fuzz_yaml_loader: %s\n%s\n--- to_yaml output ---\n%s\n--- end ---\n", what, detail,
               yaml.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trainer::config::YamlDocument first;
  try {
    first = trainer::config::load_yaml_string(text, "fuzz.yaml");
  } catch (const trainer::Error&) {
    return 0;  // invalid YAML, or a top level that is not a mapping: the expected rejection
  } catch (const std::exception& e) {
    fail("load_yaml_string threw a non-trainer::Error exception", "", e.what());
  } catch (...) {
    fail("load_yaml_string threw a non-std::exception", "", "");
  }

  std::string written;
  try {
    written = trainer::config::to_yaml(first.root);
  } catch (const std::exception& e) {
    fail("to_yaml threw on a tree the loader produced", "", e.what());
  }

  trainer::config::YamlDocument second;
  try {
    second = trainer::config::load_yaml_string(written, "roundtrip.yaml");
  } catch (const std::exception& e) {
    fail("to_yaml wrote YAML that does not load back", written, e.what());
  }
  if (second.root != first.root) {
    fail("round trip changed the tree: load(to_yaml(load(x))) != load(x)", written, "");
  }
  return 0;
}
