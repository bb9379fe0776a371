#include "trainer/engine/precision/cpu_bfloat16.h"

#include <fstream>
#include <iterator>
#include <sstream>

namespace trainer::engine {

namespace {

// "key<tabs>: value" -> value, for the first line whose key is `key`.
std::optional<std::string> first_value(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);  // npos + 1 == 0: all blank
    if (name != key) continue;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return std::nullopt;
}

bool has_word(const std::string& words, const std::string& word) {
  std::istringstream in(words);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

std::optional<CpuBfloat16> cpu_bfloat16_from_cpuinfo(const std::string& cpuinfo) {
  CpuBfloat16 cpu;
  cpu.model = first_value(cpuinfo, "model name").value_or("");
  if (const auto flags = first_value(cpuinfo, "flags")) {
    cpu.hardware = has_word(*flags, "avx512_bf16") || has_word(*flags, "amx_bf16");
    return cpu;
  }
  if (const auto features = first_value(cpuinfo, "Features")) {
    cpu.hardware = has_word(*features, "bf16");
    return cpu;
  }
  return std::nullopt;
}

std::optional<CpuBfloat16> this_cpu_bfloat16() {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cpu_bfloat16_from_cpuinfo(text);
}

}  // namespace trainer::engine
