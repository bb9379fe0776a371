// to_float_normalized against the textbook formula, and augment: every output image is a
// window of the zero-padded input (mirrored or not), offsets vary, and a seed fixes the result.
#include "trainer/data/batch_transform.h"

#include <set>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#define CATCH_CONFIG_PREFIX_ALL
#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using trainer::data::augment;
using trainer::data::to_float_normalized;

namespace {

at::Generator generator(uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

// Distinct values per pixel so a window identifies its offset: [n, c, h, w] uint8.
at::Tensor numbered_batch(int64_t n, int64_t c, int64_t h, int64_t w) {
  return (at::arange(n * c * h * w, at::kLong) % 251 + 1).to(at::kByte).view({n, c, h, w});
}

}  // namespace

CATCH_TEST_CASE("to_float_normalized computes (x/255 - mean)/std in float") {
  const at::Tensor x = at::randint(0, 256, {4, 1, 5, 5}, generator(1), at::kByte);
  const at::Tensor y = to_float_normalized(x, 0.2860, 0.3530);
  CATCH_CHECK(y.scalar_type() == at::kFloat);
  CATCH_CHECK(y.sizes() == x.sizes());
  const at::Tensor expected = (x.to(at::kDouble) / 255.0 - 0.2860) / 0.3530;
  CATCH_CHECK(at::allclose(y.to(at::kDouble), expected, 1e-5, 1e-5));
  CATCH_CHECK(to_float_normalized(at::full({1}, 255, at::kByte), 0.5, 0.25).item<double>() == Approx(2.0));
  CATCH_CHECK_THROWS_AS(to_float_normalized(x, 0.0, 0.0), trainer::Error);
}

CATCH_TEST_CASE("augment without crop or flip returns the batch itself") {
  const at::Tensor x = numbered_batch(2, 1, 4, 4);
  at::Generator gen = generator(0);
  CATCH_CHECK(augment(x, 0, false, gen).is_same(x));
}

CATCH_TEST_CASE("augment flips about half the images left-right") {
  const at::Tensor x = numbered_batch(200, 2, 3, 5);
  at::Generator gen = generator(5);
  const at::Tensor y = augment(x, 0, true, gen);
  const at::Tensor same = (y == x).flatten(1).all(1);
  const at::Tensor mirrored = (y == x.flip({3})).flatten(1).all(1);
  CATCH_CHECK((same | mirrored).all().item<bool>());
  const int64_t flipped = mirrored.sum().item<int64_t>();
  CATCH_CHECK(flipped > 70);
  CATCH_CHECK(flipped < 130);
}

CATCH_TEST_CASE("augment crops a window of the zero-padded image") {
  const int64_t n = 64, c = 3, h = 6, w = 7, p = 2;
  const at::Tensor x = numbered_batch(n, c, h, w);
  at::Generator gen = generator(9);
  const at::Tensor y = augment(x, static_cast<int>(p), true, gen);
  CATCH_REQUIRE(y.sizes() == x.sizes());
  CATCH_CHECK(y.scalar_type() == at::kByte);
  const at::Tensor padded = at::constant_pad_nd(x, {p, p, p, p}, 0);
  std::set<std::pair<int64_t, int64_t>> offsets;
  int matched = 0;
  // Reference check, one image at a time (test code; the transform itself is loop-free).
  for (int64_t i = 0; i < n; ++i) {
    bool found = false;
    for (int64_t top = 0; top <= 2 * p && !found; ++top) {
      for (int64_t left = 0; left <= 2 * p && !found; ++left) {
        const at::Tensor window = padded[i].narrow(1, top, h).narrow(2, left, w);
        if (at::equal(y[i], window) || at::equal(y[i], window.flip({2}))) {
          found = true;
          offsets.insert({top, left});
        }
      }
    }
    matched += found ? 1 : 0;
  }
  CATCH_CHECK(matched == n);
  CATCH_CHECK(offsets.size() > 10);  // of 25 possible offsets, many are used
  // Padding is zero: some pixels were shifted in from outside the image.
  CATCH_CHECK((y == 0).any().item<bool>());
  CATCH_CHECK(!(x == 0).any().item<bool>());
}

CATCH_TEST_CASE("augment depends only on the generator's seed") {
  const at::Tensor x = numbered_batch(32, 1, 28, 28);
  at::Generator a = generator(123), b = generator(123), c = generator(124);
  const at::Tensor ya = augment(x, 4, true, a);
  CATCH_CHECK(at::equal(ya, augment(x, 4, true, b)));
  CATCH_CHECK(!at::equal(ya, augment(x, 4, true, c)));
  // Works on float batches too (same windows as on uint8).
  at::Generator d = generator(123);
  CATCH_CHECK(at::equal(augment(x.to(at::kFloat), 4, true, d), ya.to(at::kFloat)));
}
