// Synchronised batch norm (trainer.sync_batchnorm=true), as PyTorch's SyncBatchNorm: in training
// under data parallel, each layer normalises with the mean and variance of the GLOBAL batch (every
// rank's samples), updates its running statistics with them, and its backward gives the gradient
// of the global batch. Built-in models build their batch norms as SyncBatchNorm1d/2d; until the
// engine hands a layer a BatchNormGroup of more than one rank (and in eval mode) the layer
// computes exactly what torch::nn::BatchNorm1d/2d does, with the same parameter and buffer names.
#pragma once

#include <cstddef>
#include <ostream>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/options/batchnorm.h>
#include <torch/nn/pimpl.h>

namespace trainer::models {

// The ranks a synchronised batch norm reduces over; the engine implements it over its process
// group (models do not depend on the engine). A CustomClassHolder so that the autograd graph can
// keep it until backward (a capsule in the autograd context).
class BatchNormGroup : public torch::CustomClassHolder {
 public:
  ~BatchNormGroup() override = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Sum over every rank, in place, returning when done. Every rank must call it in the same order.
  virtual void allreduce_sum(at::Tensor& tensor) = 0;
};

// Batch norm over the global batch: `input` [N, C, ...] is this rank's part. Normalises with the
// global batch statistics; when `running_mean`/`running_var` are defined, updates them in place
// (unbiased variance, factor `momentum`). Differentiable in input, weight and bias: the input's
// gradient all-reduces sum(dy) and sum(dy * x_hat); weight and bias get this rank's share (the
// gradient all-reduce sums them over the ranks). One all-reduce in forward, one in backward.
at::Tensor sync_batch_norm(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                           const at::Tensor& running_mean, const at::Tensor& running_var, double momentum, double eps,
                           const c10::intrusive_ptr<BatchNormGroup>& group);

// What the engine looks for in a model: a batch norm it can synchronise.
class SynchronisableBatchNorm {
 public:
  virtual ~SynchronisableBatchNorm() = default;
  // Null (the default) or a group of one rank: plain batch norm.
  virtual void set_group(c10::intrusive_ptr<BatchNormGroup> group) = 0;
};

// BatchNorm1d/2d with the same options, parameters and buffers (weight, bias, running_mean,
// running_var, num_batches_tracked: checkpoints of either load into the other). Its own module
// rather than a subclass of LibTorch's: Debian's LibTorch 1.13 does not export the batch norm
// base's pretty_print, which a subclass's vtables need.
template <size_t D>
class SyncBatchNormImpl : public torch::nn::Cloneable<SyncBatchNormImpl<D>>, public SynchronisableBatchNorm {
 public:
  explicit SyncBatchNormImpl(int64_t num_features) : SyncBatchNormImpl(torch::nn::BatchNormOptions(num_features)) {}
  explicit SyncBatchNormImpl(const torch::nn::BatchNormOptions& options);

  void reset() override;
  void reset_running_stats();
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  void set_group(c10::intrusive_ptr<BatchNormGroup> group) override { group_ = std::move(group); }

  // In training with a group of two or more ranks, sync_batch_norm; otherwise batch norm as
  // torch::nn::BatchNorm{D}d computes it, momentum rules included.
  at::Tensor forward(const at::Tensor& input);

  torch::nn::BatchNormOptions options;
  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  c10::intrusive_ptr<BatchNormGroup> group_;
};

extern template class SyncBatchNormImpl<1>;
extern template class SyncBatchNormImpl<2>;
using SyncBatchNorm1dImpl = SyncBatchNormImpl<1>;
using SyncBatchNorm2dImpl = SyncBatchNormImpl<2>;
TORCH_MODULE_IMPL(SyncBatchNorm1d, SyncBatchNorm1dImpl);
TORCH_MODULE_IMPL(SyncBatchNorm2d, SyncBatchNorm2dImpl);

}  // namespace trainer::models
