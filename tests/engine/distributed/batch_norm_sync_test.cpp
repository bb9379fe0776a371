// Synchronised batch norm against plain batch norm on the whole batch: two ranks in two threads of
// this process (a TCPStore and real Gloo groups over 127.0.0.1), each holding part of the batch
// (3 and 5 samples, so the counts matter), must give the full batch's output, input gradient,
// weight and bias gradients (summed over the ranks, as the gradient all-reduce does) and running
// statistics. Float64 throughout, so the tolerance is tight.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/distributed/batch_norm_sync.h"

#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/linear.h>

#include "trainer/engine/distributed/local_ranks.h"
#include "trainer/engine/distributed/process_group.h"
#include "trainer/models/cnn.h"
#include "trainer/models/resnet.h"
#include "trainer/models/torchscript_model.h"
#include "trainer/util/error.h"

namespace {

using trainer::engine::ProcessGroup;
using trainer::models::SyncBatchNorm2d;

constexpr int64_t kChannels = 3;
const int64_t kSplit[2] = {3, 5};  // rank 0's and rank 1's samples

struct RankResult {
  at::Tensor output, input_grad, weight_grad, bias_grad, running_mean, running_var, num_batches_tracked, eval_output;
};

struct Reference {
  at::Tensor input = at::randn({8, kChannels, 4, 5}, at::kDouble) * 2.0 + 0.5;
  at::Tensor upstream = at::randn({8, kChannels, 4, 5}, at::kDouble);  // d loss / d output
  at::Tensor weight = at::rand({kChannels}, at::kDouble) + 0.5;
  at::Tensor bias = at::randn({kChannels}, at::kDouble);
};

template <typename Layer>
void load_affine(Layer& layer, const Reference& ref) {
  layer->to(at::kDouble);
  at::NoGradGuard no_grad;
  layer->weight.copy_(ref.weight);
  layer->bias.copy_(ref.bias);
}

// One training step of rank `rank` on its part of the batch, then its eval output of the whole batch.
RankResult run_rank(int rank, int port, const Reference& ref) {
  trainer::engine::DistEnv env;
  env.rank = rank;
  env.local_rank = rank;
  env.world_size = 2;
  env.local_world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  trainer::engine::DistOptions options;
  options.timeout_seconds = 60;
  ProcessGroup group(env, options, at::Device(at::kCPU), nullptr);
  SyncBatchNorm2d layer(kChannels);
  load_affine(layer, ref);
  layer->set_group(c10::make_intrusive<trainer::engine::ProcessGroupBatchNorm>(group.sibling("batchnorm")));
  const int64_t start = rank == 0 ? 0 : kSplit[0];
  at::Tensor input = ref.input.narrow(0, start, kSplit[rank]).clone().requires_grad_(true);
  at::Tensor output = layer(input);
  (output * ref.upstream.narrow(0, start, kSplit[rank])).sum().backward();
  RankResult result{output.detach(),
                    input.grad(),
                    layer->weight.grad(),
                    layer->bias.grad(),
                    layer->running_mean.clone(),
                    layer->running_var.clone(),
                    layer->num_batches_tracked.clone(),
                    at::Tensor()};
  layer->eval();
  result.eval_output = layer(ref.input).detach();
  return result;
}

bool close(const at::Tensor& a, const at::Tensor& b) { return at::allclose(a, b, /*rtol=*/1e-9, /*atol=*/1e-10); }

}  // namespace

CATCH_TEST_CASE("synchronised batch norm over 2 ranks (3 + 5 samples) equals batch norm over the 8 samples") {
  at::manual_seed(7);
  const Reference ref;

  torch::nn::BatchNorm2d plain(kChannels);
  load_affine(plain, ref);
  at::Tensor input = ref.input.clone().requires_grad_(true);
  at::Tensor expected = plain(input);
  (expected * ref.upstream).sum().backward();

  const int port = trainer::engine::LocalRanks::free_port();
  RankResult results[2];
  std::exception_ptr failures[2];
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        results[rank] = run_rank(rank, port, ref);
      } catch (...) {
        failures[rank] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }

  CATCH_CHECK(close(at::cat({results[0].output, results[1].output}), expected.detach()));
  CATCH_CHECK(close(at::cat({results[0].input_grad, results[1].input_grad}), input.grad()));
  CATCH_CHECK(close(results[0].weight_grad + results[1].weight_grad, plain->weight.grad()));
  CATCH_CHECK(close(results[0].bias_grad + results[1].bias_grad, plain->bias.grad()));
  for (const RankResult& result : results) {
    CATCH_CHECK(close(result.running_mean, plain->running_mean));
    CATCH_CHECK(close(result.running_var, plain->running_var));  // unbiased, over 8 samples
    CATCH_CHECK(result.num_batches_tracked.item<int64_t>() == 1);
  }
  // Eval mode: the running statistics, no communication (this group would have no partner now).
  plain->eval();
  const at::Tensor expected_eval = plain(ref.input).detach();
  CATCH_CHECK(close(results[0].eval_output, expected_eval));
  CATCH_CHECK(close(results[1].eval_output, expected_eval));

  // The comparison can fail: each rank normalising with its own 3 or 5 samples is far from it.
  torch::nn::BatchNorm2d local(kChannels);
  load_affine(local, ref);
  const at::Tensor per_rank =
      at::cat({local(ref.input.narrow(0, 0, kSplit[0])), local(ref.input.narrow(0, kSplit[0], kSplit[1]))});
  CATCH_CHECK((per_rank - expected).abs().max().item<double>() > 1e-2);
}

CATCH_TEST_CASE("without a group SyncBatchNorm2d is plain batch norm, with the same names") {
  at::manual_seed(3);
  const Reference ref;
  torch::nn::BatchNorm2d plain(kChannels);
  SyncBatchNorm2d sync(kChannels);
  load_affine(plain, ref);
  load_affine(sync, ref);
  at::Tensor a = ref.input.clone().requires_grad_(true);
  at::Tensor b = ref.input.clone().requires_grad_(true);
  (plain(a) * ref.upstream).sum().backward();
  (sync(b) * ref.upstream).sum().backward();
  CATCH_CHECK(at::equal(a.grad(), b.grad()));
  CATCH_CHECK(at::equal(plain->running_var, sync->running_var));
  // The same parameter and buffer names, so checkpoints of either load into the other.
  CATCH_CHECK(plain->named_parameters().keys() == sync->named_parameters().keys());
  CATCH_CHECK(plain->named_buffers().keys() == sync->named_buffers().keys());

  // 1d: [N, C] input, and eval mode after a training step.
  torch::nn::BatchNorm1d plain1d(kChannels);
  trainer::models::SyncBatchNorm1d sync1d(kChannels);
  load_affine(plain1d, ref);
  load_affine(sync1d, ref);
  const at::Tensor flat = ref.input.flatten(2).select(2, 0);
  CATCH_CHECK(at::equal(plain1d(flat), sync1d(flat)));
  plain1d->eval();
  sync1d->eval();
  CATCH_CHECK(at::equal(plain1d(flat), sync1d(flat)));
  CATCH_CHECK(at::equal(plain1d->running_mean, sync1d->running_mean));
}

namespace {

// A user's model built with LibTorch's own batch norm.
struct PlainBatchNormModel : torch::nn::Module {
  PlainBatchNormModel() { register_module("bn", torch::nn::BatchNorm1d(4)); }
};

std::string error_of(torch::nn::Module& model, const std::string& name) {
  try {
    trainer::engine::synchronisable_batch_norms(model, name);
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "<no error>";
}

}  // namespace

CATCH_TEST_CASE("the engine finds the built-in models' batch norms and refuses those it cannot synchronise") {
  trainer::models::CnnOptions cnn;  // two conv blocks
  trainer::models::Cnn cnn_model(cnn);
  CATCH_CHECK(trainer::engine::synchronisable_batch_norms(cnn_model, "cnn").size() == 2);
  trainer::models::ResNetOptions resnet;  // resnet18: the stem, 2 per block, 3 downsamples
  trainer::models::ResNet resnet_model(resnet);
  CATCH_CHECK(trainer::engine::synchronisable_batch_norms(resnet_model, "resnet").size() == 1 + 8 * 2 + 3);

  PlainBatchNormModel plain;
  const std::string plain_error = error_of(plain, "mine");
  CATCH_CHECK_THAT(plain_error, Catch::Contains("trainer.sync_batchnorm=true") && Catch::Contains("layer 'bn'") &&
                                    Catch::Contains("model=mine") && Catch::Contains("SyncBatchNorm1d/2d"));

  torch::jit::Module scripted("Tiny");
  scripted.register_attribute("training", c10::BoolType::get(), true);
  scripted.register_parameter("weight", at::ones({2}), /*is_buffer=*/false);
  scripted.define("def forward(self, x):\n    return x * self.weight\n");
  trainer::models::TorchScriptModel torchscript(scripted);
  CATCH_CHECK_THAT(error_of(torchscript, "torchscript"), Catch::Contains("model=torchscript is a TorchScript module") &&
                                                             Catch::Contains("trainer.sync_batchnorm=false"));
}
