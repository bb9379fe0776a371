// This machine's ceilings for the CPU training step (issue 22): the matrix products of model=mlp's
// training step at their own shapes (forward, input gradient, weight gradient) and at 1024^3, and
// the convolutions of model=cnn (forward and both gradients, through ATen's CPU convolution:
// oneDNN where this LibTorch has it), timed with the same LibTorch and threads the trainer uses.
// bench/roofline.sh runs it beside `trainer fit` and reports each model's achieved share.
//   roofline [--threads 2] [--batch 128] [--reps 50]
// Prints "<kind> <name> <flops per call> <median seconds per call> <GFLOP/s>" lines.
#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

namespace {

template <class F>
double median_seconds(int reps, const F& f) {
  for (int i = 0; i < 5; ++i) f();  // warm-up: buffers, oneDNN primitives, thread pools
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

void report(const char* kind, const std::string& name, double flops, double seconds) {
  std::printf("%s %s %.0f %.9f %.2f\n", kind, name.c_str(), flops, seconds, flops / seconds / 1e9);
}

// C[m,n] = A[m,k] B[k,n] with the layouts a Linear layer's step uses (b_transposed: B is stored
// [n,k], as the weight is).
void gemm(const std::string& name, int64_t m, int64_t k, int64_t n, bool a_transposed, bool b_transposed, int reps) {
  at::Tensor a = a_transposed ? at::randn({k, m}).t() : at::randn({m, k});
  at::Tensor b = b_transposed ? at::randn({n, k}).t() : at::randn({k, n});
  at::Tensor c = at::empty({m, n});
  const double seconds = median_seconds(reps, [&] { at::mm_out(c, a, b); });
  report("gemm", name, 2.0 * m * k * n, seconds);
}

// A 3x3 convolution (padding 1, no bias) as a training step runs it: the forward with autograd
// recording, and the forward with autograd's backward (the weight's gradient, and the input's
// where it needs one); the backward's time is the difference.
void conv(const std::string& name, int64_t batch, int64_t in, int64_t out, int64_t size, bool input_grad, int reps) {
  at::Tensor x = at::randn({batch, in, size, size}).requires_grad_(input_grad);
  at::Tensor w = at::randn({out, in, 3, 3}).requires_grad_(true);
  const double flops = 2.0 * batch * in * 9 * out * size * size;
  at::Tensor dy = at::randn({batch, out, size, size});
  const double forward = median_seconds(reps, [&] { at::conv2d(x, w, {}, 1, 1); });
  const double both = median_seconds(reps, [&] {
    at::Tensor y = at::conv2d(x, w, {}, 1, 1);
    y.backward(dy);
  });
  report("conv", name + "-forward", flops, forward);
  report("conv", name + (input_grad ? "-backward(input,weight)" : "-backward(weight)"), flops * (input_grad ? 2 : 1),
         std::max(both - forward, 1e-9));
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int64_t batch = 128;
  int reps = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    if (flag == "--batch") batch = std::atoll(argv[i + 1]);
    if (flag == "--reps") reps = std::atoi(argv[i + 1]);
  }
  at::set_num_threads(threads);
  // The trainer's malloc thresholds (src/engine/engine_c_abi.cpp): without them every call maps
  // and unmaps its megabytes of output and pays a page fault per 4 KiB, which a convolution with
  // one input channel feels most (14 ms instead of about 2 for cnn1's forward).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  at::manual_seed(0);
  std::printf("info threads %d mkldnn %d\n", at::get_num_threads(), static_cast<int>(at::hasMKLDNN()));
  // Linear layers: forward x W^T; input gradient dY W; weight gradient dY^T X. The first layer's
  // input needs no gradient (the data, or a convolution's output for the cnn's head: it does).
  auto linear = [&](const std::string& model, const std::vector<std::array<int64_t, 2>>& layers, bool first_input) {
    for (size_t l = 0; l < layers.size(); ++l) {
      const int64_t in = layers[l][0], out = layers[l][1];
      const std::string layer = model + std::to_string(l + 1) + "-";
      gemm(layer + "forward", batch, in, out, false, true, reps);
      if (l > 0 || first_input) gemm(layer + "input-grad", batch, out, in, false, false, reps);
      gemm(layer + "weight-grad", out, batch, in, true, false, reps);
    }
  };
  linear("mlp", {{784, 256}, {256, 128}, {128, 10}}, false);  // model=mlp: 784-256-128-10
  linear("cnnfc", {{3136, 128}, {128, 10}}, true);            // model=cnn's head: 64*7*7-128-10
  gemm("square-1024", 1024, 1024, 1024, false, false, std::max(5, reps / 10));
  // model=cnn: conv 1->32 and 32->64, 3x3, padding 1, on 28x28 then 14x14 (no bias: batch norm).
  conv("cnn1", batch, 1, 32, 28, false, reps / 2);
  conv("cnn2", batch, 32, 64, 14, true, reps / 2);
  conv("square-conv", batch, 64, 64, 14, true, reps / 2);
  return 0;
}
