// Distributed data parallel with real processes on CPU (Gloo): `trainer.devices=2` starts a
// second rank, and the same binary joins a job when torchrun's variables are set. Skipped without
// the engine.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

// Plain SGD (no momentum, no weight decay), no dropout, no shuffling differences: the mean of two
// ranks' gradients over b samples each is the gradient over the same 2b samples in one process.
// 1024 synthetic samples, 1/8 held out: 896 training samples.
std::vector<std::string> fit_command(const std::string& run_dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {TRAINER_BINARY,
                                   "fit",
                                   "data=synthetic",
                                   "data.num_samples=1024",
                                   "data.val_fraction=0.125",
                                   "model.dropout=0",
                                   "optimizer=sgd",
                                   "optimizer.momentum=0",
                                   "optimizer.nesterov=false",
                                   "optimizer.weight_decay=0",
                                   "trainer.num_sanity_val_steps=0",
                                   "trainer.enable_progress_bar=false",
                                   "trainer.deterministic=true",
                                   "callbacks.model_checkpoint.save_top_k=0",
                                   "test_after_fit=false",
                                   "hydra.run.dir=" + run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

void check_close(const Weights& a, const Weights& b, const Weights& start) {
  REQUIRE(a.size() == 6);  // the MLP's three weights and biases
  const double largest = largest_difference(a, b);
  const double moved = largest_difference(a, start);
  INFO("largest difference " << largest << ", largest change by training " << moved);
  CHECK(largest <= 1e-5);
  CHECK(moved > 1e-3);  // training moved the weights far more than the tolerance
}

bool file_contains(const fs::path& path, const std::string& text) {
  return read_file(path).find(text) != std::string::npos;
}

// The part of a job's stderr from its last line starting with `start` on.
std::string from_last(const std::string& err, const std::string& start) {
  const size_t at = err.rfind("\n" + start);
  return at == std::string::npos ? std::string() : err.substr(at + 1);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_CASE("2 ranks x batch b end with the weights of 1 rank x batch 2b (Gloo, real processes)") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // The initial weights (the same seed): one step with a learning rate of 0.
  auto initial = run_process(
      fit_command((root / "start").string(), {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"}));
  INFO(initial.err);
  REQUIRE(initial.exit_code == 0);
  const auto start = exported_weights(root / "start");

  SECTION("one optimizer step per batch, one epoch of 14 steps, then validation") {
    auto one = run_process(fit_command((root / "one").string(), {"data.batch_size=64", "trainer.max_steps=14"}));
    INFO(one.err);
    REQUIRE(one.exit_code == 0);
    auto two = run_process(
        fit_command((root / "two").string(), {"data.batch_size=32", "trainer.max_steps=14", "trainer.devices=2"}));
    INFO(two.err);
    REQUIRE(two.exit_code == 0);
    CHECK(two.err.find("data parallel: 2 ranks") != std::string::npos);
    CHECK(two.err.find("gradient all-reduce: 1 bucket(s), 14 steps") != std::string::npos);
    check_close(exported_weights(root / "one"), exported_weights(root / "two"), start);
    // One run directory, written by rank 0 alone; its metrics are over both ranks' samples.
    CHECK(fs::exists(root / "two" / ".hydra" / "config.yaml"));
    CHECK(fs::exists(root / "two" / "metrics.csv"));
    CsvTable a = read_csv(root / "one" / "metrics.csv");
    CsvTable b = read_csv(root / "two" / "metrics.csv");
    REQUIRE(!a.last("val/loss").empty());
    CHECK(std::fabs(std::stod(a.last("val/loss")) - std::stod(b.last("val/loss"))) < 1e-5);
    CHECK(a.last("val/acc") == b.last("val/acc"));
  }

  SECTION("with gradient accumulation: no all-reduce until the accumulated step") {
    auto one = run_process(fit_command((root / "one").string(), {"data.batch_size=64", "trainer.max_steps=6"}));
    INFO(one.err);
    REQUIRE(one.exit_code == 0);
    auto two =
        run_process(fit_command((root / "acc").string(), {"data.batch_size=16", "trainer.max_steps=6",
                                                          "trainer.devices=2", "trainer.accumulate_grad_batches=2"}));
    INFO(two.err);
    REQUIRE(two.exit_code == 0);
    CHECK(two.err.find("gradient all-reduce: 1 bucket(s), 6 steps") != std::string::npos);
    check_close(exported_weights(root / "one"), exported_weights(root / "acc"), start);
  }

  SECTION("small buckets: several all-reduces per step give the same weights") {
    auto one = run_process(fit_command((root / "one").string(), {"data.batch_size=64", "trainer.max_steps=5"}));
    REQUIRE(one.exit_code == 0);
    auto two =
        run_process(fit_command((root / "buckets").string(), {"data.batch_size=32", "trainer.max_steps=5",
                                                              "trainer.devices=2", "trainer.bucket_cap_mb=0.1"}));
    INFO(two.err);
    REQUIRE(two.exit_code == 0);
    CHECK(two.err.find("gradient all-reduce: 4 bucket(s), 5 steps") != std::string::npos);
    check_close(exported_weights(root / "one"), exported_weights(root / "buckets"), start);
  }
}

TEST_CASE("sync_batchnorm: 2 ranks x b with model=cnn end with the weights and running statistics of 1 rank x 2b") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  // A small cnn (two conv blocks with batch norm, no dropout), 6 steps.
  const std::vector<std::string> cnn = {"model=cnn", "model.channels=[4,8]", "model.hidden_size=16",
                                        "trainer.max_steps=6"};
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    extra.insert(extra.end(), cnn.begin(), cnn.end());
    auto result = run_process(fit_command((root / name).string(), extra));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result;
  };
  run("start", {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"});
  // One process: the option changes nothing, and says so.
  auto one = run("one", {"data.batch_size=64", "trainer.sync_batchnorm=true"});
  CHECK(one.err.find("sync_batchnorm: one process, nothing to synchronise") != std::string::npos);
  auto two = run("two", {"data.batch_size=32", "trainer.devices=2", "trainer.sync_batchnorm=true"});
  CHECK(two.err.find("sync_batchnorm: 2 batch norm layer(s) normalise over the global batch of 2 ranks") !=
        std::string::npos);
  run("plain", {"data.batch_size=32", "trainer.devices=2"});

  const Weights single = exported_weights(root / "one");
  const Weights synced = exported_weights(root / "two");
  const Weights plain = exported_weights(root / "plain");
  const Weights initial = exported_weights(root / "start");
  // The running statistics are in the files (float32 buffers), and training moved them.
  REQUIRE(single.count("features.1.running_mean") == 1);
  REQUIRE(single.count("features.5.running_var") == 1);
  CHECK(largest_difference(single, initial) > 1e-3);
  const double synced_difference = largest_difference(single, synced);
  const double plain_difference = largest_difference(single, plain);
  INFO("largest difference to 1 rank: synchronised " << synced_difference << ", per-rank batch norm "
                                                     << plain_difference);
  CHECK(synced_difference <= 1e-5);
  // Without it each rank normalises with its own half batch: the test would see that.
  CHECK(plain_difference > 1e-5);
  // ... in the running statistics too (rank 0's file holds its own half batch's estimates).
  const auto running_var = [](const Weights& all) { return Weights{{"v", all.at("features.1.running_var")}}; };
  CHECK(largest_difference(running_var(single), running_var(plain)) > 1e-5);
  CHECK(largest_difference(running_var(single), running_var(synced)) <= 1e-5);
}

TEST_CASE("precision=bf16-true on Gloo: 2 ranks x b end within bfloat16 rounding of 1 rank x 2b (sync_batchnorm too)") {
  // LibTorch 1.13's Gloo has no bfloat16: parameters are broadcast as their bits and gradients
  // summed in float32 (process_group.h). Before that, the first broadcast failed ("Invalid scalar
  // type"); the synchronised batch norm mixed bfloat16 parameters with float32 statistics.
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    extra.push_back("trainer.precision=bf16-true");
    auto result = run_process(fit_command((root / name).string(), extra));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result;
  };
  SECTION("mlp") {
    run("start", {"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"});
    run("one", {"data.batch_size=64", "trainer.max_steps=14"});
    auto two = run("two", {"data.batch_size=32", "trainer.max_steps=14", "trainer.devices=2"});
    CHECK(two.err.find("gradient all-reduce: 1 bucket(s), 14 steps") != std::string::npos);
    const Weights one = exported_weights(root / "one");
    const double largest = largest_difference(one, exported_weights(root / "two"));
    const double moved = largest_difference(one, exported_weights(root / "start"));
    INFO("largest difference " << largest << ", largest change by training " << moved);
    // Measured: 4 % of the change (bfloat16 sums in another order); a rank training on its own
    // half batch without the all-reduce ends 53 % away.
    CHECK(largest <= 0.1 * moved);
    CHECK(moved > 1e-2);
  }
  SECTION("cnn with sync_batchnorm") {
    const std::vector<std::string> cnn = {"model=cnn", "model.channels=[4,8]", "model.hidden_size=16"};
    auto with_cnn = [&](std::vector<std::string> extra) {
      extra.insert(extra.end(), cnn.begin(), cnn.end());
      return extra;
    };
    run("start", with_cnn({"data.batch_size=64", "trainer.max_steps=1", "optimizer.lr=0"}));
    run("one", with_cnn({"data.batch_size=64", "trainer.max_steps=6"}));
    auto two = run("two", with_cnn({"data.batch_size=32", "trainer.max_steps=6", "trainer.devices=2",
                                    "trainer.sync_batchnorm=true"}));
    CHECK(two.err.find("sync_batchnorm: 2 batch norm layer(s) normalise over the global batch of 2 ranks") !=
          std::string::npos);
    const Weights one = exported_weights(root / "one");
    const Weights synced = exported_weights(root / "two");
    const Weights start = exported_weights(root / "start");
    for (const std::string name : {"features.0.weight", "classifier.3.weight", "features.5.running_mean"}) {
      const auto only = [&](const Weights& all) { return Weights{{name, all.at(name)}}; };
      const double largest = largest_difference(only(one), only(synced));
      const double moved = largest_difference(only(one), only(start));
      INFO(name << ": largest difference " << largest << ", largest change by training " << moved);
      // Measured 1-22 % on a CPU with bfloat16 arithmetic, 1-30 % (features.0.weight: 0.0063 of
      // 0.0215, a few bfloat16 steps at its size) on an AMD EPYC without it, where ATen converts.
      CHECK(largest <= 0.4 * moved);
      CHECK(moved > 1e-2);
    }
  }
}

TEST_CASE(
    "without sync_batchnorm a 2-rank fit validates with rank 0's batch norm statistics, as its checkpoint "
    "does",
    "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const char* const data_dir = "/usr/share/datasets/fashion-mnist";  // configs/paths/default.yaml
  if (!fs::exists(fs::path(data_dir) / "train-images-idx3-ubyte.gz")) {
    return skip_test(std::string(data_dir) + " is missing: install Debian's dataset-fashion-mnist (scripts/setup.sh)",
                     Skip::unexpected_in_ci);
  }
  // Real images: each rank's half batches move its running statistics apart from the other's
  // (synthetic noise is too uniform to show it). Before the fix the fit's val/loss was the mean of
  // the ranks evaluating with their own statistics: 1.8169 where the checkpoint gives 1.8186.
  TempDir dir;
  const std::vector<std::string> limits = {"trainer.limit_val_batches=8", "trainer.enable_progress_bar=false"};
  std::vector<std::string> fit = {TRAINER_BINARY,
                                  "fit",
                                  "model=cnn",
                                  "model.channels=[4,8]",
                                  "model.hidden_size=16",
                                  "data.batch_size=32",
                                  "trainer.max_epochs=1",
                                  "trainer.limit_train_batches=30",
                                  "trainer.num_sanity_val_steps=0",
                                  "trainer.devices=2",
                                  "test_after_fit=false",
                                  "hydra.run.dir=run"};
  fit.insert(fit.end(), limits.begin(), limits.end());
  auto trained = run_process(fit, dir.path());
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  REQUIRE(trained.err.find("data parallel: 2 ranks") != std::string::npos);
  const std::string during_fit = read_csv(fs::path(dir.path()) / "run" / "metrics.csv").last("val/loss");
  REQUIRE(!during_fit.empty());

  // The checkpoint evaluated by 2 ranks over the same batches, and by one process over the same samples.
  auto validate = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {TRAINER_BINARY, "validate", "ckpt_path=last", "hydra.run.dir=run"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto result = run_process(argv, dir.path());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return printed(result.out, "val/loss");
  };
  const double two_ranks = validate({"trainer.devices=2", "trainer.limit_val_batches=8"});
  const double one_process = validate({"trainer.limit_val_batches=16"});
  INFO("val/loss during the fit " << during_fit << ", validate on 2 ranks " << two_ranks << ", on one process "
                                  << one_process);
  CHECK(std::abs(std::stod(during_fit) - two_ranks) <= 1e-6);
  CHECK(std::abs(std::stod(during_fit) - one_process) <= 1e-6);
}

TEST_CASE("a killed rank ends the job at once with an error naming it and saying it wrote nothing") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const int number = GENERATE(SIGKILL, SIGABRT);
  TempDir dir;
  const std::string run = (fs::path(dir.path()) / "killed").string();
  pid_t killed = -1;
  bool unused = false;
  // Long enough to be mid-training when rank 1 is killed; the timeout is far above what the
  // job may take to notice (a dead peer resets its connections).
  auto result = run_and_signal(
      fit_command(run, {"data.num_samples=65536", "data.batch_size=32", "trainer.max_epochs=20",
                        "trainer.log_every_n_steps=10", "trainer.devices=2", "trainer.dist_timeout=120"}),
      dir.path(),
      [&] {
        if (killed < 0 && file_contains(fs::path(run) / "trainer.log", " step 20 ")) {
          killed = find_rank(run, 1);
          if (killed > 0) kill(killed, number);
        }
        return false;
      },
      SIGTERM, &unused);
  INFO(result.err);
  REQUIRE(killed > 0);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  const std::string error = from_last(result.err, "Error: ");
  CHECK(error.find("rank 1 (pid " + std::to_string(killed) + ") was killed by signal " + std::to_string(number)) !=
        std::string::npos);
  CHECK(error.find(number == SIGKILL ? "): killed from outside" : "): it aborted") != std::string::npos);
  CHECK(error.find("Rank 1 wrote nothing to stderr.") != std::string::npos);
  // Killed before the first checkpoint: the advice is to start again, not to resume.
  CHECK(error.find("No checkpoint was written yet (none in " + run +
                   "/checkpoints): once the cause is fixed, run "
                   "the same command again.") != std::string::npos);
  CHECK(error.find("ckpt_path=last") == std::string::npos);
  CHECK(result.err.find("fit finished") == std::string::npos);
  CHECK(kill(killed, 0) != 0);  // reaped, not left behind
}

// While the ranks meet and connect (the rendezvous, then Gloo's connections), a rank that dies or a
// SIGTERM ends the job at once: Gloo's connect would otherwise wait for a peer that joined and
// then died for all of trainer.dist_timeout (here 120 s, above the 60 s these runs may take).
TEST_CASE("a rank killed or a SIGTERM while the ranks start ends the job at once (not after dist_timeout)") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> args = {"data.num_samples=1024", "data.batch_size=64", "trainer.max_epochs=1",
                                         "trainer.devices=2", "trainer.dist_timeout=120"};
  for (const int delay_ms : {0, 50, 100, 200, 300, 400}) {
    const std::string run = (fs::path(dir.path()) / ("killed-" + std::to_string(delay_ms))).string();
    pid_t killed = -1;
    bool unused = false;
    std::chrono::steady_clock::time_point seen{};
    auto result = run_and_signal(
        fit_command(run, args), dir.path(),
        [&] {
          if (killed > 0) return false;
          if (seen == std::chrono::steady_clock::time_point{}) {
            if (find_rank(run, 1) > 0) seen = std::chrono::steady_clock::now();
          } else if (std::chrono::steady_clock::now() - seen >= std::chrono::milliseconds(delay_ms)) {
            killed = find_rank(run, 1);
            if (killed > 0) kill(killed, SIGKILL);
          }
          return false;
        },
        SIGTERM, &unused, std::chrono::seconds(60));
    INFO("killed " << delay_ms << " ms after rank 1 appeared\n" << result.err);
    if (killed < 0) continue;  // the job had already finished
    CHECK(result.exit_code != 0);
    check_no_crash(result);
    if (result.err.find("fit finished") == std::string::npos) {
      CHECK(
          from_last(result.err, "Error: ").find("rank 1 (pid " + std::to_string(killed) + ") was killed by signal 9") !=
          std::string::npos);
    }
  }
  for (const int delay_ms : {0, 100, 300}) {
    const std::string run = (fs::path(dir.path()) / ("stopped-" + std::to_string(delay_ms))).string();
    bool signalled = false;
    std::chrono::steady_clock::time_point seen{};
    auto result = run_and_signal(
        fit_command(run, args), dir.path(),
        [&] {
          if (seen == std::chrono::steady_clock::time_point{}) {
            if (find_rank(run, 1) > 0) seen = std::chrono::steady_clock::now();
            return false;
          }
          return std::chrono::steady_clock::now() - seen >= std::chrono::milliseconds(delay_ms);
        },
        SIGTERM, &signalled, std::chrono::seconds(60));
    INFO("SIGTERM " << delay_ms << " ms after rank 1 appeared\n" << result.err);
    if (!signalled) continue;
    CHECK(result.exit_code == 1);
    check_no_crash(result);
    const std::string error = from_last(result.err, "Error: ");
    CHECK((error.find("stopped by signal 15 (Terminated)") != std::string::npos ||
           error.find("signal 15: stopped after step") != std::string::npos));
  }
}

// Rank 1 alone reads model.input_size=1 (RANK is 1 only there; rank 0 resolves the default 784): a
// valid size that the data refuses once the engine builds the model, after the rendezvous. Its own
// error, on its own stderr, which the job process relays.
TEST_CASE("a rank that fails with its own error: rank 0's error quotes that rank's last lines") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path run = fs::path(dir.path()) / "failed";
  auto result =
      run_process(fit_command(run.string(), {"data.batch_size=32", "trainer.max_steps=10", "trainer.devices=2",
                                             "model.input_size='${oc.decode:${oc.env:RANK,784}}'"}),
                  dir.path());
  INFO(result.err);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  // Rank 1's line reached the terminal, marked, and the job's log.
  const std::string relayed = "[rank 1] Error: ";
  const size_t at = result.err.find("\n" + relayed);
  REQUIRE(at != std::string::npos);
  const std::string line = result.err.substr(at + 1, result.err.find('\n', at + 1) - at - 1);
  CHECK(line.find("the mlp model expects 1 inputs per sample") != std::string::npos);
  CHECK(file_contains(run / "trainer.log", line + "\n"));
  // The job's error names the rank, says how it ended and quotes that line after a label.
  const std::string error = from_last(result.err, "Error: ");
  CHECK(error.find("Error: distributed job of 2 ranks: rank 1 (pid ") == 0);
  CHECK(error.find(") exited with code 1.") != std::string::npos);
  const size_t label = error.find("The last lines rank 1 wrote to stderr (all of its output is above and in " +
                                  (run / "trainer.log").string() + ", marked [rank 1]):\n");
  REQUIRE(label != std::string::npos);
  CHECK(error.find("\n  " + line, label) != std::string::npos);
}

TEST_CASE("SIGINT to rank 0 alone stops both ranks after the same step, with a checkpoint") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::string run = (fs::path(dir.path()) / "stopped").string();
  bool signalled = false;
  auto result = run_and_signal(
      fit_command(run, {"data.num_samples=65536", "data.batch_size=32", "trainer.max_epochs=20",
                        "trainer.log_every_n_steps=10", "trainer.devices=2"}),
      dir.path(), [&] { return file_contains(fs::path(run) / "trainer.log", " step 20 "); }, SIGINT, &signalled);
  INFO(result.err);
  REQUIRE(signalled);
  CHECK(result.exit_code == 1);
  check_no_crash(result);
  // Both ranks report the same step (rank 1 shares the job's stderr).
  std::regex stopped("signal 2: stopped after step ([0-9]+)|signal 15: stopped after step ([0-9]+)");
  std::vector<std::string> steps;
  for (auto it = std::sregex_iterator(result.err.begin(), result.err.end(), stopped); it != std::sregex_iterator();
       ++it) {
    steps.push_back((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  }
  REQUIRE(steps.size() == 2);
  CHECK(steps[0] == steps[1]);
  CHECK(fs::exists(fs::path(run) / "checkpoints" / "last.ckpt"));
}

TEST_CASE(
    "a rank whose MASTER_PORT is held by a listener that never answers ends within dist_timeout, and on SIGTERM") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // A socket that listens and never reads: the kernel completes each connection, and a store
  // client's first read waits for ever (no accept, no answer), as with an unrelated service.
  const int squatter = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  REQUIRE(bind(squatter, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(listen(squatter, 16) == 0);
  REQUIRE(getsockname(squatter, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  const std::vector<std::string> env = {"RANK=1",
                                        "LOCAL_RANK=1",
                                        "WORLD_SIZE=2",
                                        "LOCAL_WORLD_SIZE=2",
                                        "MASTER_ADDR=127.0.0.1",
                                        "MASTER_PORT=" + std::to_string(ntohs(address.sin_port))};
  const auto started = std::chrono::steady_clock::now();
  auto timed_out = run_process(fit_command((fs::path(dir.path()) / "r1").string(), {"trainer.dist_timeout=2"}),
                               dir.path(), env, std::chrono::seconds(60));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(timed_out.err);
  CHECK(timed_out.exit_code == 1);
  CHECK(seconds < 40);
  CHECK(contains(timed_out.err, "did not answer within trainer.dist_timeout (2 s)"));
  CHECK(contains(timed_out.err, "Fix: give the job a free port"));

  // SIGTERM while it waits: ended within seconds, not after the timeout. The first run's
  // connection is taken off the queue, so that the next one pending says the rank is blocked in
  // the rendezvous (its signal handlers were installed before it connected).
  for (int pending = accept4(squatter, nullptr, nullptr, SOCK_NONBLOCK); pending >= 0;
       pending = accept4(squatter, nullptr, nullptr, SOCK_NONBLOCK)) {
    close(pending);
    pollfd more{squatter, POLLIN, 0};
    if (poll(&more, 1, 0) <= 0) break;
  }
  bool signalled = false;
  const auto begun = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> connected;
  const auto blocked = [&] {
    if (!connected) {
      pollfd waiting{squatter, POLLIN, 0};
      if (poll(&waiting, 1, 0) > 0) connected = std::chrono::steady_clock::now();
      return false;
    }
    return std::chrono::steady_clock::now() - *connected > std::chrono::milliseconds(500);
  };
  // env(1) sets the variables and execs trainer in its place: the signal reaches trainer.
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  const std::vector<std::string> fit =
      fit_command((fs::path(dir.path()) / "r2").string(), {"trainer.dist_timeout=300"});
  argv.insert(argv.end(), fit.begin(), fit.end());
  auto stopped = run_and_signal(argv, dir.path(), blocked, SIGTERM, &signalled, std::chrono::seconds(60));
  close(squatter);
  INFO(stopped.err);
  CHECK(signalled);
  CHECK(stopped.exit_code == 1);
  CHECK(contains(stopped.err, "stopped by signal 15"));
  CHECK(std::chrono::steady_clock::now() - begun < std::chrono::seconds(30));
}

TEST_CASE("with torchrun's variables set the binary joins the job as it is told; only rank 0 writes files") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const int port = free_port();
  auto env = [&](int rank) {
    return std::vector<std::string>{"RANK=" + std::to_string(rank),
                                    "LOCAL_RANK=" + std::to_string(rank),
                                    "WORLD_SIZE=2",
                                    "LOCAL_WORLD_SIZE=2",
                                    "MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + std::to_string(port),
                                    "TORCHELASTIC_RUN_ID=test"};
  };
  // Each rank composes its own run directory; rank 0's is the job's.
  ProcessResult second;
  std::thread other([&] {
    second = run_process(fit_command((root / "rank1").string(), {"data.batch_size=32", "trainer.max_steps=10"}),
                         dir.path(), env(1));
  });
  auto first = run_process(fit_command((root / "rank0").string(), {"data.batch_size=32", "trainer.max_steps=10"}),
                           dir.path(), env(0));
  other.join();
  INFO(first.err);
  INFO(second.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(first.err.find("rank 0 of 2 (gloo, rendezvous 127.0.0.1:" + std::to_string(port) + ", torchrun)") !=
        std::string::npos);
  CHECK(first.err.find("started ranks") == std::string::npos);  // nothing spawned
  CHECK(second.err.find("[info]") == std::string::npos);        // rank 1 logs warnings and errors only
  CHECK(fs::exists(root / "rank0" / "checkpoints" / "last.ckpt"));
  CHECK(fs::exists(root / "rank0" / ".hydra" / "config.yaml"));
  CHECK(!fs::exists(root / "rank1"));

  // The same job as trainer's own launcher runs it.
  auto launched = run_process(
      fit_command((root / "launched").string(), {"data.batch_size=32", "trainer.max_steps=10", "trainer.devices=2"}),
      dir.path());
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  const auto a = exported_weights(root / "rank0");
  const auto b = exported_weights(root / "launched");
  for (const auto& [name, values] : a) CHECK((values == b.at(name)));
}

// srun gives no rendezvous port (one is drawn from the job ids): trainer.master_port sets it, on
// every rank alike. Under torchrun the port is where its store is: another is refused.
TEST_CASE("under srun trainer.master_port is the rendezvous port; under torchrun one that differs is refused") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const int port = free_port();
  auto env = [&](int rank) {
    return std::vector<std::string>{"SLURM_PROCID=" + std::to_string(rank),
                                    "SLURM_NTASKS=2",
                                    "SLURM_LOCALID=" + std::to_string(rank),
                                    "SLURM_NNODES=1",
                                    "SLURM_JOB_ID=4242",
                                    "SLURM_STEP_ID=0"};
  };
  const std::vector<std::string> job = {"data.batch_size=32", "trainer.max_steps=4", "test_after_fit=false",
                                        "trainer.master_port=" + std::to_string(port)};
  ProcessResult second;
  std::thread other([&] { second = run_process(fit_command((root / "rank1").string(), job), dir.path(), env(1)); });
  auto first = run_process(fit_command((root / "rank0").string(), job), dir.path(), env(0));
  other.join();
  INFO(first.err);
  INFO(second.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(first.err.find("rank 0 of 2 (gloo, rendezvous 127.0.0.1:" + std::to_string(port) + ", slurm)") !=
        std::string::npos);

  auto torchrun = run_process(fit_command((root / "torchrun").string(), {"trainer.master_port=29999"}), dir.path(),
                              {"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                               "MASTER_PORT=29998", "TORCHELASTIC_RUN_ID=x"},
                              std::chrono::seconds(60));
  check_clean_error(torchrun);
  CHECK(torchrun.err.find("trainer.master_port: is 29999, but torchrun set MASTER_PORT=29998") != std::string::npos);
  CHECK(torchrun.err.find("start torchrun with --master-port 29999") != std::string::npos);
}

// Under a launcher trainer never sees the other ranks' output: rank 0's error names where each
// rank's stderr went (each rank says so through the store at the rendezvous).
TEST_CASE("with torchrun's variables, rank 0's error names where a failed rank's stderr went") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const int port = free_port();
  auto env = [&](int rank) {
    return std::vector<std::string>{"RANK=" + std::to_string(rank),
                                    "LOCAL_RANK=" + std::to_string(rank),
                                    "WORLD_SIZE=2",
                                    "LOCAL_WORLD_SIZE=2",
                                    "MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + std::to_string(port),
                                    "TORCHELASTIC_RUN_ID=test"};
  };
  // Rank 1 alone reads model.input_size=1 (from a variable only its environment has), which the
  // data refuses after the rendezvous; its stderr goes to a file, as torchrun's --redirects or
  // srun's --error would send it.
  const std::vector<std::string> job = {"data.batch_size=32", "trainer.max_steps=10", "trainer.dist_timeout=60",
                                        "model.input_size='${oc.decode:${oc.env:TRAINER_TEST_INPUT_SIZE,784}}'"};
  const fs::path rank1_err = root / "rank1.err";
  std::vector<std::string> rank1 = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", rank1_err.string()};
  const std::vector<std::string> fit1 = fit_command((root / "rank1").string(), job);
  rank1.insert(rank1.end(), fit1.begin(), fit1.end());
  ProcessResult second;
  std::vector<std::string> rank1_env = env(1);
  rank1_env.push_back("TRAINER_TEST_INPUT_SIZE=1");
  std::thread other([&] { second = run_process(rank1, dir.path(), rank1_env); });
  auto first = run_process(fit_command((root / "rank0").string(), job), dir.path(), env(0));
  other.join();
  INFO(first.err);
  CHECK(second.exit_code == 1);
  check_no_crash(second);
  CHECK(file_contains(rank1_err, "the mlp model expects 1 inputs per sample"));
  CHECK(first.exit_code == 1);
  check_no_crash(first);
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof(host) - 1) == 0);
  const std::string error = from_last(first.err, "Error: ");
  CHECK(error.find("Error: distributed ") == 0);
  CHECK(error.find("Where each rank's stderr went: rank 0: with this message (a pipe on " + std::string(host) +
                   "); rank 1: " + rank1_err.string() + " on " + host + ". ") != std::string::npos);
}

// The real torchrun (PyTorch's elastic agent, from the test Python's torch) starts both ranks with
// --no-python; its agent already hosts the TCPStore at MASTER_ADDR:MASTER_PORT
// (TORCHELASTIC_USE_AGENT_STORE), so rank 0 must join it as a client rather than serve one.
TEST_CASE("under the real torchrun --no-python the ranks join torchrun's agent store and train as trainer's launcher",
          "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: no torchrun to start the ranks with", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  const std::vector<std::string> job = {"data.batch_size=32", "trainer.max_steps=10"};
  std::vector<std::string> argv = {
      python,          "-m",        "torch.distributed.run", "--nproc-per-node",          "2",
      "--master-addr", "127.0.0.1", "--master-port",         std::to_string(free_port()), "--no-python"};
  const std::vector<std::string> fit = fit_command((root / "torchrun").string(), job);
  argv.insert(argv.end(), fit.begin(), fit.end());
  auto launched_by_torchrun = run_process(argv, dir.path());
  INFO(launched_by_torchrun.err);
  REQUIRE(launched_by_torchrun.exit_code == 0);
  CHECK(launched_by_torchrun.err.find("rank 0 of 2 (gloo") != std::string::npos);
  CHECK(launched_by_torchrun.err.find("torchrun") != std::string::npos);
  CHECK(launched_by_torchrun.err.find("started ranks") == std::string::npos);  // torchrun started them

  std::vector<std::string> own = job;
  own.push_back("trainer.devices=2");
  auto launched = run_process(fit_command((root / "launched").string(), own), dir.path());
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  // torchrun sets OMP_NUM_THREADS=1, which can change a BLAS's summation order: equal up to rounding.
  const auto a = exported_weights(root / "torchrun");
  const auto b = exported_weights(root / "launched");
  REQUIRE(a.size() == 6);
  CHECK(largest_difference(a, b) <= 1e-5);
}

// Two "nodes" on this machine: one torchrun agent per node (--nnodes 2 --node-rank 0/1) meeting at
// one master address, one rank each, trainer.num_nodes=2: the multi-node path end to end.
TEST_CASE("two torchrun agents as two nodes (--nnodes 2, trainer.num_nodes=2) train as one job", "[may-skip]") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  const std::string python = TRAINER_TEST_PYTHON;
  if (python.empty()) {
    return skip_test("TRAINER_TEST_PYTHON is empty: no torchrun to start the nodes with", Skip::unexpected_in_ci);
  }
  TempDir dir;
  const fs::path root(dir.path());
  const std::string port = std::to_string(free_port());
  const std::vector<std::string> job = {"data.batch_size=32", "trainer.max_steps=10", "trainer.num_nodes=2"};
  auto node = [&](int rank) {
    std::vector<std::string> argv = {
        python, "-m",          "torch.distributed.run", "--nnodes",      "2",         "--nproc-per-node",
        "1",    "--node-rank", std::to_string(rank),    "--master-addr", "127.0.0.1", "--master-port",
        port,   "--no-python"};
    const std::vector<std::string> fit = fit_command((root / ("node" + std::to_string(rank))).string(), job);
    argv.insert(argv.end(), fit.begin(), fit.end());
    return argv;
  };
  ProcessResult second;
  std::thread other([&] { second = run_process(node(1), dir.path()); });
  auto first = run_process(node(0), dir.path());
  other.join();
  INFO(first.err);
  INFO(second.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(first.err.find("rank 0 of 2 (gloo") != std::string::npos);
  CHECK(fs::exists(root / "node0" / "checkpoints" / "last.ckpt"));
  CHECK(!fs::exists(root / "node1" / "checkpoints"));  // global rank 1 writes nothing

  auto launched = run_process(
      fit_command((root / "launched").string(), {"data.batch_size=32", "trainer.max_steps=10", "trainer.devices=2"}),
      dir.path());
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  CHECK(largest_difference(exported_weights(root / "node0"), exported_weights(root / "launched")) <= 1e-5);
}

// A sweep job is a process forked from the sweep process; its ranks must start the job, not the
// sweep again (the launcher hands the job its own command line).
TEST_CASE("a data-parallel job inside a sweep starts its ranks for that job alone") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path sweep = fs::path(dir.path()) / "sweep";
  auto result =
      run_process({TRAINER_BINARY, "fit", "-m", "data=synthetic", "data.num_workers=0", "data.num_samples=512",
                   "trainer.max_epochs=1", "trainer.devices=2", "seed=1,2", "hydra.sweep.dir=sweep"},
                  dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("2 job(s) ended") != std::string::npos);
  for (const char* job : {"0", "1"}) {
    CHECK(file_contains(sweep / job / "trainer.log", "data parallel: 2 ranks"));
    CHECK(file_contains(sweep / ".sweep" / "status" / (std::string(job) + ".yaml"), "status: done"));
  }
  CHECK(!fs::exists(sweep / "2"));  // no third job from a rank re-running the sweep
}

namespace {

// An address as listen_recorder.cpp writes it is on loopback: 127.x.x.x, [::1] or [::ffff:127.x.x.x].
bool loopback(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "[::1]" || address.rfind("[::ffff:127.", 0) == 0;
}

}  // namespace

TEST_CASE("a local 2-rank job listens on the loopback interface only") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path record = fs::path(dir.path()) / "listen.txt";
  // tests/e2e/listen_recorder.cpp, preloaded, records the address of every socket that the trainer
  // and the ranks it starts (they inherit the environment) listen on, however briefly. ASan wants
  // its runtime first among the libraries; the recorder, which only wraps listen(), comes first.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const ScopedEnv preload("LD_PRELOAD", TRAINER_LISTEN_RECORDER);
  const ScopedEnv file("TRAINER_LISTEN_RECORD", record.string());
  const ScopedEnv order("ASAN_OPTIONS", std::string(asan != nullptr ? asan : "") + ":verify_asan_link_order=0");
  auto result = run_process(fit_command(dir.path() + std::string("/sockets"),
                                        {"trainer.devices=2", "trainer.max_steps=4", "test_after_fit=false"}),
                            dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("rendezvous through the private file") != std::string::npos);
  REQUIRE(fs::exists(record));
  std::istringstream lines(read_file(record));
  std::set<std::string> processes;
  int sockets = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string pid, address, port;
    fields >> pid >> address >> port;
    INFO(line);
    processes.insert(pid);
    ++sockets;
    CHECK(loopback(address));  // no socket on a machine's outward interfaces, nor on all of them
  }
  CHECK(processes.size() >= 2);  // both ranks listened for their peer: the recorder saw them
  CHECK(sockets >= 2);

  // GLOO_SOCKET_IFNAME picks the interface, as in PyTorch, and the log names it.
  const ScopedEnv interface("GLOO_SOCKET_IFNAME", "lo");
  fs::remove(record);
  // trainer.master_port is said to be unused here: the ranks meet through a file.
  result = run_process(
      fit_command(dir.path() + std::string("/named"),
                  {"trainer.devices=2", "trainer.max_steps=2", "test_after_fit=false", "trainer.master_port=1"}),
      dir.path());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("Gloo on interface lo (GLOO_SOCKET_IFNAME)") != std::string::npos);
  CHECK(result.err.find("trainer.master_port=1 is not used: the ranks trainer starts on this machine meet through a "
                        "private file") != std::string::npos);
  // The engine line counts this process's threads before the ranks share the cores: said after.
  CHECK(result.err.find("cores shared by the 2 ranks on this machine: ") != std::string::npos);
  const std::string named = read_file(record);
  CHECK(named.find(" 127.0.0.1 ") != std::string::npos);
}

TEST_CASE("a rank stopped with SIGSTOP is caught by the hang watchdog within trainer.hang_timeout") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::string run = dir.path() + std::string("/stalled");
  const std::string marker = "hydra.run.dir=" + run;
  pid_t stopped = -1;
  std::chrono::steady_clock::time_point stopped_at;
  bool signalled = false;
  // The ranks' rendezvous file goes to TMPDIR: the watchdog's exit must not leave it there.
  const fs::path tmp = fs::path(dir.path()) / "tmp";
  fs::create_directories(tmp);
  std::vector<std::string> argv =
      fit_command(run, {"trainer.devices=2", "trainer.max_epochs=50", "data.num_samples=8192", "trainer.hang_timeout=3",
                        "trainer.dist_timeout=00:00:10:00", "test_after_fit=false"});
  argv.insert(argv.begin(), {"/usr/bin/env", "TMPDIR=" + tmp.string()});
  auto result = run_and_signal(
      argv, dir.path(),
      [&] {
        // Both ranks are past their set-up (and their watchdogs beat) once a step is done.
        if (stopped > 0 || !fs::exists(fs::path(run) / "trainer.log") ||
            read_file(fs::path(run) / "trainer.log").find("first training step done") == std::string::npos) {
          return false;
        }
        // Rank 1 is the process whose parent also runs this job.
        std::map<pid_t, pid_t> parents;
        for (const auto& entry : fs::directory_iterator("/proc")) {
          const std::string name = entry.path().filename().string();
          if (name.find_first_not_of("0123456789") != std::string::npos) continue;
          std::ifstream cmdline(entry.path() / "cmdline");
          const std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
          if (text.find(marker) == std::string::npos) continue;
          std::ifstream stat(entry.path() / "stat");
          std::string pid, comm, state, ppid;
          stat >> pid >> comm >> state >> ppid;
          parents[std::stoi(name)] = std::stoi(ppid);
        }
        for (const auto& [pid, parent] : parents) {
          if (parents.count(parent) != 0) {
            stopped = pid;
            stopped_at = std::chrono::steady_clock::now();
            ::kill(pid, SIGSTOP);
          }
        }
        return false;
      },
      SIGTERM, &signalled);
  INFO(result.err);
  REQUIRE(stopped > 0);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(result.err.find("distributed job stalled (rank 0 reports): rank 1 sent no heartbeat for 3 s") !=
        std::string::npos);
  CHECK(result.err.find("rank 0 pid ") != std::string::npos);
  CHECK(result.err.find("rank 1 pid " + std::to_string(stopped) + ", step ") != std::string::npos);
  // What the silent rank wrote: here nothing (its stderr reaches the terminal through rank 0).
  CHECK(from_last(result.err, "Error: ").find("is waited for.\nRank 1 wrote nothing to stderr.") != std::string::npos);
  CHECK(waited < 120);       // not trainer.dist_timeout's 10 minutes
  CHECK(fs::is_empty(tmp));  // no trainer-store-* left behind
  // The stopped rank does not outlive the job (killed with it; reaped by init shortly after).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(stopped) + "/stat");
    std::string pid, comm, state;
    gone = !(stat >> pid >> comm >> state) || state == "Z" || state == "X";
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(gone);
}

// Lightning refuses devices that differ from the tasks srun or torchrun started; the job ran on
// the launcher's count without a word.
TEST_CASE("trainer.devices=3 under srun's 2 tasks is refused, naming both; the default 1 follows srun") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::vector<std::string> slurm = {"SLURM_PROCID=0", "SLURM_NTASKS=2",    "SLURM_LOCALID=0",
                                          "SLURM_NNODES=1", "SLURM_JOB_ID=4242", "SLURM_STEP_ID=0"};
  auto result = run_process(fit_command("run", {"trainer.devices=3"}), dir.path(), slurm, std::chrono::seconds(60));
  check_clean_error(result);
  CHECK(result.err.find("trainer.devices: is 3, but srun started 2 process(es) on this node (world size 2)") !=
        std::string::npos);
  CHECK(result.err.find("Set trainer.devices=2 (or leave it at 1), or start 3 tasks per node (srun "
                        "--ntasks-per-node 3)") != std::string::npos);
  auto torchrun = run_process(fit_command("run", {"trainer.devices=4"}), dir.path(),
                              {"RANK=0", "WORLD_SIZE=4", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                               "MASTER_PORT=1", "TORCHELASTIC_RUN_ID=x"},
                              std::chrono::seconds(60));
  check_clean_error(torchrun);
  CHECK(torchrun.err.find("trainer.devices: is 4, but torchrun started 2 process(es) on this node (world size 4)") !=
        std::string::npos);
}

TEST_CASE("2 CUDA devices asked where none is visible: the fix offered is one that runs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(fit_command("run", {"trainer.devices=2", "trainer.accelerator=gpu"}), dir.path());
  INFO(result.err);
  if (!contains(result.err, "only 0 CUDA device(s) are visible")) {
    return skip_test("a CUDA device is visible here", Skip::expected);
  }
  check_clean_error(result);
  // It advised trainer.devices=0 or fewer, which is refused (trainer.devices is at least 1).
  CHECK_FALSE(contains(result.err, "trainer.devices=0"));
  CHECK(contains(result.err, "Run on the CPU (trainer.accelerator=cpu)"));
}
