// This machine's ceilings for the CPU training step (issue 22): the matrix products of model=mlp's
// training step at their own shapes (forward, input gradient, weight gradient) and at 1024^3, and
// the convolutions of model=cnn (forward and both gradients, through ATen's CPU convolution:
// oneDNN where this LibTorch has it), timed with the same LibTorch and threads the trainer uses.
// bench/roofline.sh runs it beside `trainer fit` and reports each model's achieved share.
// Also timed: the Linear layers' products through oneDNN (at::mkldnn_linear and its gradients)
// beside the BLAS ATen's at::mm uses, and each model's forward + backward in plain ATen (autograd,
// no optimizer, no data) at its real shapes and at tiny ones: the same operators on a few numbers,
// i.e. what LibTorch's dispatch, autograd and allocation cost per step whatever the arithmetic.
//   roofline [--threads 2] [--batch 128] [--reps 50]
// Prints "<kind> <name> <flops per call> <median seconds per call> <GFLOP/s>" lines ("graph" rows:
// flops of the forward's products and convolutions times 3), and "note <text>" for a oneDNN call
// this LibTorch refuses.
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
#include <c10/util/Exception.h>

#include "trainer/engine/blas_threads.h"

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

// A Linear layer's three products through oneDNN: the forward with the input already in oneDNN's
// layout (the kernel alone) and with the conversions a model of dense tensors pays each call, and
// the two gradients (oneDNN tensors in, the weight dense for the input's; conversions not timed).
void onednn_linear(const std::string& name, int64_t batch, int64_t in, int64_t out, bool input_grad, int reps) {
  const at::Tensor x = at::randn({batch, in});
  const at::Tensor w = at::randn({out, in});
  const at::Tensor dy = at::randn({batch, out});
  const double flops = 2.0 * batch * in * out;
  auto attempt = [&](const std::string& what, const auto& f) {
    try {
      report("onednn", "onednn-" + name + what, flops, median_seconds(reps, f));
    } catch (const c10::Error& e) {
      std::string text = e.what_without_backtrace();
      text = text.substr(0, text.find(". "));  // its first sentence
      std::printf("note onednn-%s%s refused by this LibTorch: %s\n", name.c_str(), what.c_str(), text.c_str());
    }
  };
  const at::Tensor x_onednn = x.to_mkldnn(), w_onednn = w.to_mkldnn(), dy_onednn = dy.to_mkldnn();
  attempt("-forward", [&] { at::mkldnn_linear(x_onednn, w); });
  attempt("-forward+conversions", [&] { at::mkldnn_linear(x.to_mkldnn(), w).to_dense(); });
  if (input_grad) {
    attempt("-input-grad", [&] { at::mkldnn_linear_backward_input({batch, in}, dy_onednn, w); });
  }
  attempt("-weight-grad", [&] { at::mkldnn_linear_backward_weights(dy_onednn, x_onednn, w_onednn, false); });
}

at::Tensor parameter(at::IntArrayRef shape) { return (at::randn(shape) * 0.1).requires_grad_(true); }

// One training step's forward, loss and backward in plain ATen, as model=mlp runs it (Linear, ReLU,
// dropout; cross entropy): dims {784, 256, 128, 10} is the model, {16, 8, 8, 4} the same operators
// on a few numbers.
void mlp_graph(const std::string& name, int64_t batch, const std::vector<int64_t>& dims, int reps) {
  std::vector<at::Tensor> weights, biases;
  double flops = 0;
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    weights.push_back(parameter({dims[l + 1], dims[l]}));
    biases.push_back(parameter({dims[l + 1]}));
    flops += 3 * 2.0 * batch * dims[l] * dims[l + 1];
  }
  const at::Tensor x = at::randn({batch, dims.front()});
  const at::Tensor y = at::randint(dims.back(), {batch}, at::kLong);
  const double seconds = median_seconds(reps, [&] {
    at::Tensor h = x;
    for (size_t l = 0; l < weights.size(); ++l) {
      h = at::linear(h, weights[l], biases[l]);
      if (l + 1 < weights.size()) h = at::dropout(at::relu(h), 0.2, true);
    }
    at::cross_entropy_loss(h, y).backward();
    for (auto& p : weights) p.mutable_grad().reset();
    for (auto& p : biases) p.mutable_grad().reset();
  });
  report("graph", name, flops, seconds);
}

// The same for model=cnn: per block a 3x3 convolution without bias, batch norm (training), ReLU and
// 2x2 max pooling; then Linear, ReLU, dropout, Linear. {1, 32, 64}, 28, 128 is the model.
void cnn_graph(const std::string& name, int64_t batch, const std::vector<int64_t>& channels, int64_t size,
               int64_t hidden, int reps) {
  std::vector<at::Tensor> convs, scales, shifts, means, vars;
  double flops = 0;
  int64_t side = size;
  for (size_t b = 0; b + 1 < channels.size(); ++b) {
    convs.push_back(parameter({channels[b + 1], channels[b], 3, 3}));
    scales.push_back(at::ones({channels[b + 1]}).requires_grad_(true));
    shifts.push_back(at::zeros({channels[b + 1]}).requires_grad_(true));
    means.push_back(at::zeros({channels[b + 1]}));
    vars.push_back(at::ones({channels[b + 1]}));
    flops += 3 * 2.0 * batch * channels[b] * 9 * channels[b + 1] * side * side;
    side /= 2;
  }
  const int64_t flat = channels.back() * side * side;
  const at::Tensor w1 = parameter({hidden, flat}), b1 = parameter({hidden});
  const at::Tensor w2 = parameter({10, hidden}), b2 = parameter({10});
  flops += 3 * 2.0 * batch * (flat * hidden + hidden * 10);
  const at::Tensor x = at::randn({batch, channels.front(), size, size});
  const at::Tensor y = at::randint(10, {batch}, at::kLong);
  std::vector<at::Tensor> all = {w1, b1, w2, b2};
  for (const auto* group : {&convs, &scales, &shifts}) all.insert(all.end(), group->begin(), group->end());
  const double seconds = median_seconds(reps, [&] {
    at::Tensor h = x;
    for (size_t b = 0; b < convs.size(); ++b) {
      h = at::conv2d(h, convs[b], {}, 1, 1);
      h = at::batch_norm(h, scales[b], shifts[b], means[b], vars[b], true, 0.1, 1e-5, false);
      h = at::max_pool2d(at::relu_(h), 2);
    }
    h = at::dropout(at::relu(at::linear(h.flatten(1), w1, b1)), 0.25, true);
    at::cross_entropy_loss(at::linear(h, w2, b2), y).backward();
    for (auto& p : all) p.mutable_grad().reset();
  });
  report("graph", name, flops, seconds);
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
  // oneDNN for the Linear layers (issue 22: measure both).
  onednn_linear("mlp1", batch, 784, 256, false, reps);
  onednn_linear("mlp2", batch, 256, 128, true, reps);
  onednn_linear("mlp3", batch, 128, 10, true, reps);
  onednn_linear("cnnfc1", batch, 3136, 128, true, reps);
  // Forward + backward in plain ATen: real shapes, then the same operators on a few numbers. From
  // here on with the trainer's start-up setting for OpenBLAS (one thread beside ATen's pool; the
  // products above ran on OpenBLAS's own pool, this machine's best for a product alone).
  const std::string blas = trainer::engine::limit_openblas_pool(threads);
  std::printf("note graph rows: %s\n", blas.empty() ? "no OpenBLAS pool of its own" : blas.c_str());
  mlp_graph("graph-mlp", batch, {784, 256, 128, 10}, reps);
  mlp_graph("graph-mlp-tiny", 8, {16, 8, 8, 4}, reps * 4);
  cnn_graph("graph-cnn", batch, {1, 32, 64}, 28, 128, reps / 2);
  cnn_graph("graph-cnn-tiny", 2, {1, 2, 2}, 4, 4, reps * 4);
  return 0;
}
