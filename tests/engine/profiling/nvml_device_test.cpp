// NvmlDevice: where NVML cannot serve (a library that is not there, a library without NVML's
// functions, a PCI bus id no GPU has) no device and no error; and, through a stand-in library
// with NVML's C interface (tests/engine/profiling/fake_nvml.cpp: no NVIDIA driver here), the GPU found by
// PCI bus id or by its CUDA_VISIBLE_DEVICES position, the readings in their units, a reading the
// board lacks left out, and NVML shut down when the device goes.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/profiling/nvml_device.h"

#include <dlfcn.h>

#include <cstdlib>

#include <catch2/catch.hpp>

using trainer::engine::NvmlDevice;

namespace {

// Sets (or with nullptr unsets) an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had = false;
  ScopedEnv(const char* key, const char* value) : name(key) {
    if (const char* previous = std::getenv(key)) {
      had = true;
      old = previous;
    }
    if (value) {
      ::setenv(key, value, 1);
    } else {
      ::unsetenv(key);
    }
  }
  ~ScopedEnv() {
    if (had) {
      ::setenv(name.c_str(), old.c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
};

// NVML sessions the stand-in has open. The test holds the library loaded for good, so that a
// device's dlclose cannot unload it and reset its count.
int open_sessions() {
  static void* const library = ::dlopen(TRAINER_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  static const auto count = reinterpret_cast<int (*)()>(::dlsym(library, "fake_nvml_open_sessions"));
  return count();
}

}  // namespace

CATCH_TEST_CASE("no NVML library: no device, no exception") {
  CATCH_CHECK(NvmlDevice::open("0000:3B:00.0", 0, "/nonexistent/libnvidia-ml.so.1") == nullptr);
}

CATCH_TEST_CASE("a library without NVML's functions: no device, no exception") {
  CATCH_REQUIRE(::dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL) != nullptr);  // it loads, but is not NVML
  CATCH_CHECK(NvmlDevice::open("0000:3B:00.0", 0, "libm.so.6") == nullptr);
}

CATCH_TEST_CASE("the real NVML (where a driver installed it) has no GPU at a bus id nothing uses") {
  const bool driver = ::dlopen(NvmlDevice::kLibrary, RTLD_NOW | RTLD_LOCAL) != nullptr;
  CATCH_INFO((driver ? "NVML present" : "NVML absent (no NVIDIA driver)"));
  // Domain ffff holds no GPU; cuda_index -1 turns off the fallback by index.
  CATCH_CHECK(NvmlDevice::open("FFFF:FF:1F.7", -1) == nullptr);
}

CATCH_TEST_CASE("the GPU is found by its PCI bus id, whatever CUDA_VISIBLE_DEVICES says") {
  ScopedEnv visible("CUDA_VISIBLE_DEVICES", "1");  // would point at the other GPU by position
  CATCH_REQUIRE(open_sessions() == 0);
  {
    auto gpu = NvmlDevice::open("0000:3B:00.0", 0, TRAINER_FAKE_NVML);
    CATCH_REQUIRE(gpu != nullptr);
    CATCH_CHECK(gpu->name() == "Fake GPU A");
    CATCH_CHECK(gpu->found_by() == "PCI bus id 0000:3B:00.0");
    const auto reading = gpu->read();
    CATCH_CHECK(reading.gpu_percent == 37.0);
    CATCH_CHECK(reading.memory_percent == 12.0);
    CATCH_CHECK(reading.memory_used_mb == 1536.0);    // MiB
    CATCH_CHECK(reading.memory_total_mb == 81920.0);  // 80 GiB
    CATCH_CHECK(reading.temperature_c == 41.0);
    CATCH_REQUIRE(reading.power_w.has_value());
    CATCH_CHECK(*reading.power_w == Approx(123.456));  // from milliwatts
    CATCH_CHECK(open_sessions() == 1);
  }
  CATCH_CHECK(open_sessions() == 0);  // nvmlShutdown when the device goes
}

CATCH_TEST_CASE("without a PCI match: the position in CUDA_VISIBLE_DEVICES, or the index itself") {
  CATCH_REQUIRE(open_sessions() == 0);
  {
    ScopedEnv visible("CUDA_VISIBLE_DEVICES", "1,0");
    auto gpu = NvmlDevice::open("", 0, TRAINER_FAKE_NVML);  // CUDA device 0 is the machine's GPU 1
    CATCH_REQUIRE(gpu != nullptr);
    CATCH_CHECK(gpu->name() == "Fake GPU B");
    CATCH_CHECK(gpu->found_by().find("NVML index 1 (CUDA device 0") == 0);
    CATCH_CHECK_FALSE(gpu->read().power_w.has_value());  // this board reports no power
    CATCH_CHECK(gpu->read().temperature_c == 67.0);
  }
  {
    ScopedEnv visible("CUDA_VISIBLE_DEVICES", nullptr);
    auto gpu = NvmlDevice::open("0000:99:00.0", 1, TRAINER_FAKE_NVML);  // no GPU at that bus id
    CATCH_REQUIRE(gpu != nullptr);
    CATCH_CHECK(gpu->name() == "Fake GPU B");
  }
  {
    ScopedEnv visible("CUDA_VISIBLE_DEVICES", "GPU-8f3c2a10");  // UUIDs: no position to use
    CATCH_CHECK(NvmlDevice::open("0000:99:00.0", 0, TRAINER_FAKE_NVML) == nullptr);
  }
  {
    ScopedEnv visible("CUDA_VISIBLE_DEVICES", "0");
    CATCH_CHECK(NvmlDevice::open("0000:99:00.0", 1, TRAINER_FAKE_NVML) == nullptr);  // beyond the list
  }
  CATCH_CHECK(open_sessions() == 0);  // also after the failed lookups
}
