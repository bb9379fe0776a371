// The sweepers behind hydra/sweeper: basic (the grid, unchanged), random and asha (sampling).
#include "trainer/config/sweeper.h"

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/builtin_hydra_configs.h"
#include "trainer/config/python_str.h"
#include "trainer/config/random_sweep.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

namespace {

using trainer::config::GroupOptionsLookup;
using trainer::config::make_sweep_jobs;
using trainer::config::Node;
using trainer::config::Override;
using trainer::config::parse_override;
using trainer::config::SweepJob;
using Params = std::vector<std::pair<std::string, std::string>>;
using Lines = std::vector<std::string>;

std::vector<Override> parse_all(const Lines& texts) {
  std::vector<Override> out;
  for (const auto& text : texts) out.push_back(parse_override(text));
  return out;
}

const GroupOptionsLookup kGroups = [](const std::string& group) -> std::optional<Lines> {
  if (group == "model") return Lines{"cnn", "mlp", "resnet"};
  return std::nullopt;
};

// The built-in hydra/sweeper/<name> config with some settings changed.
Node sweeper_node(const std::string& name, const std::map<std::string, Node>& settings = {}) {
  for (const auto& [config_name, text] : trainer::config::builtin_hydra_configs()) {
    const std::string config_path(config_name);
    if (config_path == "hydra/sweeper/" + name) {
      Node node = trainer::config::load_yaml_string(text, config_path).root;
      for (const auto& [key, value] : settings) node.set(key, value);
      return node;
    }
  }
  FAIL("no built-in hydra/sweeper/" << name);
  return Node();
}

Node random_sweeper(int64_t num_samples, int64_t seed = 0) {
  return sweeper_node("random", {{"num_samples", Node::integer(num_samples)}, {"seed", Node::integer(seed)}});
}

std::vector<SweepJob> sample(const Lines& overrides, int64_t num_samples, int64_t seed = 0, const Params& params = {}) {
  return make_sweep_jobs(random_sweeper(num_samples, seed), parse_all(overrides), params, kGroups);
}

// The override `key=...` of a job, parsed back as the job will parse it.
Override value_of(const SweepJob& job, const std::string& key) {
  for (const std::string& text : job.overrides) {
    if (text.compare(0, key.size() + 1, key + "=") == 0) return parse_override(text);
  }
  FAIL("job " << job.number << " has no override of " << key);
  return Override();
}

template <typename F>
void expect_error(F&& f, const std::string& where, const std::string& problem_part) {
  try {
    f();
    FAIL("accepted; expected an error at " << where);
  } catch (const trainer::Error& e) {
    CHECK(e.where() == where);
    CHECK_THAT(e.problem(), Catch::Contains(problem_part));
    CHECK_FALSE(e.fix().empty());
  }
}

}  // namespace

TEST_CASE("the basic sweeper gives exactly expand_sweep's grid") {
  const auto overrides = parse_all({"a=1,2", "b=range(0,3)", "x=5", "hydra.sweep.dir=m"});
  const Params params = {{"c", "x,y"}};
  const auto grid = trainer::config::expand_sweep(overrides, params, kGroups);
  REQUIRE(grid.size() == 12);
  for (const Node& node : {sweeper_node("basic"), Node()}) {
    const auto jobs = make_sweep_jobs(node, overrides, params, kGroups);
    REQUIRE(jobs.size() == grid.size());
    for (size_t k = 0; k < jobs.size(); ++k) {
      CHECK(jobs[k].number == grid[k].number);
      CHECK(jobs[k].overrides == grid[k].overrides);
    }
  }
  // asha without num_samples runs the grid too.
  const auto asha = make_sweep_jobs(sweeper_node("asha"), overrides, params, kGroups);
  REQUIRE(asha.size() == grid.size());
  CHECK(asha.back().overrides == grid.back().overrides);
}

TEST_CASE("random search draws num_samples jobs, keeps fixed overrides, orders slots like the grid") {
  const auto jobs = sample({"a=1,2,3", "x=1e3", "+extra=hello", "hydra.sweep.dir=m", "b=choice(p,q)"}, 7, 3,
                           {{"b", "r,s"}, {"c", "interval(0,1)"}});
  REQUIRE(jobs.size() == 7);
  for (size_t k = 0; k < jobs.size(); ++k) {
    const SweepJob& job = jobs[k];
    CHECK(job.number == static_cast<int>(k));
    // params first (b replaced in place by the command line's b), then the command line.
    REQUIRE(job.overrides.size() == 6);
    CHECK(job.overrides[0].rfind("b=", 0) == 0);
    CHECK(job.overrides[1].rfind("c=", 0) == 0);
    CHECK(job.overrides[2].rfind("a=", 0) == 0);
    CHECK(job.overrides[3] == "x=1000.0");
    CHECK(job.overrides[4] == "+extra=hello");
    CHECK(job.overrides[5] == "hydra.sweep.dir=m");
    const std::string b = value_of(job, "b").value.as_string();
    CHECK((b == "p" || b == "q"));
  }
}

TEST_CASE("interval(a,b) samples floats uniformly in [a, b), written back as Python prints them") {
  const auto jobs = sample({"lr=interval(0.5,2.5)"}, 4000, 11);
  int low_half = 0;
  double sum = 0;
  std::set<std::string> distinct;
  for (const SweepJob& job : jobs) {
    const Override lr = value_of(job, "lr");
    REQUIRE(lr.value.type() == trainer::config::NodeType::kFloat);
    const double x = lr.value.as_float();
    CHECK(x >= 0.5);
    CHECK(x < 2.5);
    CHECK(job.overrides[0] == "lr=" + trainer::config::python_float_repr(x));
    low_half += x < 1.5;
    sum += x;
    distinct.insert(job.overrides[0]);
  }
  CHECK(distinct.size() > 3990);
  // 4000 uniform draws: mean 1.5 with standard error 0.009; half below the middle +- 32.
  CHECK(std::abs(sum / 4000 - 1.5) < 0.05);
  CHECK(std::abs(low_half - 2000) < 200);
}

TEST_CASE("tag(log, interval(a,b)) is log-uniform: every decade gets its share") {
  const auto jobs = sample({"optimizer.lr=tag(log, interval(1e-5, 0.1))"}, 4000, 5);
  int decade[4] = {0, 0, 0, 0};
  for (const SweepJob& job : jobs) {
    const double x = value_of(job, "optimizer.lr").value.as_float();
    REQUIRE(x >= 1e-5);
    REQUIRE(x < 0.1);
    const int d = static_cast<int>(std::floor(std::log10(x) + 5));
    decade[std::min(std::max(d, 0), 3)]++;
  }
  // Uniform sampling would put 90% into the last decade; log-uniform puts a quarter in each.
  for (int count : decade) {
    CHECK(count > 800);
    CHECK(count < 1200);
  }
  // Small values are written in Python's exponent form, e.g. 3.1622776601683795e-05.
  bool saw_exponent = false;
  for (const SweepJob& job : jobs) saw_exponent = saw_exponent || job.overrides[0].find("e-05") != std::string::npos;
  CHECK(saw_exponent);
}

TEST_CASE("int(interval(a,b)) samples integers in [a, b], both ends included") {
  const auto jobs = sample({"trainer.max_epochs=int(interval(1,4))", "h=tag(log,int(interval(1,1000)))"}, 2000, 9);
  std::map<int64_t, int> counts;
  int below_32 = 0;
  for (const SweepJob& job : jobs) {
    const Override epochs = value_of(job, "trainer.max_epochs");
    REQUIRE(epochs.value.type() == trainer::config::NodeType::kInt);
    counts[epochs.value.as_int()]++;
    const Override h = value_of(job, "h");
    REQUIRE(h.value.type() == trainer::config::NodeType::kInt);
    CHECK(h.value.as_int() >= 1);
    CHECK(h.value.as_int() <= 1000);
    below_32 += h.value.as_int() < 32;
  }
  REQUIRE(counts.size() == 4);
  CHECK(counts.begin()->first == 1);
  CHECK(counts.rbegin()->first == 4);
  for (const auto& [value, count] : counts) CHECK(std::abs(count - 500) < 100);
  // log-uniform over [1, 1001): half the mass below sqrt(1001) ~ 31.6.
  CHECK(std::abs(below_32 - 1000) < 120);
}

TEST_CASE("choice, a,b,c, range and glob sample one of their values uniformly") {
  const auto jobs = sample({"a=x,y,z", "b=choice(1,2)", "c=range(10,20,5)", "model=glob(*n*)"}, 600, 2);
  std::map<std::string, int> seen;
  for (const SweepJob& job : jobs) {
    for (const std::string& text : job.overrides) seen[text]++;
  }
  const std::set<std::string> expected = {"a=x",  "a=y",  "a=z",       "b=1",         "b=2",
                                          "c=10", "c=15", "model=cnn", "model=resnet"};
  std::set<std::string> keys;
  for (const auto& [text, count] : seen) keys.insert(text);
  CHECK(keys == expected);
  CHECK(std::abs(seen["a=x"] - 200) < 60);
  CHECK(std::abs(seen["c=15"] - 300) < 60);
}

TEST_CASE("random search is reproducible from the seed with a documented, portable generator") {
  const Lines overrides = {"a=interval(0,1)", "b=x,y,z", "c=int(interval(0,1000000))"};
  const auto first = sample(overrides, 50, 1234);
  const auto again = sample(overrides, 50, 1234);
  const auto other = sample(overrides, 50, 1235);
  REQUIRE(first.size() == 50);
  for (size_t k = 0; k < first.size(); ++k) CHECK(first[k].overrides == again[k].overrides);
  int same = 0;
  for (size_t k = 0; k < first.size(); ++k) same += first[k].overrides == other[k].overrides;
  CHECK(same < 5);

  // The arithmetic is the documented one on top of std::mt19937_64, whose outputs the C++
  // standard fixes: job 0's `a` is the top 53 bits of the first output times 2^-53.
  std::mt19937_64 engine(1234);
  const double u = static_cast<double>(engine() >> 11) * 0x1.0p-53;
  CHECK(first[0].overrides[0] == "a=" + trainer::config::python_float_repr(u));
  trainer::config::SweepRandom random(1234);
  CHECK(random.uniform01() == u);
  // The standard's check value: the 10000th output of a default-seeded mt19937_64.
  std::mt19937_64 standard;
  standard.discard(9999);
  CHECK(standard() == 9981545732273789042ull);
}

TEST_CASE("sampling errors name the setting or the override and say how to fix it") {
  expect_error([] { sample({"a=1,2"}, 0); }, "hydra.sweeper.num_samples", "num_samples is 0");
  expect_error([] { sample({"lr=tag(log,interval(0,1))"}, 3); }, "override 'lr=tag(log,interval(0,1))'",
               "needs bounds above zero");
  expect_error([] { sample({"lr=interval(2,1)"}, 3); }, "override 'lr=interval(2,1)'", "starts above its end");
  expect_error([] { sample({"lr=interval(0,inf)"}, 3); }, "override 'lr=interval(0,inf)'", "not a finite number");
  expect_error([] { sample({"n=tag(log,int(interval(0,8)))"}, 3); }, "override 'n=tag(log,int(interval(0,8)))'",
               "needs bounds of 1 or more");
  expect_error([] { sample({"n=range(5,1)"}, 3); }, "override 'n=range(5,1)'", "no values to sample");
  expect_error([] { sample({"x=glob(*)"}, 3); }, "override 'x=glob(*)'", "not a config group");
  expect_error(
      [] {
        sample({}, 3, 0, {{"lr", "tag(log,interval(-1,1))"}});
      },
      "hydra.sweeper.params.lr", "needs bounds above zero");
  expect_error(
      [] {
        make_sweep_jobs(sweeper_node("random", {{"seed", Node()}}), parse_all({"a=1,2"}), {}, kGroups);
      },
      "hydra.sweeper.seed", "needs a seed");
  expect_error(
      [] {
        make_sweep_jobs(sweeper_node("random", {{"num_samples", Node::string("many")}}), parse_all({"a=1,2"}), {},
                        kGroups);
      },
      "hydra.sweeper.num_samples", "expected an integer");
  expect_error(
      [] {
        make_sweep_jobs(sweeper_node("basic", {{"_target_", Node::string("hydra_plugins.x.OptunaSweeper")}}),
                        parse_all({"a=1,2"}), {}, kGroups);
      },
      "hydra.sweeper._target_", "no sweeper 'hydra_plugins.x.OptunaSweeper'");
  // The grid still refuses interval(): it cannot be enumerated.
  expect_error([] { make_sweep_jobs(Node(), parse_all({"lr=interval(0,1)"}), {}, kGroups); },
               "override 'lr=interval(0,1)'", "cannot enumerate");
}

TEST_CASE("asha with num_samples samples like random") {
  const Node asha = sweeper_node("asha", {{"num_samples", Node::integer(5)}, {"seed", Node::integer(7)}});
  const auto jobs = make_sweep_jobs(asha, parse_all({"lr=tag(log,interval(1e-4,1e-1))", "seed=1,2"}), {}, kGroups);
  const auto random = sample({"lr=tag(log,interval(1e-4,1e-1))", "seed=1,2"}, 5, 7);
  REQUIRE(jobs.size() == 5);
  for (size_t k = 0; k < jobs.size(); ++k) CHECK(jobs[k].overrides == random[k].overrides);
}
