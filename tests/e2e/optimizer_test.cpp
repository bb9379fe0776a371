// optimizer.fused through the real trainer binary on the CPU: by default Adam, AdamW and SGD take
// the fused CPU step and end with exactly the weights LibTorch's own loop gives
// (optimizer.fused=false), on the mlp and the cnn; a run checkpointed on one resumes on the other
// to the same weights; fused=true where there is no fused step (bfloat16 parameters) is refused
// before anything trains. Skipped without the engine.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

std::vector<std::string> fit(const std::string& run_dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=1024",
                                   "data.num_workers=0",
                                   "trainer.max_epochs=2",
                                   "trainer.deterministic=true",
                                   "trainer.enable_progress_bar=false",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// A fit that succeeds without a LibTorch warning ("[W...] Warning: ...", such as an out= tensor
// resized on every step).
void fit_ok(const fs::path& dir, const std::string& run, const std::vector<std::string>& extra) {
  auto result = run_process(fit(run, extra), dir.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("Warning:") == std::string::npos);
}

}  // namespace

TEST_CASE("the fused CPU optimizers end with LibTorch's own weights, bit for bit") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  struct Case {
    std::string name;
    std::vector<std::string> overrides;
  };
  const std::vector<Case> cases = {
      {"adam-mlp", {"optimizer=adam", "optimizer.weight_decay=0.01"}},
      {"sgd-mlp", {"optimizer=sgd", "optimizer.lr=0.05"}},
      {"adamw-cnn",
       {"optimizer=adamw", "model=cnn", "data.image_shape=[1,16,16]", "trainer.limit_train_batches=4",
        "trainer.limit_val_batches=2"}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    fit_ok(root, c.name + "-fused", c.overrides);
    std::vector<std::string> loop = c.overrides;
    loop.push_back("optimizer.fused=false");
    fit_ok(root, c.name + "-loop", loop);
    const std::string fused_log = read_file(root / (c.name + "-fused") / "trainer.log");
    const std::string loop_log = read_file(root / (c.name + "-loop") / "trainer.log");
    CHECK(fused_log.find("one pass over each parameter on the CPU") != std::string::npos);
    CHECK(loop_log.find("LibTorch's loop of operations per parameter") != std::string::npos);
    const Weights fused = exported_weights(root / (c.name + "-fused"));
    const Weights loop_weights = exported_weights(root / (c.name + "-loop"));
    CHECK(largest_difference(fused, loop_weights) == 0.0);
    CHECK(read_csv(root / (c.name + "-fused") / "metrics.csv").last("val/loss") ==
          read_csv(root / (c.name + "-loop") / "metrics.csv").last("val/loss"));
  }
}

TEST_CASE("a checkpoint of LibTorch's loop resumes on the fused step to the same weights") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  fit_ok(root, "straight", {"optimizer=adamw"});
  fit_ok(root, "switched", {"optimizer=adamw", "optimizer.fused=false", "trainer.max_epochs=1"});
  fit_ok(root, "switched", {"optimizer=adamw", "ckpt_path=last"});
  CHECK(largest_difference(exported_weights(root / "straight"), exported_weights(root / "switched")) == 0.0);
}

TEST_CASE("optimizer.fused=true where no fused step exists is refused before training") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(fit("bf16", {"precision=bf16-true", "optimizer.fused=true"}), dir.path());
  CHECK(result.exit_code == 1);
  check_clean_error(result);
  CHECK(result.err.find("optimizer.fused") != std::string::npos);
  CHECK(result.err.find("BFloat16 (precision=bf16-true)") != std::string::npos);
  CHECK(result.err.find("optimizer.fused=null") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "bf16" / "checkpoints" / "last.ckpt"));
  // The same precision with the default (null) trains on LibTorch's loop.
  auto fallback = run_process(fit("bf16-null", {"precision=bf16-true", "trainer.max_epochs=1"}), dir.path());
  INFO(fallback.err);
  CHECK(fallback.exit_code == 0);
  CHECK(read_file(fs::path(dir.path()) / "bf16-null" / "trainer.log")
            .find("LibTorch's loop of operations per parameter (no fused CPU step for BFloat16 "
                  "(precision=bf16-true) parameters)") != std::string::npos);
  // A value that is not a bool or null names all three.
  auto word = run_process(fit("word", {"optimizer.fused=maybe"}), dir.path());
  CHECK(word.exit_code == 1);
  check_clean_error(word);
  CHECK(word.err.find("true, false or null") != std::string::npos);
}

TEST_CASE("scheduler=onecycle cycles Adam's beta1 and SGD's momentum unless cycle_momentum=false") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const auto last_loss = [&](const std::string& run, std::vector<std::string> extra) {
    extra.push_back("scheduler=onecycle");
    fit_ok(root, run, extra);
    return read_csv(root / run / "metrics.csv").last("val/loss");
  };
  // Cycled, the optimizer's own beta1 (and SGD's momentum) plays no part, as under PyTorch's
  // OneCycleLR; kept, it does. Both fused and LibTorch's loop read the cycled value.
  CHECK(last_loss("b09", {"optimizer.betas=[0.9,0.999]"}) == last_loss("b05", {"optimizer.betas=[0.5,0.999]"}));
  CHECK(last_loss("b05-loop", {"optimizer.betas=[0.5,0.999]", "optimizer.fused=false"}) ==
        last_loss("b09-loop", {"optimizer.betas=[0.9,0.999]", "optimizer.fused=false"}));
  CHECK(last_loss("k09", {"optimizer.betas=[0.9,0.999]", "scheduler.cycle_momentum=false"}) !=
        last_loss("k05", {"optimizer.betas=[0.5,0.999]", "scheduler.cycle_momentum=false"}));
  CHECK(last_loss("sgd-m1", {"optimizer=sgd", "optimizer.momentum=0.1"}) ==
        last_loss("sgd-m5", {"optimizer=sgd", "optimizer.momentum=0.5"}));
  CHECK(last_loss("sgd-k1", {"optimizer=sgd", "optimizer.momentum=0.1", "scheduler.cycle_momentum=false"}) !=
        last_loss("sgd-k5", {"optimizer=sgd", "optimizer.momentum=0.5", "scheduler.cycle_momentum=false"}));
}
