// trainer.sync_batchnorm=true under data parallel: the model's synchronisable batch norms
// (models/sync_batch_norm.h) get a group over the job's ranks; a model whose batch norms cannot
// be synchronised is refused rather than trained with per-rank statistics the user did not ask for.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "trainer/engine/distributed/process_group.h"
#include "trainer/models/sync_batch_norm.h"

namespace trainer::engine {

// models::BatchNormGroup over a process group (blocking sum all-reduces).
class ProcessGroupBatchNorm final : public models::BatchNormGroup {
 public:
  explicit ProcessGroupBatchNorm(std::unique_ptr<ProcessGroup> group) : group_(std::move(group)) {}
  int rank() const override { return group_->rank(); }
  int world_size() const override { return group_->world_size(); }
  void allreduce_sum(at::Tensor& tensor) override {
    static const std::string what = "batch norm statistics all-reduce";  // not a new string per call
    group_->allreduce_sum(tensor, what);
  }

 private:
  std::unique_ptr<ProcessGroup> group_;
};

// The synchronisable batch norms of `model`. Throws trainer::Error naming `model_name` when the
// model holds batch norms that cannot be synchronised (torch::nn::BatchNorm*d of a user's model,
// or any TorchScript model: its layers run inside TorchScript).
std::vector<models::SynchronisableBatchNorm*> synchronisable_batch_norms(torch::nn::Module& model,
                                                                         const std::string& model_name);

// trainer.sync_batchnorm=true: gives the model's synchronisable batch norms their own group, a
// sibling of `group` over the same ranks (see the .cpp for why not `group` itself), and logs it.
// One rank, or a model without batch norms: logs that there is nothing to synchronise.
void synchronise_batch_norms_over(torch::nn::Module& model, const std::string& model_name, ProcessGroup& group);

}  // namespace trainer::engine
