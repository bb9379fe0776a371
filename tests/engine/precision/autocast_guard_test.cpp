// AutocastGuard on the CPU: matrix products run in bfloat16 inside and float32 outside, guards
// nest, the state before the guard comes back, and the state belongs to the thread that set it.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/precision/autocast_guard.h"

#include <stdexcept>
#include <thread>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include "trainer/engine/torch_compat.h"

namespace {

using trainer::engine::AutocastGuard;
namespace compat = trainer::engine::compat;

at::ScalarType matmul_dtype() {
  const at::Tensor a = at::ones({4, 8});
  const at::Tensor b = at::ones({8, 2});
  return at::mm(a, b).scalar_type();
}

// The current nesting depth, read without changing it.
int nesting_depth() {
  const int depth = compat::autocast_increment_nesting() - 1;
  compat::autocast_decrement_nesting();
  return depth;
}

}  // namespace

CATCH_TEST_CASE("inside a CPU bfloat16 guard a matmul comes out bfloat16, outside float32") {
  CATCH_REQUIRE_FALSE(compat::autocast_enabled(at::kCPU));
  CATCH_CHECK(matmul_dtype() == at::kFloat);
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16);
    CATCH_CHECK(compat::autocast_enabled(at::kCPU));
    CATCH_CHECK(matmul_dtype() == at::kBFloat16);
    // Autocast casts its inputs, never the tensors themselves.
    const at::Tensor a = at::ones({4, 8});
    CATCH_CHECK(a.scalar_type() == at::kFloat);
  }
  CATCH_CHECK_FALSE(compat::autocast_enabled(at::kCPU));
  CATCH_CHECK(matmul_dtype() == at::kFloat);
  CATCH_CHECK(nesting_depth() == 0);
}

CATCH_TEST_CASE("guards nest: the inner one's exit leaves the outer one in force") {
  {
    AutocastGuard outer(at::kCPU, at::kBFloat16);
    CATCH_CHECK(nesting_depth() == 1);
    {
      AutocastGuard inner(at::kCPU, at::kBFloat16);
      CATCH_CHECK(nesting_depth() == 2);
      CATCH_CHECK(matmul_dtype() == at::kBFloat16);
    }
    CATCH_CHECK(nesting_depth() == 1);
    CATCH_CHECK(compat::autocast_enabled(at::kCPU));
    CATCH_CHECK(matmul_dtype() == at::kBFloat16);
    {
      AutocastGuard off(at::kCPU, at::kBFloat16, /*enabled=*/false);  // changes nothing
      CATCH_CHECK(nesting_depth() == 1);
      CATCH_CHECK(matmul_dtype() == at::kBFloat16);
    }
  }
  CATCH_CHECK(nesting_depth() == 0);
  CATCH_CHECK(matmul_dtype() == at::kFloat);
}

CATCH_TEST_CASE("the state before the guard is restored, including autocast switched on by hand and the cache flag") {
  compat::set_autocast_enabled(at::kCPU, true);
  compat::set_autocast_cache_enabled(false);
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16, true, /*cache_enabled=*/true);
    CATCH_CHECK(compat::autocast_cache_enabled());
  }
  CATCH_CHECK(compat::autocast_enabled(at::kCPU));
  CATCH_CHECK_FALSE(compat::autocast_cache_enabled());
  CATCH_CHECK(compat::autocast_dtype(at::kCPU) == at::kBFloat16);
  compat::set_autocast_enabled(at::kCPU, false);
  compat::set_autocast_cache_enabled(true);
}

CATCH_TEST_CASE("autocast state is per thread: another thread computes in float32") {
  AutocastGuard guard(at::kCPU, at::kBFloat16);
  at::ScalarType other = at::kBFloat16;
  std::thread worker([&] { other = matmul_dtype(); });
  worker.join();
  CATCH_CHECK(other == at::kFloat);
  CATCH_CHECK(matmul_dtype() == at::kBFloat16);
}

CATCH_TEST_CASE("float16 on the CPU: available from LibTorch 2.0, refused before (state untouched)") {
  if (compat::kCpuAutocastSupportsHalf) {
    {
      AutocastGuard guard(at::kCPU, at::kHalf);
      CATCH_CHECK(matmul_dtype() == at::kHalf);
    }
    CATCH_CHECK(matmul_dtype() == at::kFloat);
    CATCH_CHECK(compat::autocast_dtype(at::kCPU) == at::kBFloat16);  // the default, restored
  } else {
    CATCH_CHECK_THROWS_AS(AutocastGuard(at::kCPU, at::kHalf), std::invalid_argument);
    CATCH_CHECK_FALSE(compat::autocast_enabled(at::kCPU));
    CATCH_CHECK(nesting_depth() == 0);
  }
  CATCH_CHECK_THROWS_AS(AutocastGuard(at::kCPU, at::kFloat), std::invalid_argument);
}

CATCH_TEST_CASE("the guard's cast cache is dropped when the outermost guard closes") {
  // A leaf weight that requires grad is cast once per autocast region and cached; after the region
  // the cache is cleared, so a changed weight is cast afresh (the optimizer changes it every step).
  at::Tensor weight = at::ones({8, 2}).requires_grad_(true);
  const at::Tensor input = at::ones({4, 8});
  at::Tensor first, second;
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16);
    first = at::mm(input, weight);
  }
  {
    at::NoGradGuard no_grad;
    weight.mul_(2.0);
  }
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16);
    second = at::mm(input, weight);
  }
  CATCH_CHECK(first.scalar_type() == at::kBFloat16);
  CATCH_CHECK(at::equal(second, first * 2));
}
