#include "trainer/engine/profiling/flop_counter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

namespace trainer::engine {

namespace {

thread_local FlopCounter::State* t_active = nullptr;

enum class OpKind { kOther, kMatmul, kAddMatmul, kLinear, kConvolution };

OpKind op_kind(const char* name) {
  if (std::strncmp(name, "aten::", 6) != 0) return OpKind::kOther;
  const char* op = name + 6;
  // Matrix products whose operands are inputs 0 and 1, or 1 and 2 (after the added term).
  for (const char* matmul : {"mm", "bmm", "matmul", "mv"}) {
    if (std::strcmp(op, matmul) == 0) return OpKind::kMatmul;
  }
  for (const char* add_matmul : {"addmm", "baddbmm", "addmv", "addbmm"}) {
    if (std::strcmp(op, add_matmul) == 0) return OpKind::kAddMatmul;
  }
  if (std::strcmp(op, "linear") == 0) return OpKind::kLinear;
  // aten::conv2d and friends call aten::convolution, which counts; the backends
  // (mkldnn/cudnn/slow_conv2d) always run inside it.
  if (std::strcmp(op, "convolution") == 0 || std::strcmp(op, "_convolution") == 0) return OpKind::kConvolution;
  return OpKind::kOther;
}

std::vector<int64_t> sizes_of(const c10::IValue& value) {
  if (!value.isTensor()) return {};
  return value.toTensor().sizes().vec();
}

int64_t product(const std::vector<int64_t>& sizes, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, sizes.size()); ++i) p *= sizes[i];
  return p;
}

// torch.matmul's shape rules: a [..., n, k] (or [k]) times b [..., k, m] (or [k]), batch
// dimensions broadcast.
int64_t matmul_flops(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.empty() || b.empty()) return 0;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t n = a[a.size() - 2];
  const int64_t k = a.back();
  const int64_t m = b.back();
  const size_t a_batch = a.size() - 2;
  const size_t b_batch = b.size() - 2;
  int64_t batch = 1;
  for (size_t i = 0; i < std::max(a_batch, b_batch); ++i) {
    const int64_t da = i < a_batch ? a[a_batch - 1 - i] : 1;
    const int64_t db = i < b_batch ? b[b_batch - 1 - i] : 1;
    batch *= std::max(da, db);
  }
  return 2 * batch * n * k * m;
}

std::vector<int64_t> int_list(const c10::IValue& value) {
  if (value.isIntList()) return value.toIntVector();
  if (value.isInt()) return {value.toInt()};
  return {};
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
// 2 x batch x (weight elements: Cout x Cin/groups x kernel) x output positions; a transposed
// convolution does that work per input position (FlopCounterMode's rule).
int64_t convolution_flops(c10::ArrayRef<const c10::IValue> in) {
  if (in.size() < 9) return 0;
  const std::vector<int64_t> x = sizes_of(in[0]);
  const std::vector<int64_t> w = sizes_of(in[1]);
  if (x.size() < 3 || w.size() != x.size()) return 0;
  const size_t spatial = x.size() - 2;
  const bool transposed = in[6].isBool() && in[6].toBool();
  int64_t positions = 1;
  if (transposed) {
    positions = product(x, 2);
  } else {
    auto at = [](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
      if (v.empty()) return fallback;
      return v.size() == 1 ? v[0] : (i < v.size() ? v[i] : fallback);
    };
    const std::vector<int64_t> stride = int_list(in[3]);
    const std::vector<int64_t> padding = int_list(in[4]);
    const std::vector<int64_t> dilation = int_list(in[5]);
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t kernel = w[2 + i];
      const int64_t out = (x[2 + i] + 2 * at(padding, i, 0) - at(dilation, i, 1) * (kernel - 1) - 1) /
                              std::max<int64_t>(1, at(stride, i, 1)) +
                          1;
      positions *= std::max<int64_t>(0, out);
    }
  }
  return 2 * x[0] * product(w) * positions;
}

int64_t op_flops(OpKind kind, c10::ArrayRef<const c10::IValue> in) {
  switch (kind) {
    case OpKind::kMatmul:
      return in.size() >= 2 ? matmul_flops(sizes_of(in[0]), sizes_of(in[1])) : 0;
    case OpKind::kAddMatmul:
      return in.size() >= 3 ? matmul_flops(sizes_of(in[1]), sizes_of(in[2])) : 0;
    case OpKind::kLinear: {
      if (in.size() < 2) return 0;
      const std::vector<int64_t> x = sizes_of(in[0]);
      const std::vector<int64_t> w = sizes_of(in[1]);  // [out, in]
      if (x.empty() || w.size() != 2) return 0;
      return 2 * product(x) * w[0];
    }
    case OpKind::kConvolution:
      return convolution_flops(in);
    case OpKind::kOther:
      return 0;
  }
  return 0;
}

// A non-null context marks a counted operator, so its end closes exactly what its start opened.
struct CountedOp final : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  FlopCounter::State* state = t_active;
  if (state == nullptr) return nullptr;
  const OpKind kind = op_kind(fn.name());
  if (kind == OpKind::kOther) return nullptr;
  if (state->depth++ == 0) {
    const int64_t flops = op_flops(kind, fn.inputs());
    (*state->counts)[fn.name()] += flops;
    if (kind == OpKind::kConvolution) state->convolution += flops;
  }
  return std::make_unique<CountedOp>();
}

void on_op_end(const at::RecordFunction&, at::ObserverContext* context) {
  if (context != nullptr && t_active != nullptr) --t_active->depth;
}

}  // namespace

FlopCounter::FlopCounter() {
  state_.counts = &counts_;
  previous_ = t_active;
  t_active = &state_;
  // One observer per thread serves nested counters (it writes to whichever is innermost): a
  // second one would count every operator twice.
  if (previous_ != nullptr) return;
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&on_op_start, &on_op_end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

FlopCounter::~FlopCounter() {
  if (previous_ == nullptr) at::removeCallback(handle_);
  t_active = previous_;
}

int64_t FlopCounter::total() const {
  int64_t sum = 0;
  for (const auto& [name, flops] : counts_) sum += flops;
  return sum;
}

std::string flops_text(double flops, const std::string& suffix) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int index = 0;
  while (flops >= 1000.0 && index < 5) {
    flops /= 1000.0;
    ++index;
  }
  char text[64];
  std::snprintf(text, sizeof text,
                flops >= 100  ? "%.0f %sFLOP%s"
                : flops >= 10 ? "%.1f %sFLOP%s"
                              : "%.2f %sFLOP%s",
                flops, prefixes[index], suffix.c_str());
  return text;
}

}  // namespace trainer::engine
