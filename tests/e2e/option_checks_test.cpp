// The option declarations at work through the real binary: before anything runs, a key of
// another variant, a typo, a value outside its choices and a wrong type are reported at once with
// where they were set; --help lists what the chosen variants' keys accept.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

TEST_CASE("a key of another variant, a typo and bad values are one error before any run directory") {
  TempDir dir;
  auto other = run_process({TRAINER_BINARY, "fit", "+optimizer.momentum=0.9", "hydra.run.dir=run"}, dir.path());
  check_clean_error(other);
  CHECK(other.err.find("optimizer.momentum (override '+optimizer.momentum=0.9'): an option of optimizer=sgd, not of "
                       "optimizer=adam") != std::string::npos);

  auto several = run_process({TRAINER_BINARY, "fit", "model=cnn", "+model.hiden_size=3", "trainer.profiler=simpel",
                              "data.num_workers=many", "hydra.run.dir=run"},
                             dir.path());
  check_clean_error(several);
  CHECK(several.err.find("model.hiden_size (override '+model.hiden_size=3'): Did you mean 'hidden_size'?") !=
        std::string::npos);
  CHECK(several.err.find("trainer.profiler (override 'trainer.profiler=simpel'): simpel is not one of simple or "
                         "pytorch") != std::string::npos);
  CHECK(several.err.find("did you mean 'simple'?") != std::string::npos);
  CHECK(several.err.find("data.num_workers (override 'data.num_workers=many'): expected an int or auto") !=
        std::string::npos);

  auto optimizer = run_process({TRAINER_BINARY, "fit", "optimizer.name=rmsprop", "hydra.run.dir=run"}, dir.path());
  check_clean_error(optimizer);
  CHECK(optimizer.err.find("'rmsprop' is not an optimizer trainer has (adam, adamw, sgd)") != std::string::npos);

  // In a sweep, every job is checked when the sweep is planned: the second job's depth fails
  // before the first one runs.
  auto sweep = run_process({TRAINER_BINARY, "fit", "-m", "model=resnet", "model.depth=18,19", "hydra.sweep.dir=sweep"},
                           dir.path());
  check_clean_error(sweep);
  CHECK(sweep.err.find("model.depth (override 'model.depth=19'): 19 is not one of 18, 34, 50, 101 or 152") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "sweep" / "0"));
}

TEST_CASE("--help lists what the keys of the chosen variants accept") {
  auto help = run_process({TRAINER_BINARY, "fit", "model=cnn", "optimizer=sgd", "--help"});
  REQUIRE(help.exit_code == 0);
  CHECK(help.out.find("== Options ==") != std::string::npos);
  CHECK(help.out.find("  model.hidden_size = 128  (an int at least 1): width of the hidden linear layer") !=
        std::string::npos);
  CHECK(help.out.find("  optimizer.momentum = 0.9") != std::string::npos);
  CHECK(help.out.find("model.hidden_sizes") == std::string::npos);  // the mlp's
  CHECK(help.out.find("  trainer.max_epochs = 10  (an int at least 0 or -1)") != std::string::npos);
}
