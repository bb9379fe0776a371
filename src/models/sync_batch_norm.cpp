#include "trainer/models/sync_batch_norm.h"

#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/ops/batch_norm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/var_mean.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include "trainer/util/error.h"

namespace trainer::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Every dimension but the channels (1).
std::vector<int64_t> reduced_dims(const at::Tensor& input) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  return dims;
}

// [C] -> [1, C, 1, ...] to broadcast against the input.
at::Tensor per_channel(const at::Tensor& values, const at::Tensor& input) {
  std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
  shape[1] = values.numel();
  return values.view(shape);
}

// Statistics in float32 at least: half/bfloat16 inputs (autocast) are normalised in float32, as
// PyTorch's batch norm kernels do, and the output goes back to the input's dtype.
at::Tensor compute_view(const at::Tensor& input) {
  const at::ScalarType type = input.scalar_type();
  return type == at::kHalf || type == at::kBFloat16 ? input.to(at::kFloat) : input;
}

// `t` as `type`; an undefined tensor (no affine parameters) stays undefined.
at::Tensor of_type(const at::Tensor& t, at::ScalarType type) { return t.defined() ? t.to(type) : t; }

struct SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const at::Tensor& bias, const at::Tensor& running_mean, const at::Tensor& running_var,
                            double momentum, double eps, const c10::intrusive_ptr<BatchNormGroup>& group) {
    const at::Tensor x = compute_view(input);
    const int64_t channels = x.size(1);
    const std::vector<int64_t> dims = reduced_dims(x);
    // This rank's mean and biased variance (one pass, Welford on the CPU), then every rank's
    // (mean, variance, count) in one all-reduce: a [world, 2C+1] table in float64 where each rank
    // fills its own row. Combining them as Chan et al. do avoids the cancellation of
    // E[x^2] - E[x]^2 and lets ranks hold different batch sizes.
    auto [local_var, local_mean] = at::var_mean(x, at::IntArrayRef(dims), /*unbiased=*/false, /*keepdim=*/false);
    const int world = group->world_size();
    at::Tensor table = at::zeros({world, 2 * channels + 1}, x.options().dtype(at::kDouble));
    at::Tensor row = table.select(0, group->rank());
    row.narrow(0, 0, channels).copy_(local_mean);
    row.narrow(0, channels, channels).copy_(local_var);
    row.narrow(0, 2 * channels, 1).fill_(static_cast<double>(x.numel() / channels));
    group->allreduce_sum(table);
    const at::Tensor means = table.narrow(1, 0, channels);
    const at::Tensor vars = table.narrow(1, channels, channels);
    const at::Tensor counts = table.narrow(1, 2 * channels, 1);
    const at::Tensor count = counts.sum();
    const at::Tensor mean = (means * counts).sum(0) / count;
    const at::Tensor squares = (vars * counts).sum(0) + ((means - mean).pow(2) * counts).sum(0);
    const at::Tensor var = squares / count;
    if (running_mean.defined()) {
      // As batch norm: the running variance is the unbiased estimate (over the global batch).
      running_mean.mul_(1.0 - momentum).add_(mean.to(running_mean.scalar_type()), momentum);
      running_var.mul_(1.0 - momentum).add_((squares / (count - 1)).to(running_var.scalar_type()), momentum);
    }
    const at::Tensor mean_x = mean.to(x.scalar_type());
    const at::Tensor invstd = (var + eps).rsqrt().to(x.scalar_type());
    // The normalisation itself is batch norm in eval mode with the global statistics: one fused pass.
    // The affine parameters are cast too: under precision=bf16-true they are bfloat16 while x is float32.
    at::Tensor output = at::batch_norm(x, of_type(weight, x.scalar_type()), of_type(bias, x.scalar_type()), mean_x,
                                       var.to(x.scalar_type()), /*training=*/false,
                                       /*momentum=*/0.0, eps, /*cudnn_enabled=*/false);
    ctx->save_for_backward({x, weight, mean_x, invstd, count});
    ctx->saved_data["group"] = c10::IValue::make_capsule(group);
    return output.to(input.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& mean = saved[2];
    const at::Tensor& invstd = saved[3];
    const at::Tensor& count = saved[4];
    const c10::intrusive_ptr<torch::CustomClassHolder> capsule = ctx->saved_data["group"].toCapsule();
    auto* group = static_cast<BatchNormGroup*>(capsule.get());  // a capsule holds what forward stored
    const at::Tensor dy = grad_outputs[0].to(x.scalar_type());
    const std::vector<int64_t> dims = reduced_dims(x);
    const int64_t channels = x.size(1);
    const at::Tensor x_hat = (x - per_channel(mean, x)) * per_channel(invstd, x);
    const at::Tensor sum_dy = dy.sum(at::IntArrayRef(dims));
    const at::Tensor sum_dy_xhat = (dy * x_hat).sum(at::IntArrayRef(dims));
    // Weight and bias: this rank's share; the gradient all-reduce adds the other ranks'.
    at::Tensor grad_weight = weight.defined() ? sum_dy_xhat.to(weight.scalar_type()) : at::Tensor();
    at::Tensor grad_bias = weight.defined() ? sum_dy.to(weight.scalar_type()) : at::Tensor();
    // The input: dx = invstd * w * (dy - mean(dy) - x_hat * mean(dy * x_hat)), the means over the
    // global batch, so the two sums travel in one all-reduce.
    at::Tensor sums = at::cat({sum_dy, sum_dy_xhat}).to(at::kDouble);
    group->allreduce_sum(sums);
    sums = (sums / count).to(x.scalar_type());
    const at::Tensor mean_dy = per_channel(sums.narrow(0, 0, channels), x);
    const at::Tensor mean_dy_xhat = per_channel(sums.narrow(0, channels, channels), x);
    const at::Tensor scale = per_channel(weight.defined() ? invstd * weight.to(x.scalar_type()) : invstd, x);
    at::Tensor grad_input = (dy - mean_dy - x_hat * mean_dy_xhat) * scale;
    // One entry per forward argument: input, weight, bias, the running statistics, momentum, eps, group.
    return {grad_input.to(grad_outputs[0].scalar_type()),
            grad_weight,
            grad_bias,
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor sync_batch_norm(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                           const at::Tensor& running_mean, const at::Tensor& running_var, double momentum, double eps,
                           const c10::intrusive_ptr<BatchNormGroup>& group) {
  return SyncBatchNormFunction::apply(input, weight, bias, running_mean, running_var, momentum, eps, group);
}

template <size_t D>
SyncBatchNormImpl<D>::SyncBatchNormImpl(const torch::nn::BatchNormOptions& options) : options(options) {
  reset();
}

// The same registrations and initial values as LibTorch's batch norm.
template <size_t D>
void SyncBatchNormImpl<D>::reset() {
  const int64_t features = options.num_features();
  if (options.affine()) {
    weight = this->register_parameter("weight", at::empty({features}));
    bias = this->register_parameter("bias", at::empty({features}));
  } else {
    weight = this->register_parameter("weight", at::Tensor(), /*requires_grad=*/false);
    bias = this->register_parameter("bias", at::Tensor(), /*requires_grad=*/false);
  }
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", at::empty({features}));
    running_var = this->register_buffer("running_var", at::empty({features}));
    num_batches_tracked = this->register_buffer("num_batches_tracked",
                                                at::zeros(at::IntArrayRef(), at::TensorOptions().dtype(at::kLong)));
  } else {
    running_mean = this->register_buffer("running_mean", at::Tensor());
    running_var = this->register_buffer("running_var", at::Tensor());
    num_batches_tracked = this->register_buffer("num_batches_tracked", at::Tensor());
  }
  reset_parameters();
}

template <size_t D>
void SyncBatchNormImpl<D>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  at::NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D>
void SyncBatchNormImpl<D>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  at::NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

template <size_t D>
void SyncBatchNormImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "trainer::models::SyncBatchNorm" << D << "d(" << options.num_features() << ", eps=" << options.eps()
         << ", momentum=";
  if (options.momentum().has_value()) {
    stream << options.momentum().value();
  } else {
    stream << "None";
  }
  stream << ", affine=" << (options.affine() ? "true" : "false")
         << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

template <size_t D>
at::Tensor SyncBatchNormImpl<D>::forward(const at::Tensor& input) {
  if (D == 1) {
    TORCH_CHECK(input.dim() == 2 || input.dim() == 3, "SyncBatchNorm1d: expected 2D or 3D input (got ", input.dim(),
                "D input)");
  } else {
    TORCH_CHECK(input.dim() == static_cast<int64_t>(D) + 2, "SyncBatchNorm", D, "d: expected ", D + 2, "D input (got ",
                input.dim(), "D input)");
  }
  // PyTorch's check (F.batch_norm's _verify_batch_size): in training, one value per channel has no
  // variance; the running variance would become NaN and every later evaluation with it. Shapes
  // only: no device work.
  if (this->is_training() && (!group_ || group_->world_size() <= 1)) {
    int64_t per_channel = input.size(0);
    for (int64_t d = 2; d < input.dim(); ++d) per_channel *= input.size(d);
    if (per_channel == 1) {
      std::string shape;
      for (int64_t d = 0; d < input.dim(); ++d) shape += (d == 0 ? "[" : ", ") + std::to_string(input.size(d));
      throw Error("model: a batch norm layer of " + std::to_string(options.num_features()) + " channels",
                  "a training batch gave it one value per channel (input " + shape +
                      "]): a batch of one sample at a 1 x 1 position, whose variance is undefined; its running "
                      "variance would become NaN, and every evaluation after it (PyTorch raises here too)",
                  "The smaller last batch of an epoch (the training samples, per rank, modulo data.batch_size) holds "
                  "one sample: choose a data.batch_size that leaves it more, or larger images (data.image_size), "
                  "or a model without batch norm.");
    }
  }
  // torch::nn::BatchNorm's rules: an exponential average, or a cumulative one when momentum is null.
  double factor = options.momentum().has_value() ? options.momentum().value() : 0.0;
  const bool training = this->is_training();
  const bool track = options.track_running_stats();
  if (training && track) {
    num_batches_tracked += 1;
    if (!options.momentum().has_value()) factor = 1.0 / num_batches_tracked.template item<double>();
  }
  if (training && group_ && group_->world_size() > 1) {
    return sync_batch_norm(input, weight, bias, running_mean, running_var, factor, options.eps(), group_);
  }
  return at::batch_norm(input, weight, bias, running_mean, running_var, training || !track, factor, options.eps(),
                        at::globalContext().userEnabledCuDNN());
}

template class SyncBatchNormImpl<1>;
template class SyncBatchNormImpl<2>;

}  // namespace trainer::models
