// Reading bfloat16 hardware from /proc/cpuinfo: x86's flags (AVX512-BF16, AMX-BF16), AArch64's
// Features (BF16), the model name, and text that says neither.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/precision/cpu_bfloat16.h"

#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "skip_test.h"

namespace {

using trainer::engine::cpu_bfloat16_from_cpuinfo;

const std::string kAvx2 =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"
    "flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw\n\nprocessor\t: 1\nflags\t\t: avx512_bf16\n";
const std::string kSapphireRapids =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n";
const std::string kAmxOnly = "model name\t: Some Xeon\nflags\t\t: avx2 amx_bf16 amx_tile\n";
const std::string kNeoverse = "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd sve bf16 i8mm\n";
const std::string kOldArm = "processor\t: 0\nFeatures\t: fp asimd evtstrm crc32\n";

}  // namespace

CATCH_TEST_CASE("an x86 CPU's flags say whether it has bfloat16 arithmetic", "[precision]") {
  const auto amd = cpu_bfloat16_from_cpuinfo(kAvx2);
  CATCH_REQUIRE(amd.has_value());
  CATCH_CHECK_FALSE(amd->hardware);  // the first processor's flags only; avx512f alone is not enough
  CATCH_CHECK(amd->model == "AMD EPYC 7B13");

  const auto xeon = cpu_bfloat16_from_cpuinfo(kSapphireRapids);
  CATCH_REQUIRE(xeon.has_value());
  CATCH_CHECK(xeon->hardware);
  CATCH_CHECK(xeon->model == "Intel(R) Xeon(R) Platinum 8480+");

  const auto amx = cpu_bfloat16_from_cpuinfo(kAmxOnly);
  CATCH_REQUIRE(amx.has_value());
  CATCH_CHECK(amx->hardware);
}

CATCH_TEST_CASE("an AArch64 CPU's Features say whether it has BF16", "[precision]") {
  const auto neoverse = cpu_bfloat16_from_cpuinfo(kNeoverse);
  CATCH_REQUIRE(neoverse.has_value());
  CATCH_CHECK(neoverse->hardware);
  CATCH_CHECK(neoverse->model.empty());
  const auto old_arm = cpu_bfloat16_from_cpuinfo(kOldArm);
  CATCH_REQUIRE(old_arm.has_value());
  CATCH_CHECK_FALSE(old_arm->hardware);
}

CATCH_TEST_CASE("text with neither flags nor Features says nothing", "[precision]") {
  CATCH_CHECK_FALSE(cpu_bfloat16_from_cpuinfo("").has_value());
  CATCH_CHECK_FALSE(cpu_bfloat16_from_cpuinfo("model name\t: X\nflagsx\t: avx512_bf16\n").has_value());
}

CATCH_TEST_CASE("this machine's answer agrees with its /proc/cpuinfo", "[precision]") {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return trainer::testing::skip_test("no /proc/cpuinfo here", trainer::testing::Skip::expected);
  std::string line;
  bool flags_line = false;
  bool bf16 = false;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      flags_line = true;
      bf16 = line.find(" avx512_bf16") != std::string::npos || line.find(" amx_bf16") != std::string::npos ||
             line.find(" bf16") != std::string::npos;
      break;
    }
  }
  const auto cpu = trainer::engine::this_cpu_bfloat16();
  CATCH_REQUIRE(cpu.has_value() == flags_line);
  if (cpu) CATCH_CHECK(cpu->hardware == bf16);
}
