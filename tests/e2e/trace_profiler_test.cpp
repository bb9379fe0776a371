// trainer.profiler=pytorch in the real trainer binary (src/engine/profiling/trace_profiler.cpp): the trace
// JSON it writes loads as Chrome trace format, holds our "train_step#N" ranges for exactly the
// steps the schedule records, each with its phases nested inside and in order, and LibTorch's
// operators inside forward. A window fit never reaches, and a bad schedule, are reported.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

struct Range {
  std::string name;
  std::string tid;  // as text: Kineto writes numbers, other tools strings
  double start = 0;
  double end = 0;
};

// Timestamps are microseconds; Debian's LibTorch reports whole microseconds, so an end can be
// rounded past its parent's by up to one.
constexpr double kRounding = 1.0;

bool inside(const Range& inner, const Range& outer) {
  return inner.tid == outer.tid && inner.start >= outer.start && inner.end <= outer.end + kRounding;
}

std::vector<Range> complete_events(const nlohmann::json& trace) {
  std::vector<Range> out;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.value("ph", "") != "X") continue;
    Range r;
    r.name = event.at("name").get<std::string>();
    r.tid = event.at("tid").dump();
    REQUIRE(event.at("ts").is_number());
    REQUIRE(event.at("dur").is_number());
    REQUIRE(event.contains("pid"));
    r.start = event.at("ts").get<double>();
    r.end = r.start + event.at("dur").get<double>();
    out.push_back(r);
  }
  return out;
}

// debug=trace turns the profiler on; the schedule here: 2 steps waiting, 1 warming up, 2 recorded
// (steps 3 and 4 of 8).
std::vector<std::string> window_fit() {
  return {TRAINER_BINARY,
          "fit",
          "data=synthetic",
          "data.num_workers=0",
          "debug=trace",
          "trainer.profiler_schedule.wait=2",
          "trainer.profiler_schedule.active=2",
          "trainer.limit_train_batches=8",
          "trainer.limit_val_batches=2",
          "trainer.log_every_n_steps=100",
          "test_after_fit=false",
          "hydra.run.dir=run"};
}

}  // namespace

TEST_CASE(
    "profiler=pytorch: a Chrome trace of exactly the scheduled steps, phases nested around "
    "LibTorch's operators") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  auto result = run_process(window_fit(), dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const fs::path trace_file = fs::path(dir.path()) / "run" / "fit-trace.json";
  REQUIRE(fs::exists(trace_file));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / "fit-trace.json.partial"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "run" / "fit-profiler.txt"));  // that is profiler=simple
  const std::string log = read_file(fs::path(dir.path()) / "run" / "trainer.log");
  CHECK(contains(log, "profiler (pytorch): training steps 3-4 traced to"));

  const nlohmann::json trace = nlohmann::json::parse(read_file(trace_file));
  REQUIRE(trace.at("traceEvents").is_array());
  const std::vector<Range> events = complete_events(trace);

  std::vector<Range> steps;
  std::map<std::string, std::vector<Range>> phases;
  const std::set<std::string> phase_names = {"data",    "h2d_copy",   "forward",    "backward",       "optimizer",
                                             "logging", "validation", "checkpoint", "all_reduce_wait"};
  for (const Range& e : events) {
    if (e.name.rfind("train_step#", 0) == 0) steps.push_back(e);
    if (phase_names.count(e.name) != 0) phases[e.name].push_back(e);
  }
  std::sort(steps.begin(), steps.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  std::vector<std::string> step_names;
  for (const Range& s : steps) step_names.push_back(s.name);
  CHECK(step_names == std::vector<std::string>{"train_step#3", "train_step#4"});
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].end <= steps[1].start + kRounding);

  // Every phase range belongs to a recorded step: none from the waiting or warm-up steps.
  for (const auto& [name, ranges] : phases) {
    for (const Range& r : ranges) {
      INFO(name << " at " << r.start);
      CHECK((inside(r, steps[0]) || inside(r, steps[1])));
    }
  }
  // One CPU run without loader workers: no copy to a device, no all-reduce.
  CHECK(phases.count("h2d_copy") == 0);
  CHECK(phases.count("all_reduce_wait") == 0);

  const std::set<std::string> matmuls = {"aten::addmm", "aten::linear", "aten::matmul", "aten::mm"};
  for (const Range& step : steps) {
    INFO(step.name);
    // data, forward, backward, optimizer: once each per step, in this order, not overlapping.
    std::vector<Range> sequence;
    for (const char* name : {"data", "forward", "backward", "optimizer"}) {
      std::vector<Range> mine;
      for (const Range& r : phases[name]) {
        if (inside(r, step)) mine.push_back(r);
      }
      INFO(name);
      REQUIRE(mine.size() == 1);
      sequence.push_back(mine.front());
    }
    for (size_t i = 1; i < sequence.size(); ++i) {
      INFO(sequence[i - 1].name << " then " << sequence[i].name);
      CHECK(sequence[i - 1].end <= sequence[i].start + kRounding);
    }
    // LibTorch's operators: a matrix product inside forward, and backward's operators inside
    // backward.
    const Range& forward = sequence[1];
    const Range& backward = sequence[2];
    int forward_matmuls = 0;
    int backward_ops = 0;
    for (const Range& e : events) {
      if (matmuls.count(e.name) != 0 && inside(e, forward)) ++forward_matmuls;
      if (e.name.rfind("aten::", 0) == 0 && inside(e, backward)) ++backward_ops;
    }
    CHECK(forward_matmuls >= 1);
    CHECK(backward_ops >= 1);
  }
}

TEST_CASE(
    "profiler=pytorch: a window past the end of fit writes nothing and says so; a bad schedule is "
    "refused") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir late;
  auto result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "debug=trace",
                             "trainer.profiler_schedule.wait=10", "trainer.limit_train_batches=4",
                             "trainer.limit_val_batches=1", "test_after_fit=false", "hydra.run.dir=run"},
                            late.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_FALSE(fs::exists(fs::path(late.path()) / "run" / "fit-trace.json"));
  const std::string log = read_file(fs::path(late.path()) / "run" / "trainer.log");
  CHECK(contains(log, "fit ended after 4 training step(s), before the traced window (steps 11-13)"));

  TempDir bad;
  result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "debug=trace",
                        "trainer.profiler_schedule.active=0", "hydra.run.dir=run"},
                       bad.path());
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(contains(result.err,
                 "trainer.profiler_schedule.active (override 'trainer.profiler_schedule.active=0'): 0 is out of range: "
                 "steps recorded, at least 1"));

  TempDir typo;
  result = run_process({TRAINER_BINARY, "fit", "data=synthetic", "data.num_workers=0", "debug=trace",
                        "+trainer.profiler_schedule.activ=2", "hydra.run.dir=run"},
                       typo.path());
  CHECK(result.exit_code != 0);
  check_no_crash(result);
  CHECK(contains(result.err, "trainer.profiler_schedule.activ"));
  CHECK(contains(result.err, "active"));
}

TEST_CASE("profiler=pytorch in a CUDA build: the same steps and phases as nested NVTX ranges", "[may-skip]") {
#ifndef TRAINER_NVTX_RECORDER
  skip_test("a build without CUDA (Debian's LibTorch) pushes no NVTX ranges", Skip::expected);
#else
  TempDir dir;
  const fs::path record = fs::path(dir.path()) / "nvtx.txt";
  // The NVTX headers compiled into the trainer load the tool named by NVTX_INJECTION64_PATH at the
  // first NVTX call, as Nsight Systems does; the child inherits this process's environment.
  ::setenv("NVTX_INJECTION64_PATH", TRAINER_NVTX_RECORDER, 1);
  ::setenv("TRAINER_NVTX_RECORD", record.c_str(), 1);
  auto result = run_process(window_fit(), dir.path());
  ::unsetenv("NVTX_INJECTION64_PATH");
  ::unsetenv("TRAINER_NVTX_RECORD");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  REQUIRE(fs::exists(record));

  // Replay the pushes and pops: balanced, the steps at the outer level, the phases inside them.
  std::vector<std::string> open;
  std::vector<std::string> steps;
  std::map<std::string, std::vector<std::string>> phases_of_step;  // step -> its direct phases, in order
  std::istringstream lines(read_file(record));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("push ", 0) == 0) {
      const std::string name = line.substr(5);
      if (name.rfind("train_step#", 0) == 0) {
        CHECK(open.empty());  // a step is never inside another range
        steps.push_back(name);
      } else if (open.size() == 1) {
        phases_of_step[open.front()].push_back(name);
      }
      open.push_back(name);
    } else {
      REQUIRE(line == "pop");
      REQUIRE_FALSE(open.empty());
      open.pop_back();
    }
  }
  CHECK(open.empty());
  // Only the recorded window, as in the trace: steps 3 and 4 of 8.
  CHECK(steps == std::vector<std::string>{"train_step#3", "train_step#4"});
  for (const std::string& step : steps) {
    INFO(step);
    std::vector<std::string> core;
    for (const std::string& phase : phases_of_step[step]) {
      if (phase == "data" || phase == "forward" || phase == "backward" || phase == "optimizer") core.push_back(phase);
    }
    CHECK(core == std::vector<std::string>{"data", "forward", "backward", "optimizer"});
  }
#endif
}
