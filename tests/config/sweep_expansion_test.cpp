// Multirun expansion checked against what Hydra 1.3's basic sweeper wrote into each job's
// .hydra/overrides.yaml (observed with a small app, hydra.sweeper.params in its config), and the
// values one sweep override enumerates (sweep_value_texts).
#include "trainer/config/sweep_expansion.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

namespace {

using trainer::config::expand_sweep;
using trainer::config::GroupOptionsLookup;
using trainer::config::is_hydra_override;
using trainer::config::Override;
using trainer::config::parse_override;
using trainer::config::SweepJob;
using Params = std::vector<std::pair<std::string, std::string>>;
using Lines = std::vector<std::string>;

// The values one override enumerates, shuffle seeded with 0.
std::vector<std::string> texts(const std::string& text, const std::vector<std::string>* options = nullptr) {
  std::mt19937_64 rng(0);
  return trainer::config::sweep_value_texts(parse_override(text), options, rng);
}

std::vector<Override> parse_all(const Lines& texts) {
  std::vector<Override> out;
  for (const auto& text : texts) out.push_back(parse_override(text));
  return out;
}

// What Hydra writes to overrides.yaml: the job's overrides minus Hydra's own.
Lines overrides_yaml(const SweepJob& job) {
  Lines out;
  for (const auto& o : job.overrides) {
    if (!is_hydra_override(o)) out.push_back(o);
  }
  return out;
}

const GroupOptionsLookup kGroups = [](const std::string& group) -> std::optional<Lines> {
  if (group == "db") return Lines{"sqlite", "mysql", "postgres"};
  return std::nullopt;
};

// hydra.sweeper.params of the app's config.yaml: {b: "10,20", c: "choice(x,y)"}.
const Params kParams = {{"b", "10,20"}, {"c", "choice(x,y)"}};

}  // namespace

TEST_CASE("sweeper params come first, then the command line; the first sweep varies slowest") {
  // python app.py -m a=1,2 'lst=[1, 2]' 'x= 5 ' hydra.sweep.dir=multirun
  auto jobs = expand_sweep(parse_all({"a=1,2", "lst=[1, 2]", "x= 5 ", "hydra.sweep.dir=multirun"}), kParams, kGroups);
  std::vector<Lines> expected = {
      {"b=10", "c=x", "a=1", "lst=[1,2]", "x=5"}, {"b=10", "c=x", "a=2", "lst=[1,2]", "x=5"},
      {"b=10", "c=y", "a=1", "lst=[1,2]", "x=5"}, {"b=10", "c=y", "a=2", "lst=[1,2]", "x=5"},
      {"b=20", "c=x", "a=1", "lst=[1,2]", "x=5"}, {"b=20", "c=x", "a=2", "lst=[1,2]", "x=5"},
      {"b=20", "c=y", "a=1", "lst=[1,2]", "x=5"}, {"b=20", "c=y", "a=2", "lst=[1,2]", "x=5"}};
  REQUIRE(jobs.size() == expected.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    CHECK(jobs[j].number == static_cast<int>(j));
    CHECK(overrides_yaml(jobs[j]) == expected[j]);
    CHECK(jobs[j].overrides.back() == "hydra.sweep.dir=multirun");
  }
}

TEST_CASE("a command-line override of a sweeper param wins and keeps the param's place") {
  // python app.py -m c=z a=5
  auto jobs = expand_sweep(parse_all({"c=z", "a=5"}), kParams, kGroups);
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].overrides == Lines{"b=10", "c=z", "a=5"});
  CHECK(jobs[1].overrides == Lines{"b=20", "c=z", "a=5"});
}

TEST_CASE("glob filters the group's options; ~key is written as ~key=null") {
  // python app.py -m 'db=glob(*,exclude=s*)' '~x' a=3,4   (db options: mysql, postgres, sqlite)
  auto jobs = expand_sweep(parse_all({"db=glob(*,exclude=s*)", "~x", "a=3,4"}), kParams, kGroups);
  REQUIRE(jobs.size() == 16);
  CHECK(jobs[0].overrides == Lines{"b=10", "c=x", "db=mysql", "~x=null", "a=3"});
  CHECK(jobs[1].overrides == Lines{"b=10", "c=x", "db=mysql", "~x=null", "a=4"});
  CHECK(jobs[2].overrides == Lines{"b=10", "c=x", "db=postgres", "~x=null", "a=3"});
  CHECK(jobs[7].overrides == Lines{"b=10", "c=y", "db=postgres", "~x=null", "a=4"});
  CHECK(jobs[15].overrides == Lines{"b=20", "c=y", "db=postgres", "~x=null", "a=4"});
}

TEST_CASE("values are written back the way Hydra renders them") {
  // python app.py -m a=1 a=2,3 "+y='a b'" ++z=1e3 '+w=${a}' '+v={a: 1, 2: [x]}' '+u="q\"x"'
  //   '+db@src=sqlite' hydra.job.name=foo '+k=a\,b' 'b=[1,2],[3]'
  auto jobs =
      expand_sweep(parse_all({"a=1", "a=2,3", "+y='a b'", "++z=1e3", "+w=${a}", "+v={a: 1, 2: [x]}", "+u=\"q\\\"x\"",
                              "+db@src=sqlite", "hydra.job.name=foo", "+k=a\\,b", "b=[1,2],[3]"}),
                   kParams, kGroups);
  REQUIRE(jobs.size() == 8);
  Lines tail = {"+y='a b'",      "++z=1000.0",     "+w=$\\{a\\}", "+v={a:1,2:[x]}",
                "+u=\"q\\\"x\"", "+db@src=sqlite", "+k=a\\,b"};
  auto expect = [&](const char* b, const char* c, const char* a) {
    Lines out = {b, c, a};
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
  };
  CHECK(overrides_yaml(jobs[0]) == expect("b=[1,2]", "c=x", "a=2"));
  CHECK(overrides_yaml(jobs[1]) == expect("b=[1,2]", "c=x", "a=3"));
  CHECK(overrides_yaml(jobs[2]) == expect("b=[1,2]", "c=y", "a=2"));
  CHECK(overrides_yaml(jobs[5]) == expect("b=[3]", "c=x", "a=3"));
  CHECK(overrides_yaml(jobs[7]) == expect("b=[3]", "c=y", "a=3"));
  CHECK(jobs[0].overrides[9] == "hydra.job.name=foo");
}

TEST_CASE("Hydra's own overrides reach each job as typed; only the task's are rendered") {
  // python app.py -m a=1,2 hydra.job.chdir=true hydra.job.name=1.50 'hydra.sweep.subdir=${hydra.job.id}'
  // +b=true: each job's hydra.overrides.hydra as typed, its task's +b=True.
  auto jobs = expand_sweep(parse_all({"a=1,2", "hydra.job.chdir=true", "hydra.job.name=1.50",
                                      "hydra.sweep.subdir=${hydra.job.id}", "+b=true"}),
                           {}, nullptr);
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[1].overrides ==
        Lines{"a=2", "hydra.job.chdir=true", "hydra.job.name=1.50", "hydra.sweep.subdir=${hydra.job.id}", "+b=True"});
}

TEST_CASE("a float range through zero gives 0.0, as Python's Decimal adds") {
  CHECK(texts("k=range(-1,1,0.5)") == Lines{"-1.0", "-0.5", "0.0", "0.5"});
  CHECK(texts("k=float(range(-2,1))") == Lines{"-2.0", "-1.0", "0.0"});
  CHECK(texts("k=range(1,-1,-0.5)") == Lines{"1.0", "0.5", "0.0", "-0.5"});
}

TEST_CASE("float ranges, empty sweeps and no sweeps") {
  // +t=range(0.1,0.5,0.1) gave +t=0.1, 0.2, 0.30000000000000004, 0.4 in Hydra.
  auto jobs = expand_sweep(parse_all({"+t=range(0.1,0.5,0.1)"}), {}, nullptr);
  REQUIRE(jobs.size() == 4);
  CHECK(jobs[2].overrides == Lines{"+t=0.30000000000000004"});
  CHECK(expand_sweep(parse_all({"a=range(-10)", "b=1,2"}), {}, nullptr).empty());
  auto single = expand_sweep(parse_all({"a=1"}), {}, nullptr);
  REQUIRE(single.size() == 1);
  CHECK(single[0].overrides == Lines{"a=1"});
  CHECK(expand_sweep({}, {}, nullptr).size() == 1);
}

TEST_CASE("a float range of more than 10 million values is refused before any is written") {
  // The fuzzer's finding (tests/fuzz/findings/fuzz_override_parser/range-float-huge-count): 1.3e8
  // values, written one by one until the limit, took longer than its 5 s per input.
  const auto huge = [] { texts("k=range(7.1e35,step=5550555551111411141111140555)"); };
  CHECK_THROWS_WITH(huge(), Catch::Contains("range() gives more than 10 million values"));
  CHECK_THROWS_WITH(texts("k=range(0.0,1e7,0.5)"), Catch::Contains("more than 10 million"));
  CHECK(texts("k=range(0.0,2.0,0.5)") == Lines{"0.0", "0.5", "1.0", "1.5"});
}

TEST_CASE("shuffle is seeded: same seed, same order; values are a permutation") {
  auto a = expand_sweep(parse_all({"x=shuffle(range(0,20))"}), {}, nullptr, 7);
  auto b = expand_sweep(parse_all({"x=shuffle(range(0,20))"}), {}, nullptr, 7);
  REQUIRE(a.size() == 20);
  Lines order_a, order_b;
  for (size_t j = 0; j < a.size(); ++j) {
    order_a.push_back(a[j].overrides[0]);
    order_b.push_back(b[j].overrides[0]);
  }
  CHECK(order_a == order_b);
  std::sort(order_a.begin(), order_a.end());
  Lines sorted;
  for (int k = 0; k < 20; ++k) sorted.push_back("x=" + std::to_string(k));
  std::sort(sorted.begin(), sorted.end());
  CHECK(order_a == sorted);
}

TEST_CASE("sweeps the basic sweeper cannot enumerate are errors with a fix") {
  try {
    expand_sweep(parse_all({"lr=interval(0.1,1.0)"}), {}, nullptr);
    FAIL("interval accepted");
  } catch (const trainer::Error& e) {
    CHECK(e.where() == "override 'lr=interval(0.1,1.0)'");
    CHECK(e.fix() ==
          "interval() is for sampling sweepers: use hydra/sweeper=random, or list values with "
          "a,b,c / range()");
  }
  CHECK_THROWS_WITH(expand_sweep(parse_all({"model=glob(*)"}), {}, kGroups),
                    Catch::Contains("'model' is not a config group"));
  CHECK_THROWS_WITH(expand_sweep(parse_all({"a=range(1,5,0)"}), {}, nullptr), Catch::Contains("step must not be zero"));
  CHECK_THROWS_WITH(expand_sweep({}, {{"b", "1,"}}, nullptr), Catch::Contains("hydra.sweeper.params.b"));
}

TEST_CASE("sweep_value_texts enumerates like the basic sweeper") {
  CHECK(texts("x=range(0.1,0.5,0.1)") == std::vector<std::string>{"0.1", "0.2", "0.30000000000000004", "0.4"});
  // 3 * 3.3 is exactly halfway between two doubles; Python's 28-digit decimals round it to 9.9.
  CHECK(texts("x=range(0,10,3.3)") == std::vector<std::string>{"0.0", "3.3", "6.6", "9.9"});
  CHECK(texts("x=range(0,1,0.1)")[3] == "0.3");
  CHECK(texts("x=range(3,0,-1)") == std::vector<std::string>{"3", "2", "1"});
  CHECK(texts("x=sort(range(9,0,-3))") == std::vector<std::string>{"3", "6", "9"});
  CHECK(texts("x=1e-5,1e16,0.0001") == std::vector<std::string>{"1e-05", "1e+16", "0.0001"});
  CHECK(texts("x=${a},b") == std::vector<std::string>{"$\\{a\\}", "b"});
  CHECK(texts("x=a") == std::vector<std::string>{"a"});
  std::vector<std::string> options = {"postgres", "mysql", "sqlite", "mongo"};
  CHECK(texts("db=glob(*)", &options) == std::vector<std::string>{"mongo", "mysql", "postgres", "sqlite"});
  CHECK(texts("db=glob([m*,s*],exclude=*ql)", &options) == std::vector<std::string>{"mongo", "sqlite"});
  CHECK(texts("db=glob(?ysql)", &options) == std::vector<std::string>{"mysql"});
  CHECK(texts("db=glob('[ms]*',exclude='[!m]*')", &options) == std::vector<std::string>{"mongo", "mysql"});
  CHECK_THROWS_AS(texts("db=glob(*)"), trainer::Error);
}

TEST_CASE("a sweeper param parses as key=value; its errors name the param") {
  const Override param = trainer::config::parse_sweeper_param("+db@src", "a,b", "unused");
  CHECK(param.text == "+db@src=a,b");
  CHECK(param.is_sweep());
  try {
    trainer::config::parse_sweeper_param("b", "[1", "write it as on the command line");
    FAIL("accepted");
  } catch (const trainer::Error& e) {
    CHECK(e.where() == "hydra.sweeper.params.b");
    CHECK(e.problem() == "the '[' at column 3 is never closed");
    CHECK_THAT(e.fix(), Catch::Contains("Close the list"));
  }
}

TEST_CASE("is_hydra_override tells Hydra's own overrides apart") {
  CHECK(is_hydra_override("hydra.job.name=x"));
  CHECK(is_hydra_override("hydra/launcher=basic"));
  CHECK(is_hydra_override("+hydra.x=1"));
  CHECK(is_hydra_override("~hydra.x"));
  CHECK_FALSE(is_hydra_override("hydra_thing=1"));
  CHECK_FALSE(is_hydra_override("model.hydra.x=1"));
}

TEST_CASE("a 10,000-job sweep expands to every combination") {
  auto overrides = parse_all({"a=range(0,100)", "b=range(0.0,1.0,0.01)", "model.hidden_size=32"});
  auto jobs = expand_sweep(overrides, {}, nullptr);
  REQUIRE(jobs.size() == 10000);
  CHECK(jobs[9999].overrides == Lines{"a=99", "b=0.99", "model.hidden_size=32"});
}

TEST_CASE("a sweep over the hydra node is refused before any job, as Hydra's multirun refuses it") {
  for (const char* text : {"hydra.job.name=x,y", "hydra/launcher=basic,local", "+hydra.sweeper.params.seed=1,2",
                           "hydra.sweep.subdir=range(2)"}) {
    INFO(text);
    try {
      expand_sweep(parse_all({"a=1,2", text}), kParams, kGroups);
      FAIL("no error");
    } catch (const trainer::Error& error) {
      CHECK_THAT(error.what(), Catch::Matchers::Contains(std::string("Sweeping over Hydra's configuration is not "
                                                                     "supported : '") +
                                                         text + "'"));
    }
  }
  // One value for a hydra key is a setting of every job, not a sweep.
  CHECK(expand_sweep(parse_all({"a=1,2", "hydra.job.name=x"}), kParams, kGroups).size() == 8);  // 2 x b x c
}
