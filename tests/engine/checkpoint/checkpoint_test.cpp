// serialize_checkpoint / load_checkpoint with real models: the round trip of the loop state, the
// optimizer's state, the precision and the RNG, and the checks on load (shape, dtype, missing and
// extra tensors, a file that is not trainer's, non-finite weights naming the intact file beside).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/checkpoint/checkpoint.h"

#include <unistd.h>

#include <functional>
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <torch/optim/adam.h>
#include <torch/serialize/output-archive.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/engine/checkpoint/checkpoint_writer.h"
#include "trainer/engine/precision/cast_floating_tensors.h"
#include "trainer/models/model_registry.h"
#include "trainer/util/error.h"

namespace {

std::shared_ptr<trainer::models::Model> mlp(const std::string& hidden_sizes) {
  trainer::config::Node root = trainer::config::Node::map();
  root.set(
      "model",
      trainer::config::load_yaml_string("name: mlp\nhidden_sizes: " + hidden_sizes + "\ndropout: 0.0\n", "model").root);
  return trainer::models::ModelRegistry::global().create(trainer::config::ConfigView(root).sub("model"),
                                                         trainer::models::InputSpec{{1, 28, 28}, 10});
}

std::shared_ptr<trainer::models::Model> cnn() {
  trainer::config::Node root = trainer::config::Node::map();
  root.set("model", trainer::config::load_yaml_string("name: cnn\nchannels: [4]\nhidden_size: 8\n", "model").root);
  return trainer::models::ModelRegistry::global().create(trainer::config::ConfigView(root).sub("model"),
                                                         trainer::models::InputSpec{{1, 8, 8}, 3});
}

struct Scratch {
  std::string dir;
  Scratch() {
    char pattern[] = "/tmp/checkpoint_test_XXXXXX";
    CATCH_REQUIRE(::mkdtemp(pattern) != nullptr);
    dir = pattern;
  }
  ~Scratch() {
    for (const char* name : {"/last.ckpt", "/epoch_000.ckpt"}) ::unlink((dir + name).c_str());
    ::rmdir(dir.c_str());
  }
};

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

CATCH_TEST_CASE("a checkpoint restores the weights and the loop state it was written with") {
  Scratch scratch;
  auto model = mlp("[16]");
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  trainer::engine::LoopState state;
  state.epoch = 2;
  state.global_step = 17;
  state.batch_in_epoch = 5;
  state.scheduler_count = 9;
  state.top_k = {{0.75, scratch.dir + "/epoch_001.ckpt"}};
  state.callback_states = {{"early_stopping", "wait 1"}};
  const std::string path = scratch.dir + "/last.ckpt";
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, state, "seed: 3\n"));

  auto other = mlp("[16]");
  torch::optim::Adam other_adam(other->parameters(), torch::optim::AdamOptions(1e-3));
  const trainer::engine::LoopState loaded = trainer::engine::load_checkpoint(path, *other, &other_adam, false);
  CATCH_CHECK(loaded.epoch == 2);
  CATCH_CHECK(loaded.global_step == 17);
  CATCH_CHECK(loaded.batch_in_epoch == 5);
  CATCH_CHECK(loaded.scheduler_count == 9);
  CATCH_REQUIRE(loaded.top_k.size() == 1);
  CATCH_CHECK(loaded.top_k[0].score == 0.75);
  CATCH_REQUIRE(loaded.callback_states.size() == 1);
  CATCH_CHECK(loaded.callback_states[0].second == "wait 1");
  const auto a = model->named_parameters();
  const auto b = other->named_parameters();
  for (const auto& parameter : a) CATCH_CHECK(at::equal(parameter.value(), b[parameter.key()]));
}

CATCH_TEST_CASE("a checkpoint is refused by a model of another shape or dtype, and with non-finite weights") {
  Scratch scratch;
  auto model = mlp("[16, 8]");
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  const std::string path = scratch.dir + "/last.ckpt";
  const std::string config = "model:\n  name: mlp\n  hidden_sizes: [16, 8]\nseed: 1\n";
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, {}, config));

  auto wider = mlp("[32, 8]");
  const std::string shape = error_of([&] {
    trainer::engine::load_checkpoint(path, *wider, nullptr, false,
                                     "model:\n  name: mlp\n  hidden_sizes: [32, 8]\nseed: 2\n");
  });
  CATCH_CHECK(shape.find("does not fit this model") != std::string::npos);
  CATCH_CHECK(shape.find("layers.1.weight: checkpoint Float [16, 784] vs model Float [32, 784]") != std::string::npos);
  CATCH_CHECK(shape.find("model.hidden_sizes: [16, 8] in the checkpoint's run, [32, 8] now") != std::string::npos);
  CATCH_CHECK(shape.find("seed") == std::string::npos);  // only keys that shape the model or its inputs

  auto doubled = mlp("[16, 8]");
  doubled->to(at::kDouble);
  const std::string dtype = error_of([&] { trainer::engine::load_checkpoint(path, *doubled, nullptr, false); });
  CATCH_CHECK(dtype.find("checkpoint Float [16, 784] vs model Double [16, 784]") != std::string::npos);

  auto deeper = mlp("[16, 8, 4]");
  const std::string missing = error_of([&] { trainer::engine::load_checkpoint(path, *deeper, nullptr, false); });
  CATCH_CHECK(missing.find("missing from the checkpoint") != std::string::npos);

  {
    at::NoGradGuard no_grad;
    model->named_parameters()["layers.1.bias"][3] = std::numeric_limits<float>::quiet_NaN();
  }
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, {}, config));
  auto fresh = mlp("[16, 8]");
  const std::string nan = error_of([&] { trainer::engine::load_checkpoint(path, *fresh, nullptr, false); });
  CATCH_CHECK(nan.find("non-finite weights (NaN or inf) in layers.1.bias") != std::string::npos);
}

CATCH_TEST_CASE("the optimizer's state, the precision and the RNG come back from a checkpoint") {
  Scratch scratch;
  at::manual_seed(3);
  auto model = mlp("[16]");
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  const at::Tensor inputs = at::randn({8, 1, 28, 28});
  auto adam_step = [&](trainer::models::Model& m, torch::optim::Adam& optimizer) {
    optimizer.zero_grad();
    m.forward(inputs).square().mean().backward();
    optimizer.step();
  };
  for (int i = 0; i < 3; ++i) adam_step(*model, adam);
  trainer::engine::LoopState state;
  state.precision = "bf16-mixed";
  const std::string path = scratch.dir + "/last.ckpt";
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, state, ""));
  const at::Tensor draws = at::rand({4});  // the CPU generator moves on after the save

  auto other = mlp("[16]");
  torch::optim::Adam other_adam(other->parameters(), torch::optim::AdamOptions(1e-3));
  const trainer::engine::LoopState loaded = trainer::engine::load_checkpoint(path, *other, &other_adam, true);
  CATCH_CHECK(loaded.precision == "bf16-mixed");
  CATCH_CHECK(at::equal(at::rand({4}), draws));  // restore_rng: the generator as it was at the save
  // Adam's moments and step count came back: the next step moves both models alike. Without them
  // the fresh optimizer's first step (bias correction of step 1) would differ.
  adam_step(*model, adam);
  adam_step(*other, other_adam);
  const auto a = model->named_parameters();
  const auto b = other->named_parameters();
  for (const auto& parameter : a) CATCH_CHECK(at::equal(parameter.value(), b[parameter.key()]));

  trainer::engine::load_checkpoint(path, *other, nullptr, /*restore_rng=*/false);
  CATCH_CHECK_FALSE(at::equal(at::rand({4}), draws));  // the generator is left where it was

  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, {}, ""));
  CATCH_CHECK(trainer::engine::load_checkpoint(path, *other, nullptr, false).precision == "32-true");
}

CATCH_TEST_CASE("a checkpoint's extra tensors are refused, and a long list of differences is cut at four") {
  Scratch scratch;
  auto model = mlp("[16, 8]");
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  const std::string path = scratch.dir + "/last.ckpt";
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*model, adam, {}, ""));

  auto shallower = mlp("[16]");
  const std::string extra = error_of([&] { trainer::engine::load_checkpoint(path, *shallower, nullptr, false); });
  CATCH_CHECK(extra.find("(4 of its tensors differ)") != std::string::npos);
  CATCH_CHECK(extra.find("layers.5.weight: in the checkpoint (Float [10, 8]), not in the model") != std::string::npos);

  auto other = mlp("[32, 8, 4]");
  const std::string many = error_of([&] { trainer::engine::load_checkpoint(path, *other, nullptr, false); });
  CATCH_CHECK(many.find("(7 of its tensors differ)") != std::string::npos);
  CATCH_CHECK(many.find("; and 3 more.") != std::string::npos);
}

CATCH_TEST_CASE("a file that is not a trainer checkpoint, and non-finite weights, say what to use instead") {
  Scratch scratch;
  auto model = mlp("[16]");
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  // A bare LibTorch archive (what torch::save writes): readable, but no format_version.
  const std::string bare = scratch.dir + "/last.ckpt";
  {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive weights;
    model->save(weights);
    archive.write("model", weights);
    archive.save_to(bare);
  }
  const std::string foreign = error_of([&] { trainer::engine::load_checkpoint(bare, *model, nullptr, false); });
  CATCH_CHECK(foreign.find(bare + ": not a trainer checkpoint") != std::string::npos);

  // A diverged last.ckpt beside an intact epoch file: the error names the intact one.
  trainer::engine::write_file_durably(scratch.dir + "/epoch_000.ckpt",
                                      trainer::engine::serialize_checkpoint(*model, adam, {}, ""));
  {
    at::NoGradGuard no_grad;
    model->named_parameters()["layers.3.weight"][0][0] = std::numeric_limits<float>::infinity();
  }
  trainer::engine::write_file_durably(bare, trainer::engine::serialize_checkpoint(*model, adam, {}, ""));
  auto fresh = mlp("[16]");
  const std::string diverged = error_of([&] { trainer::engine::load_checkpoint(bare, *fresh, nullptr, false); });
  CATCH_CHECK(diverged.find("non-finite weights (NaN or inf) in layers.3.weight") != std::string::npos);
  CATCH_CHECK(diverged.find("(" + scratch.dir + "/epoch_000.ckpt is the newest other one)") != std::string::npos);
}

CATCH_TEST_CASE("a true precision casts only floating tensors, and loads the float counters older checkpoints held") {
  Scratch scratch;
  const std::string path = scratch.dir + "/last.ckpt";
  // Before: LibTorch's Module::to(dtype) made the batch norm's step counter a bfloat16 (it stops
  // at 256). Such a checkpoint, 300 steps counted, as an older trainer wrote it:
  auto old = cnn();
  old->to(at::kBFloat16);
  at::Tensor old_counter = old->named_buffers()["features.1.num_batches_tracked"];
  CATCH_REQUIRE(old_counter.scalar_type() == at::kBFloat16);
  old_counter.fill_(300);
  torch::optim::Adam adam(old->parameters(), torch::optim::AdamOptions(1e-3));
  trainer::engine::write_file_durably(path, trainer::engine::serialize_checkpoint(*old, adam, {}, "seed: 1\n"));

  auto model = cnn();
  trainer::engine::cast_floating_tensors(*model, at::kBFloat16);
  for (const auto& parameter : model->named_parameters()) {
    CATCH_CHECK(parameter.value().scalar_type() == at::kBFloat16);
  }
  at::Tensor counter = model->named_buffers()["features.1.num_batches_tracked"];
  CATCH_CHECK(counter.scalar_type() == at::kLong);
  CATCH_CHECK(model->named_buffers()["features.1.running_var"].scalar_type() == at::kBFloat16);
  // The same tensors, cast in place: an optimizer made before the cast steps the cast weights.
  const at::Tensor first = model->parameters()[0];
  trainer::engine::cast_floating_tensors(*model, at::kDouble);
  CATCH_CHECK(first.scalar_type() == at::kDouble);
  trainer::engine::cast_floating_tensors(*model, at::kBFloat16);

  trainer::engine::load_checkpoint(path, *model, nullptr, false);
  counter = model->named_buffers()["features.1.num_batches_tracked"];
  CATCH_CHECK(counter.scalar_type() == at::kLong);
  CATCH_CHECK(counter.item<int64_t>() == 300);  // 300 is a bfloat16 (256 + 32 + 8 + 4)
  CATCH_CHECK(
      at::equal(model->named_parameters()["classifier.1.weight"], old->named_parameters()["classifier.1.weight"]));

  // A float32 model still refuses the bfloat16 weights, naming them.
  auto float32 = cnn();
  const std::string refused = error_of([&] { trainer::engine::load_checkpoint(path, *float32, nullptr, false); });
  CATCH_CHECK(refused.find("checkpoint BFloat16") != std::string::npos);
  CATCH_CHECK(refused.find("num_batches_tracked") == std::string::npos);
}
