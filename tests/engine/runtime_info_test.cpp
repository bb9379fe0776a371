// Engine tests use Catch's prefixed macros: Debian's LibTorch pulls in glog, whose CHECK macro
// would otherwise silently replace Catch's CHECK.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/runtime_info.h"

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "trainer/engine/engine_c_abi.h"
#include "trainer/engine/torch_compat.h"

CATCH_TEST_CASE("runtime_info reports the LibTorch the engine was built against") {
  auto info = trainer::engine::runtime_info();
  CATCH_CHECK(info.torch_version == TORCH_VERSION);
  CATCH_CHECK((info.torch_source == "debian" || info.torch_source == "wheel"));
  CATCH_CHECK(info.intra_op_threads >= 1);
  std::string text = trainer_engine_describe();
  CATCH_CHECK(text.rfind("LibTorch " + info.torch_version, 0) == 0);
}

CATCH_TEST_CASE("the compatibility layer toggles CPU autocast on both LibTorch versions") {
  using trainer::engine::compat::autocast_enabled;
  using trainer::engine::compat::set_autocast_dtype;
  using trainer::engine::compat::set_autocast_enabled;
  CATCH_REQUIRE_FALSE(autocast_enabled(c10::DeviceType::CPU));
  set_autocast_dtype(c10::DeviceType::CPU, at::kBFloat16);
  set_autocast_enabled(c10::DeviceType::CPU, true);
  at::autocast::increment_nesting();
  auto a = torch::ones({4, 4});
  CATCH_CHECK(torch::mm(a, a).scalar_type() == at::kBFloat16);
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(c10::DeviceType::CPU, false);
  CATCH_CHECK_FALSE(autocast_enabled(c10::DeviceType::CPU));
  CATCH_CHECK(torch::mm(a, a).scalar_type() == at::kFloat);
}
