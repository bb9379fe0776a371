#include "trainer/engine/distributed/batch_norm_sync.h"

#include <torch/nn/modules/batchnorm.h>

#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {

std::vector<models::SynchronisableBatchNorm*> synchronisable_batch_norms(torch::nn::Module& model,
                                                                         const std::string& model_name) {
  const std::string fix =
      "Use trainer.sync_batchnorm=false (each rank normalises with its own batch, as DDP does without it), or a "
      "model built with trainer::models::SyncBatchNorm1d/2d (the built-in cnn and resnet are).";
  // TorchScript runs its own batch norm kernels, out of reach of the C++ module tree (the
  // parameters we see are mirrors of the scripted module's).
  if (model.name() == "TorchScript") {
    throw Error("trainer.sync_batchnorm=true",
                "model=" + model_name +
                    " is a TorchScript module, whose batch norms "
                    "cannot be synchronised across ranks",
                fix);
  }
  std::vector<models::SynchronisableBatchNorm*> layers;
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    torch::nn::Module& module = *item.value();
    if (auto* layer = dynamic_cast<models::SynchronisableBatchNorm*>(&module)) {
      layers.push_back(layer);
    } else if (module.as<torch::nn::BatchNorm1d>() != nullptr || module.as<torch::nn::BatchNorm2d>() != nullptr ||
               module.as<torch::nn::BatchNorm3d>() != nullptr) {
      throw Error("trainer.sync_batchnorm=true",
                  "layer '" + item.key() + "' of model=" + model_name + " is a plain " + module.name() +
                      ", which cannot be synchronised across ranks",
                  fix);
    }
  }
  return layers;
}

// trainer.sync_batchnorm=true: the batch norms reduce their statistics over a second group of
// the same ranks. One group would also be correct: Gloo tags collectives in the order they are
// issued, and every rank issues the gradient buckets (from the accumulators' hooks) and the
// batch norms' backward all-reduces in the same order, since the autograd engine runs one
// device's graph on one thread in a fixed order. But a batch norm's backward blocks on its
// small all-reduce, and on a shared group that would queue behind a large gradient bucket in
// flight (Gloo's worker threads, NCCL's one stream), stalling the backward pass the buckets are
// meant to overlap with. Its own group costs one more set of connections at start-up.
void synchronise_batch_norms_over(torch::nn::Module& model, const std::string& model_name, ProcessGroup& group) {
  const int world_size = group.world_size();
  if (world_size < 2) {
    log::info("sync_batchnorm: one process, nothing to synchronise: batch norm is plain batch norm");
    return;
  }
  std::vector<models::SynchronisableBatchNorm*> layers = synchronisable_batch_norms(model, model_name);
  if (layers.empty()) {
    log::info("sync_batchnorm: model=" + model_name + " has no batch norm layer; nothing to synchronise");
    return;
  }
  auto batch_norm_group = c10::make_intrusive<ProcessGroupBatchNorm>(group.sibling("batchnorm"));
  for (models::SynchronisableBatchNorm* layer : layers) layer->set_group(batch_norm_group);
  log::info("sync_batchnorm: " + std::to_string(layers.size()) +
            " batch norm layer(s) normalise over the global "
            "batch of " +
            std::to_string(world_size) + " ranks (their own " + group.backend_name() +
            " group; one all-reduce per layer in forward and one in backward)");
}

}  // namespace trainer::engine
