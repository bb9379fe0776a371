#include "test_process.h"

#include <cstdio>
#include <cstdlib>

namespace trainer::testing {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string command_output(const std::string& command, int& status) {
  status = -1;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  status = ::pclose(pipe);
  return output;
}

std::string test_python(const char* configured) {
  if (const char* python = std::getenv("TRAINER_TEST_PYTHON")) return python;
  return configured;
}

bool python_has(const std::string& python, const std::string& module) {
  if (python.empty()) return false;
  int status = -1;
  command_output(shell_quote(python) + " -c " + shell_quote("import " + module) + " >/dev/null 2>&1", status);
  return status == 0;
}

}  // namespace trainer::testing
