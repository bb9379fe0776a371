#include "trainer/engine/batch_norm_sync.h"

#include <torch/nn/modules/batchnorm.h>

#include "trainer/util/error.h"

namespace trainer::engine {

std::vector<models::SynchronisableBatchNorm*> synchronisable_batch_norms(torch::nn::Module& model,
                                                                         const std::string& model_name) {
  const std::string fix =
      "Use trainer.sync_batchnorm=false (each rank normalises with its own batch, as DDP does without it), or a "
      "model built with trainer::models::SyncBatchNorm1d/2d (the built-in cnn and resnet are).";
  // TorchScript runs its own batch norm kernels, out of reach of the C++ module tree (the
  // parameters we see are mirrors of the scripted module's).
  if (model.name() == "TorchScript") {
    throw Error("trainer.sync_batchnorm=true", "model=" + model_name + " is a TorchScript module, whose batch norms "
                "cannot be synchronised across ranks", fix);
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

}  // namespace trainer::engine
