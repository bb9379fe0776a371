// Precision settings through the real trainer binary on the CPU: bf16-mixed and bf16-true train,
// 16-mixed runs with loss scaling where this LibTorch has CPU float16 autocast (2.x) and is
// refused naming `precision` where it has not (1.13); inf gradients under loss scaling skip the
// optimizer step and the LR schedule; a resumed run restores the scaler's state exactly; bfloat16
// on a CPU without bfloat16 arithmetic is said at start-up (read from /proc/cpuinfo here too).
// Skipped without the engine.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// LibTorch's major version, from `trainer --version` ("LibTorch 1.13.0 (debian), ...").
int torch_major() {
  auto version = run_process({TRAINER_BINARY, "--version"});
  std::smatch match;
  std::regex pattern("LibTorch ([0-9]+)\\.");
  REQUIRE(std::regex_search(version.out, match, pattern));
  return std::stoi(match[1]);
}

std::vector<std::string> fit(const std::string& run_dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,         "fit",
                                   "data=synthetic",       "data.num_samples=1024",
                                   "trainer.max_epochs=1", "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// The safetensors header of last.ckpt exported (dtypes and shapes as JSON text).
std::string exported_header(const fs::path& run) {
  auto exported = run_process({TRAINER_BINARY, "export", "ckpt_path=last", "hydra.run.dir=" + run.string(),
                               "export_path=" + (run / "weights.safetensors").string()});
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const std::string bytes = read_file(run / "weights.safetensors");
  REQUIRE(bytes.size() > 8);
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(bytes[i]);
  REQUIRE(bytes.size() >= 8 + length);
  return bytes.substr(8, length);
}

std::string final_weights(const fs::path& run) {
  exported_header(run);
  return read_file(run / "weights.safetensors");
}

int count(const std::string& text, const std::string& word) {
  int n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++n;
  return n;
}

// From "fit finished in 1.2 s, 30 steps (7 skipped for inf/NaN gradients, loss scale 3e+38)".
struct FitSummary {
  int64_t steps = -1, skipped = -1;
  std::string scale;
};
FitSummary summary(const std::string& err) {
  FitSummary s;
  std::smatch match;
  std::regex pattern(
      "fit finished in [0-9.]+ s, ([0-9]+) steps \\(([0-9]+) skipped for inf/NaN gradients, loss scale ([^)]+)\\)");
  if (std::regex_search(err, match, pattern)) {
    s.steps = std::stoll(match[1]);
    s.skipped = std::stoll(match[2]);
    s.scale = match[3];
  }
  return s;
}

// Loss scaling that overflows again and again: inputs scaled up 100× (normalize.std=0.01) and a
// start scale near float32's maximum make the first steps' gradients infinite; the scale backs off
// (× 0.5 a skip) and jumps × 16 after every 3 good steps, into overflow again now and then, in
// both epochs: which steps are skipped depends on the scale and the growth tracker. SGD with a
// per-step schedule (× 0.9 a step) whose learning rate is logged at every step.
std::vector<std::string> overflowing(std::vector<std::string> extra) {
  std::vector<std::string> args = {"data.num_samples=2048",
                                   "+data.normalize.std=0.01",
                                   "trainer.grad_scaler.enabled=true",
                                   "trainer.grad_scaler.init_scale=3.0e38",
                                   "trainer.grad_scaler.growth_interval=3",
                                   "trainer.grad_scaler.growth_factor=16",
                                   "optimizer=sgd",
                                   "optimizer.lr=0.01",
                                   "scheduler=step",
                                   "scheduler.interval=step",
                                   "scheduler.step_size=1",
                                   "scheduler.gamma=0.9",
                                   "callbacks.lr_monitor.logging_interval=step",
                                   "callbacks.model_checkpoint.save_top_k=0",
                                   "trainer.log_every_n_steps=1",
                                   "trainer.deterministic=true"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("precision=bf16-mixed trains on the CPU under autocast with float32 weights") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "bf16";
  auto result = run_process(fit(run.string(), {"precision=bf16-mixed"}));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("precision bf16-mixed") != std::string::npos);
  CHECK(result.err.find("loss scaling") == std::string::npos);  // no scaler for bfloat16
  const double accuracy = printed(result.out, "test/acc");
  CHECK(accuracy > 0.5);  // synthetic classes separate within an epoch
  const std::string header = exported_header(run);
  CHECK(header.find("\"F32\"") != std::string::npos);
  CHECK(header.find("\"BF16\"") == std::string::npos);

  // Lightning 1.x's spelling `bf16` is the same setting.
  auto alias = run_process(fit((fs::path(dir.path()) / "alias").string(), {"precision=bf16", "trainer.max_steps=2"}));
  INFO(alias.err);
  CHECK(alias.exit_code == 0);
  CHECK(alias.err.find("precision bf16-mixed") != std::string::npos);
}

TEST_CASE("bfloat16 on a CPU without bfloat16 arithmetic says so at start-up, and 32 does not") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool has_flags = false;
  bool bf16_hardware = false;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      has_flags = true;
      bf16_hardware = std::regex_search(line, std::regex(" (avx512_bf16|amx_bf16|bf16)( |$)"));
      break;
    }
  }
  if (!has_flags) return skip_test("no flags line in /proc/cpuinfo", Skip::expected);
  TempDir dir;
  const std::string warning = "on a CPU without bfloat16 arithmetic";
  for (const std::string precision : {"bf16-mixed", "bf16-true"}) {
    auto result = run_process(
        fit((fs::path(dir.path()) / precision).string(), {"precision=" + precision, "trainer.max_steps=2"}));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK((result.err.find("precision=" + precision + " " + warning) != std::string::npos) == !bf16_hardware);
    if (!bf16_hardware) CHECK(result.err.find("Use precision=32 on this CPU") != std::string::npos);
  }
  auto plain = run_process(fit((fs::path(dir.path()) / "32").string(), {"precision=32", "trainer.max_steps=2"}));
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.err.find(warning) == std::string::npos);
}

TEST_CASE("precision=bf16-true keeps the weights in bfloat16") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto result = run_process(fit(run.string(), {"precision=bf16-true"}));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string header = exported_header(run);
  CHECK(header.find("\"BF16\"") != std::string::npos);
  CHECK(header.find("\"F32\"") == std::string::npos);

  // Only floating tensors: a batch norm's step counter stays an integer (LibTorch's Module::to
  // made it a bfloat16 that stops counting at 256), in the checkpoint and in the export.
  const fs::path cnn = fs::path(dir.path()) / "cnn";
  auto cnn_fit = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=640", "data.batch_size=2",
                              "trainer.max_epochs=1", "precision=bf16-true", "model=cnn", "model.channels=[4]",
                              "hydra.run.dir=" + cnn.string()});
  INFO(cnn_fit.err);
  REQUIRE(cnn_fit.exit_code == 0);
  const std::string cnn_header = exported_header(cnn);
  INFO(cnn_header);
  const std::regex counter(
      R"re("features\.1\.num_batches_tracked":\{"dtype":"I64","shape":\[\],"data_offsets":\[([0-9]+),)re");
  std::smatch match;
  REQUIRE(std::regex_search(cnn_header, match, counter));
  const std::string bytes = read_file(cnn / "weights.safetensors");
  const size_t at = 8 + cnn_header.size() + std::stoull(match[1]);
  REQUIRE(bytes.size() >= at + 8);
  int64_t steps = 0;
  for (int i = 7; i >= 0; --i) steps = (steps << 8) | static_cast<unsigned char>(bytes[at + i]);
  CHECK(steps == 288);  // 576 training samples (the rest validation) in batches of 2: past bfloat16's 256
}

TEST_CASE("precision=16 on the CPU runs bf16-mixed with a warning, as Lightning does, and the checkpoint says so") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "fp16";
  // The README's headline command, on both LibTorch builds (1.13 has no float16 CPU autocast at all).
  auto result = run_process(fit(run.string(), {"precision=16", "trainer.accelerator=cpu"}));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("precision=16-mixed on the CPU: running precision=bf16-mixed instead, as Lightning does") !=
        std::string::npos);
  CHECK(result.err.find("precision bf16-mixed") != std::string::npos);
  CHECK(result.err.find("loss scaling") == std::string::npos);  // bf16 needs no loss scaler
  CHECK(printed(result.out, "test/acc") > 0.5);
  // The checkpoint's summary and stored config record the precision that ran.
  const std::string checkpoint = read_file(run / "checkpoints" / "last.ckpt");
  CHECK(checkpoint.find("\nprecision bf16-mixed\n") != std::string::npos);
  CHECK(checkpoint.find("precision: bf16-mixed") != std::string::npos);
  CHECK(exported_header(run).find("\"F16\"") == std::string::npos);  // weights stay float32
}

TEST_CASE("grad_scaler settings where no loss scaling runs are a warning, not silently dropped") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // precision=16 on the CPU runs bf16-mixed, without a scaler: init_scale did nothing, without a word.
  auto result = run_process(fit((fs::path(dir.path()) / "fp16").string(),
                                {"precision=16", "trainer.accelerator=cpu", "trainer.grad_scaler.init_scale=1024",
                                 "trainer.limit_train_batches=2", "test_after_fit=false"}));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.err, "trainer.grad_scaler.init_scale set, but no loss scaling runs with precision=bf16-mixed"));
  // The shipped values, or enabled given either way, say nothing.
  auto plain = run_process(
      fit((fs::path(dir.path()) / "plain").string(),
          {"precision=16", "trainer.accelerator=cpu", "trainer.grad_scaler.enabled=false",
           "trainer.grad_scaler.growth_interval=10", "trainer.limit_train_batches=2", "test_after_fit=false"}));
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(contains(plain.err, "no loss scaling runs"));
}

TEST_CASE("precision=16-mixed with the CPU float16 opt-in: loss scaling where the CPU has it, else a clear error") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "fp16";
  auto result =
      run_process(fit(run.string(), {"precision=16", "trainer.accelerator=cpu", "trainer.cpu_float16_autocast=true"}));
  INFO(result.err);
  if (torch_major() < 2) {
    // LibTorch 1.13's CPU autocast runs in bfloat16 only: refused before any training.
    CHECK(result.exit_code != 0);
    check_no_crash(result);
    CHECK(result.err.find("Error: precision: precision=16-mixed") != std::string::npos);
    CHECK(result.err.find("bf16-mixed") != std::string::npos);
    CHECK(result.err.find("first training step") == std::string::npos);
    CHECK_FALSE(fs::exists(run / "checkpoints"));
    return;
  }
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("precision 16-mixed, loss scaling from 65536") != std::string::npos);
  // It runs what was asked, and says that is slow here.
  CHECK(result.err.find("with trainer.cpu_float16_autocast=true runs float16 autocast") != std::string::npos);
  CHECK(result.err.find("use precision=bf16-mixed or 32") != std::string::npos);
  FitSummary s = summary(result.err);
  CHECK(s.steps == 8);
  CHECK(s.skipped >= 0);
  CHECK(s.skipped < s.steps);
  CHECK(printed(result.out, "test/acc") > 0.5);
  CHECK(exported_header(run).find("\"F16\"") == std::string::npos);  // weights stay float32
}

TEST_CASE("precision=16-true runs where LibTorch has float16 CPU kernels, else a clear error before training") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  // SGD: 16-true with Adam is refused (its eps rounds to 0 in float16; see the test below).
  auto result = run_process(
      fit(run.string(), {"precision=16-true", "trainer.accelerator=cpu", "optimizer=sgd", "optimizer.lr=0.01"}));
  INFO(result.err);
  if (torch_major() < 2) {
    // 1.13 has no float16 matrix product on the CPU: the set-up probe names the setting and the fix.
    CHECK(result.exit_code != 0);
    check_no_crash(result);
    CHECK(result.err.find("Error: precision: precision=16-true cannot run model=mlp on the cpu") != std::string::npos);
    CHECK(result.err.find("bf16-mixed") != std::string::npos);
    CHECK(result.err.find("first training step") == std::string::npos);
    return;
  }
  REQUIRE(result.exit_code == 0);
  CHECK(exported_header(run).find("\"F16\"") != std::string::npos);
}

TEST_CASE("bad precision settings are refused naming the key") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::string run = (fs::path(dir.path()) / "run").string();
  auto unknown = run_process(fit(run, {"precision=8"}));
  CHECK(unknown.exit_code != 0);
  check_no_crash(unknown);
  CHECK(unknown.err.find("precision (override 'precision=8'): 8 is not one of 32, 32-true") != std::string::npos);
  CHECK(unknown.err.find("bf16-mixed") != std::string::npos);

  auto scaled_half = run_process(fit(run, {"precision=16-true", "trainer.grad_scaler.enabled=true"}));
  CHECK(scaled_half.exit_code != 0);
  check_no_crash(scaled_half);
  CHECK(scaled_half.err.find("Error: trainer.grad_scaler.enabled:") != std::string::npos);
  CHECK(scaled_half.err.find("precision=16-mixed") != std::string::npos);

  auto half_adam = run_process(fit(run, {"precision=16-true", "optimizer=adam"}));
  CHECK(half_adam.exit_code != 0);
  check_no_crash(half_adam);
  CHECK(half_adam.err.find("Error: precision: precision=16-true with optimizer=adam diverges") != std::string::npos);
  CHECK(half_adam.err.find("first training step") == std::string::npos);

  auto growth = run_process(fit(run, {"trainer.grad_scaler.growth_factor=1.0"}));
  CHECK(growth.exit_code != 0);
  check_no_crash(growth);
  CHECK(growth.err.find("trainer.grad_scaler.growth_factor (override 'trainer.grad_scaler.growth_factor=1.0'): 1.0 is "
                        "out of range") != std::string::npos);
  CHECK(growth.err.find("above 1") != std::string::npos);

  auto typo = run_process(fit(run, {"+trainer.grad_scaler.init_scal=2.0"}));
  CHECK(typo.exit_code != 0);
  check_no_crash(typo);
  CHECK(typo.err.find("trainer.grad_scaler.init_scal") != std::string::npos);
}

TEST_CASE("inf gradients under loss scaling skip the optimizer step and the LR schedule") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "run";
  auto result = run_process(fit(run.string(), overflowing({"trainer.max_epochs=2"})));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  FitSummary s = summary(result.err);
  CHECK(s.steps == 30);  // 1843 training samples, batch 128: 15 batches an epoch
  CHECK(s.skipped > 0);
  CHECK(s.skipped < s.steps);
  // Skips are reported at the log line after them (every step here).
  CHECK(count(result.err, "optimizer step(s) skipped since the last line") == s.skipped);
  // The schedule advanced once per step taken, not per step attempted.
  CsvTable metrics = read_csv(run / "metrics.csv");
  const std::string last_lr = metrics.last("lr-SGD");
  REQUIRE(!last_lr.empty());
  const double expected = 0.01 * std::pow(0.9, static_cast<double>(s.steps - s.skipped));
  CHECK(std::stod(last_lr) == Approx(expected).epsilon(1e-12));
  CHECK(std::stod(last_lr) != Approx(0.01 * std::pow(0.9, static_cast<double>(s.steps))).epsilon(1e-6));
}

TEST_CASE("a resumed run restores the loss scale and growth tracker and ends with the same weights") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  auto whole = run_process(fit((root / "whole").string(), overflowing({"trainer.max_epochs=2"})));
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);

  auto first = run_process(fit((root / "split").string(), overflowing({"trainer.max_epochs=1"})));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  FitSummary after_first = summary(first.err);
  REQUIRE(!after_first.scale.empty());

  auto resumed = run_process(fit((root / "split").string(), overflowing({"trainer.max_epochs=2", "ckpt_path=last"})));
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("loss scale restored: " + after_first.scale + ", ") != std::string::npos);

  FitSummary a = summary(whole.err);
  FitSummary b = summary(resumed.err);
  CHECK(a.steps == 30);
  CHECK(b.steps == 30);
  CHECK(a.scale == b.scale);
  CHECK(a.skipped == after_first.skipped + b.skipped);  // the resumed process counts its own skips
  CHECK((final_weights(root / "whole") == final_weights(root / "split")));
  CHECK(read_csv(root / "whole" / "metrics.csv").last("lr-SGD") ==
        read_csv(root / "split" / "metrics.csv").last("lr-SGD"));
}
