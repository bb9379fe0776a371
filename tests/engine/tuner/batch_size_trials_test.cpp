// The batch-size search on a model (batch_size_trials.h), on the CPU with its counting allocator:
// trials that allocate a batch's worth of memory fit up to the limit and no further, every trial
// is undone (weights, gradients, a fresh optimizer each time), the random generator is back where
// it was, and the result file and the `tuned_batch_size=` line are written.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/tuner/batch_size_trials.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include "trainer/util/error.h"

namespace {

class Linear final : public trainer::models::Model {
 public:
  Linear() { layer_ = register_module("layer", torch::nn::Linear(3, 2)); }
  at::Tensor forward(const at::Tensor& inputs) override { return layer_->forward(inputs); }

 private:
  torch::nn::Linear layer_{nullptr};
};

std::string temp_dir() {
  std::string pattern = "/tmp/batch_size_trials_test.XXXXXX";
  CATCH_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CATCH_TEST_CASE("trials fit up to the memory limit, each is undone, and the generators are restored") {
  Linear model;
  std::vector<at::Tensor> parameters = model.parameters();
  std::vector<at::Tensor> before;
  for (const auto& p : parameters) before.push_back(p.detach().clone());

  int fresh_optimizers = 0;
  trainer::engine::TrialSubject subject;
  subject.model = &model;
  subject.parameters = &parameters;
  subject.train_samples = 1000;
  // A trial: about one MiB per sample of the batch, a random draw, and a weight update.
  subject.run_steps = [&](int64_t batch_size) {
    at::Tensor activations = at::empty({batch_size, 256 * 1024});
    activations.fill_(1.0f);
    at::Tensor noise = at::rand({4});
    torch::NoGradGuard no_grad;
    for (auto& p : parameters) p.add_(noise[0]);
    parameters[0].mutable_grad() = at::ones_like(parameters[0]);
  };
  subject.fresh_optimizer = [&] { ++fresh_optimizers; };

  trainer::engine::TunerOptions tuner;
  tuner.init_val = 2;
  tuner.max_memory_mb = 12.5;  // batches of 2, 4 and 8 MiB fit; 16 does not
  const std::string run_dir = temp_dir();

  at::manual_seed(11);
  const at::Tensor expected_draw = at::rand({3});
  at::manual_seed(11);
  const int64_t found =
      trainer::engine::run_batch_size_search(trainer::engine::ScaleMode::kPower, tuner, run_dir, subject);

  CATCH_CHECK(found == 8);
  CATCH_CHECK(fresh_optimizers == 4);  // 2, 4, 8, 16: each trial undone
  for (size_t i = 0; i < parameters.size(); ++i) CATCH_CHECK(at::equal(parameters[i], before[i]));
  CATCH_CHECK_FALSE(parameters[0].grad().defined());
  CATCH_CHECK(at::equal(at::rand({3}), expected_draw));  // the trials' draws are undone too
  const std::string result = read(run_dir + "/tune_batch_size.yaml");
  CATCH_CHECK(result.find("batch_size: 8") != std::string::npos);
  std::system(("rm -rf " + run_dir).c_str());
}

CATCH_TEST_CASE("a first trial that does not fit is an error naming tuner.init_val") {
  Linear model;
  std::vector<at::Tensor> parameters = model.parameters();
  trainer::engine::TrialSubject subject;
  subject.model = &model;
  subject.parameters = &parameters;
  subject.train_samples = 1000;
  subject.run_steps = [](int64_t batch_size) { at::empty({batch_size, 256 * 1024}).fill_(1.0f); };
  subject.fresh_optimizer = [] {};
  trainer::engine::TunerOptions tuner;
  tuner.init_val = 64;
  tuner.max_memory_mb = 4;
  const std::string run_dir = temp_dir();
  try {
    trainer::engine::run_batch_size_search(trainer::engine::ScaleMode::kBinsearch, tuner, run_dir, subject);
    CATCH_FAIL("expected an error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK(std::string(error.what()).find("tuner.init_val") != std::string::npos);
  }
  CATCH_CHECK(::access((run_dir + "/tune_batch_size.yaml").c_str(), F_OK) != 0);
  std::system(("rm -rf " + run_dir).c_str());
}
