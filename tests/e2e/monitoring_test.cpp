// Profiling and monitoring in the real trainer binary: trainer.profiler=simple
// (src/engine/profiling/phase_profiler.cpp) writes the phase table to the log and <run dir>/fit-profiler.txt
// with one count per step for the per-step phases (and says why there is no copy row on the CPU),
// and refuses a profiler that does not exist (trainer.profiler=pytorch: trace_profiler_test.cpp);
// the throughput columns (samples, batches and FLOPs per second) and callbacks.device_stats_monitor
// land in metrics.csv; a CPU run has no MFU and says nothing about NVML.
#include <csignal>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;  // this test executable (and so trainer) built with ASan
#else
constexpr bool kAddressSanitizer = false;
#endif

// The count column of the row whose phase starts with `phase`; -1 when there is no such row.
long long phase_count(const std::string& table, const std::string& phase) {
  const std::regex row("\\| " + phase + "[^|]*\\| (\\d+) \\| [0-9.]+ ms \\| [0-9.]+ s \\| [0-9.]+ % \\|");
  std::smatch match;
  if (!std::regex_search(table, match, row)) return -1;
  return std::stoll(match[1].str());
}

}  // namespace

TEST_CASE("profiler=simple: a table of time per phase, in the log and in the run directory") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // 2 epochs x 6 batches: 12 steps, logging every 4th, validation at each epoch's end.
  auto result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "trainer.profiler=simple",
                             "trainer.max_epochs=2", "trainer.limit_train_batches=6", "trainer.limit_val_batches=2",
                             "trainer.log_every_n_steps=4", "test_after_fit=false", "hydra.run.dir=run"},
                            dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const fs::path table_file = fs::path(dir.path()) / "run" / "fit-profiler.txt";
  REQUIRE(fs::exists(table_file));
  const std::string table = read_file(table_file);
  INFO(table);
  CHECK(phase_count(table, "waiting for data") == 12);
  CHECK(phase_count(table, "forward") == 12);
  CHECK(phase_count(table, "backward") == 12);
  CHECK(phase_count(table, "optimizer step") == 12);
  CHECK(phase_count(table, "logging") == 3);
  CHECK(phase_count(table, "validation") == 2);
  CHECK(phase_count(table, "checkpoint") >= 2);            // last.ckpt and the best, every epoch
  CHECK(phase_count(table, "gradient all-reduce") == -1);  // one process: no such phase
  // The copy to the device has its own row where the training thread makes it; on the CPU there
  // is no copy, and the table says so instead of showing a number.
  CHECK(phase_count(table, "host-to-device copy") == -1);
  CHECK(contains(table, "| host-to-device copy: none, the device is the CPU (batches stay in host memory) | | | | |"));
  CHECK(std::regex_search(table, std::regex("\\| other [^|]*\\| \\| \\| [0-9.]+ s \\|")));
  CHECK(std::regex_search(table, std::regex("\\| fit \\| \\| \\| [0-9.]+ s \\| 100 % \\|")));
  // The same table closes the job's log.
  const std::string log = read_file(fs::path(dir.path()) / "run" / "trainer.log");
  CHECK(contains(log, "profiler (simple): time per phase of fit"));
  CHECK(contains(log, "| backward | 12 |"));
}

TEST_CASE("profiler=simple: a fit stopped by SIGTERM still writes its table") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path log = fs::path(dir.path()) / "run" / "trainer.log";
  bool stopped = false;
  // Ctrl-C or SIGTERM is how a profiled run is often ended: the table was lost with it.
  auto result = run_and_signal(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "trainer.profiler=simple",
       "trainer.max_epochs=100", "trainer.log_every_n_steps=1", "test_after_fit=false", "hydra.run.dir=run"},
      dir.path(), [&] { return contains(read_file(log), " step 5 "); }, SIGTERM, &stopped);
  INFO(result.err);
  REQUIRE(stopped);
  check_clean_error(result);
  const fs::path table_file = fs::path(dir.path()) / "run" / "fit-profiler.txt";
  REQUIRE(fs::exists(table_file));
  CHECK(phase_count(read_file(table_file), "forward") >= 5);
}

TEST_CASE("profiler: off by default, and an unknown profiler is refused before training") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir plain;
  auto result = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "debug=fdr", "hydra.run.dir=run"}, plain.path());
  REQUIRE(result.exit_code == 0);
  CHECK_FALSE(fs::exists(fs::path(plain.path()) / "run" / "fit-profiler.txt"));

  TempDir bad;
  result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "debug=fdr",
                        "trainer.profiler=advanced", "hydra.run.dir=run"},
                       bad.path());
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(contains(result.err, "trainer.profiler"));
  CHECK(contains(result.err, "advanced is not one of simple or pytorch"));
  CHECK(contains(result.err, "simple: time per phase"));
  CHECK(contains(result.err, "pytorch: a Chrome trace"));
  CHECK_FALSE(fs::exists(fs::path(bad.path()) / "run" / "checkpoints"));
}

TEST_CASE("monitors: batches/s beside samples/s, and device_stats_monitor's memory and CPU columns") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  // batch_size 64: samples/s is 64 x batches/s in every row.
  auto result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "data.batch_size=64",
                             "trainer.max_epochs=1", "trainer.limit_train_batches=8", "trainer.log_every_n_steps=4",
                             "test_after_fit=false", "+callbacks.device_stats_monitor={}", "hydra.run.dir=run"},
                            dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const CsvTable csv = read_csv(fs::path(dir.path()) / "run" / "metrics.csv");
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < csv.columns.size(); ++i) {
      if (csv.columns[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int samples = column("samples_per_sec");
  const int batches = column("batches_per_sec");
  const int rss = column("device_stats/host_rss_mb");
  const int peak = column("device_stats/host_peak_rss_mb");
  const int cpu = column("device_stats/cpu_percent");
  REQUIRE(samples >= 0);
  REQUIRE(batches >= 0);
  REQUIRE(rss >= 0);
  REQUIRE(peak >= 0);
  REQUIRE(cpu >= 0);
  CHECK(column("device_stats/cuda_allocated_mb") == -1);  // CPU run: no CUDA counters
  int throughput_rows = 0;
  int stats_rows = 0;
  for (const auto& row : csv.rows) {
    auto cell = [&](int index) { return row.at(static_cast<size_t>(index)); };
    if (!cell(samples).empty()) {
      ++throughput_rows;
      const double per_batch = std::stod(cell(batches));
      CHECK(per_batch > 0);
      CHECK(std::stod(cell(samples)) == Approx(64 * per_batch).epsilon(1e-9));
    }
    if (!cell(rss).empty()) {
      ++stats_rows;
      const double rss_mb = std::stod(cell(rss));
      CHECK(rss_mb > 50);     // LibTorch alone is well over 50 MiB resident
      CHECK(rss_mb < 16384);  // and a tiny MLP far under 16 GiB: the unit is MiB, not bytes or KiB
      CHECK(std::stod(cell(peak)) >= rss_mb);
      const double cpu_percent = std::stod(cell(cpu));
      CHECK(cpu_percent > 0);
      CHECK(cpu_percent < 100.0 * 64);
    }
  }
  CHECK(throughput_rows == 2);  // steps 4 and 8
  CHECK(stats_rows == 2);

  TempDir bad;
  result = run_process(
      {TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "trainer.max_epochs=1",
       "trainer.limit_train_batches=2", "+callbacks.device_stats_monitor.cpu_stats=maybe", "hydra.run.dir=run"},
      bad.path());
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(contains(result.err, "callbacks.device_stats_monitor.cpu_stats"));
}

TEST_CASE("throughput: flops_per_sec is 3 x the counted forward FLOPs x samples/s; on the CPU no mfu, no NVML") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  struct Case {
    std::string model;
    double forward_flops;  // per sample, by hand
    std::string log_text;
  };
  const std::vector<Case> cases = {// 784 -> 256 -> 128 -> 10
                                   {"mlp", 2.0 * (784 * 256 + 256 * 128 + 128 * 10),
                                    "model: 470 kFLOPs per sample forward, 1.41 MFLOPs per sample per training step"},
                                   // conv 1->32 and 32->64 (3x3, 28x28 then 14x14), linear 3136->128->10
                                   {"cnn", 2.0 * (32 * 9 * 28 * 28 + 32 * 64 * 9 * 14 * 14 + 3136 * 128 + 128 * 10),
                                    "model: 8.48 MFLOPs per sample forward, 25.4 MFLOPs per sample per training step"}};
  for (const Case& c : cases) {
    INFO(c.model);
    TempDir dir;
    auto result = run_process(
        {TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "data.batch_size=32", "model=" + c.model,
         "trainer.max_epochs=1", "trainer.limit_train_batches=4", "trainer.log_every_n_steps=2", "test_after_fit=false",
         "+callbacks.device_stats_monitor={}", "hydra.run.dir=run"},
        dir.path());
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    const std::string log = read_file(fs::path(dir.path()) / "run" / "trainer.log");
    CHECK(contains(log, c.log_text));
    CHECK(contains(log, "counted from the matrix products and convolutions of one sample's forward pass"));
    CHECK(std::regex_search(log, std::regex("samples/s [0-9.]+ [kMGT]?FLOP/s\\n")));
    CHECK_FALSE(contains(log, "MFU"));
    CHECK_FALSE(contains(log, "NVML"));
    const CsvTable csv = read_csv(fs::path(dir.path()) / "run" / "metrics.csv");
    int samples = -1;
    int flops = -1;
    for (size_t i = 0; i < csv.columns.size(); ++i) {
      if (csv.columns[i] == "samples_per_sec") samples = static_cast<int>(i);
      if (csv.columns[i] == "flops_per_sec") flops = static_cast<int>(i);
      CHECK(csv.columns[i] != "mfu");
      CHECK(csv.columns[i].find("nvml") == std::string::npos);
    }
    REQUIRE(samples >= 0);
    REQUIRE(flops >= 0);
    int rows = 0;
    for (const auto& row : csv.rows) {
      if (row.at(static_cast<size_t>(samples)).empty()) continue;
      ++rows;
      CHECK(std::stod(row.at(static_cast<size_t>(flops))) ==
            Approx(3 * c.forward_flops * std::stod(row.at(static_cast<size_t>(samples)))).epsilon(1e-9));
    }
    CHECK(rows == 2);
  }
}

TEST_CASE("out of memory: one paragraph naming the batch, the model, the memory and the fix, no stack trace") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  // The CPU's allocation failures, made certain by an address-space limit (12 GB) below the first
  // convolution's output (8192 x 512 x 28 x 28 floats = 13 GB), so that the test never leans on the
  // machine's real memory. Under AddressSanitizer, whose shadow memory an address-space limit
  // forbids, ASan's own allocator refuses the same sizes (max_allocation_size_mb) and returns null
  // as malloc would.
  const std::string limited =
      kAddressSanitizer
          ? "export "
            "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=12000\" "
            "&& exec \"$0\" \"$@\""
          : "ulimit -v 12000000 && exec \"$0\" \"$@\"";
  // ASan says so when its allocator refuses (and returns null, as asked): that line is the limit
  // at work, not a crash, and is dropped before looking for crash signatures.
  const auto without_refusals = [](ProcessResult r) {
    std::string kept;
    size_t start = 0;
    while (start < r.err.size()) {
      size_t end = r.err.find('\n', start);
      end = end == std::string::npos ? r.err.size() : end + 1;
      const std::string line = r.err.substr(start, end - start);
      if (line.find("WARNING: AddressSanitizer failed to allocate") == std::string::npos) kept += line;
      start = end;
    }
    r.err = kept;
    return r;
  };
  TempDir dir;
  auto result = run_process({"/bin/sh", "-c", limited, TRAINER_BINARY, "fit", "data=synthetic", "data.num_samples=9000",
                             "data.batch_size=8192", "data.num_workers=0", "model=cnn", "model.channels=[512,8]",
                             "trainer.max_epochs=1", "test_after_fit=false", "hydra.run.dir=run"},
                            dir.path());
  INFO(result.err);
  CHECK(result.exit_code != 0);
  check_no_crash(without_refusals(result));
  CHECK(contains(result.err, "data.batch_size: out of memory on the host during fit (batch size 8192, model=cnn with"));
  CHECK(contains(result.err, "peak"));
  CHECK(contains(result.err, "you tried to allocate"));  // LibTorch's own first line
  CHECK(contains(result.err, "data.batch_size=4096"));
  CHECK(contains(result.err, "trainer.accumulate_grad_batches=2"));
  CHECK(contains(result.err, "precision=bf16-mixed"));
  CHECK_FALSE(contains(result.err, "frame #"));  // no LibTorch backtrace
  CHECK_FALSE(contains(result.err, "Exception raised from"));

  TempDir model;
  result = run_process({"/bin/sh", "-c", limited, TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0",
                        "model.hidden_sizes=[20000000]", "trainer.max_epochs=1", "hydra.run.dir=run"},
                       model.path());
  INFO(result.err);
  CHECK(result.exit_code != 0);
  check_no_crash(without_refusals(result));
  CHECK(contains(result.err, "model: out of memory on the host while building model=mlp"));
  CHECK(contains(result.err, "Make the model smaller"));
}
