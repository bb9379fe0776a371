// Hydra's Optuna sweeper's settings and search space as trainer reads them: the same keys,
// defaults and distributions as hydra_plugins.hydra_optuna_sweeper (its _impl.py maps range() to
// an int distribution with the stop included, interval to a float one, a fixed value beats a
// search space of the same key), and one clear error per mistake.
#include "trainer/launch/optuna_search.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using namespace trainer::launch;
using Catch::Matchers::Contains;
using trainer::config::Node;
using trainer::config::parse_overrides;

namespace {

Node yaml(const std::string& text) { return trainer::config::load_yaml_string(text, "test.yaml").root; }

// Hydra's hydra/sweeper/optuna.yaml with the TPE sampler (hydra-optuna-sweeper 1.2).
const char* kHydraDefaults = R"(_target_: hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper
sampler:
  _target_: optuna.samplers.TPESampler
  seed: null
  consider_prior: true
  prior_weight: 1.0
  consider_magic_clip: true
  consider_endpoints: false
  n_startup_trials: 10
  n_ei_candidates: 24
  multivariate: false
  warn_independent_sampling: true
direction: minimize
storage: null
study_name: null
n_trials: 20
n_jobs: 2
max_failure_rate: 0.0
search_space: null
custom_search_space: null
params: null
)";

const Node kMonitored = yaml("callbacks:\n  model_checkpoint:\n    monitor: val/acc\n    mode: max\n");

OptunaSpace space_of(const std::vector<std::pair<std::string, std::string>>& params,
                     const std::vector<std::string>& cli) {
  return optuna_space(params, parse_overrides(cli), nullptr);
}

}  // namespace

TEST_CASE("Hydra's Optuna sweeper defaults are read unchanged", "[optuna]") {
  const OptunaSettings s = optuna_settings(yaml(kHydraDefaults), kMonitored);
  CHECK(s.sampler == OptunaSettings::Sampler::kTpe);
  CHECK_FALSE(s.seeded);
  CHECK(s.tpe.n_startup_trials == 10);
  CHECK(s.tpe.n_ei_candidates == 24);
  CHECK_FALSE(s.tpe.multivariate);  // Hydra's config says false, Optuna 5's own default is true
  CHECK(s.n_trials == 20);
  CHECK(s.n_jobs == 2);
  CHECK(s.storage.empty());
  CHECK(s.study_name.empty());
  // direction minimize is given: it stands even though the monitor's mode is max, with a warning.
  CHECK_FALSE(s.tpe.maximize);
  CHECK_THAT(s.warning, Contains("mode is max") && Contains("hydra.sweeper.direction=maximize"));
  CHECK(s.metric == "val/acc");
  CHECK(s.metric_from == "callbacks.model_checkpoint.monitor");
}

TEST_CASE("lightning-hydra-template's mnist_optuna settings", "[optuna]") {
  Node sweeper = yaml(kHydraDefaults);
  const Node overrides = yaml(R"(n_jobs: 1
direction: maximize
n_trials: 20
sampler:
  _target_: optuna.samplers.TPESampler
  seed: 1234
  n_startup_trials: 10
)");
  sweeper.find("direction")->operator=(*overrides.find("direction"));
  sweeper.find("n_jobs")->operator=(*overrides.find("n_jobs"));
  sweeper.find("sampler")->find("seed")->operator=(Node::integer(1234));
  const OptunaSettings s = optuna_settings(sweeper, yaml("optimized_metric: val/acc_best\n"));
  CHECK(s.tpe.maximize);
  CHECK(s.seeded);
  CHECK(s.tpe.seed == 1234);
  CHECK(s.n_jobs == 1);
  CHECK(s.metric == "val/acc_best");
  CHECK(s.metric_from == "optimized_metric");
}

TEST_CASE("the objective: optimized_metric, then hydra.sweeper.metric, then the monitor and its mode", "[optuna]") {
  const Node sweeper = yaml("direction: null\nmetric: val/loss\n");
  CHECK(optuna_settings(sweeper, kMonitored).metric == "val/loss");
  CHECK_FALSE(optuna_settings(sweeper, kMonitored).tpe.maximize);
  const OptunaSettings from_monitor = optuna_settings(yaml("direction: null\n"), kMonitored);
  CHECK(from_monitor.metric == "val/acc");
  CHECK(from_monitor.tpe.maximize);  // the monitor's mode, as direction is null
  CHECK(from_monitor.warning.empty());
  CHECK_THROWS_WITH(optuna_settings(yaml("direction: null\n"), yaml("seed: 1\n")),
                    Contains("hydra.sweeper.metric") && Contains("optimized_metric"));
}

TEST_CASE("the random sampler, and samplers trainer does not have", "[optuna]") {
  const OptunaSettings s =
      optuna_settings(yaml("sampler:\n  _target_: optuna.samplers.RandomSampler\n  seed: 5\n"), kMonitored);
  CHECK(s.sampler == OptunaSettings::Sampler::kRandom);
  CHECK(s.tpe.seed == 5);
  CHECK_THROWS_WITH(optuna_settings(yaml("sampler:\n  _target_: optuna.samplers.CmaEsSampler\n"), kMonitored),
                    Contains("hydra.sweeper.sampler._target_") && Contains("CMA-ES") && Contains("sampler=tpe"));
  CHECK_THROWS_WITH(optuna_settings(yaml("sampler:\n  _target_: optuna.samplers.GridSampler\n"), kMonitored),
                    Contains("hydra/sweeper=basic"));
  CHECK_THROWS_WITH(optuna_settings(yaml("sampler:\n  _target_: my.Sampler\n"), kMonitored), Contains("'my.Sampler'"));
  CHECK_THROWS_WITH(
      optuna_settings(yaml("sampler:\n  _target_: optuna.samplers.TPESampler\n  n_startup_trial: 3\n"), kMonitored),
      Contains("hydra.sweeper.sampler.n_startup_trial") && Contains("n_startup_trials"));
  CHECK_THROWS_WITH(
      optuna_settings(yaml("sampler:\n  _target_: optuna.samplers.RandomSampler\n  n_startup_trials: 3\n"), kMonitored),
      Contains("not a setting of optuna.samplers.RandomSampler"));
}

TEST_CASE("settings out of range name their key", "[optuna]") {
  CHECK_THROWS_WITH(optuna_settings(yaml("direction: [minimize, maximize]\n"), kMonitored),
                    Contains("hydra.sweeper.direction") && Contains("one objective"));
  CHECK(optuna_settings(yaml("direction: [maximize]\n"), kMonitored).tpe.maximize);
  CHECK_THROWS_WITH(optuna_settings(yaml("direction: upward\n"), kMonitored), Contains("minimize or maximize"));
  CHECK_THROWS_WITH(optuna_settings(yaml("storage: sqlite:///example.db\n"), kMonitored),
                    Contains("hydra.sweeper.storage") && Contains("database URL"));
  CHECK_THROWS_WITH(optuna_settings(yaml("n_trials: 0\n"), kMonitored), Contains("hydra.sweeper.n_trials"));
  CHECK_THROWS_WITH(optuna_settings(yaml("n_jobs: 0\n"), kMonitored), Contains("hydra.sweeper.n_jobs"));
  CHECK(optuna_settings(yaml("n_jobs: -1\n"), kMonitored).n_jobs == -1);
  CHECK_THROWS_WITH(optuna_settings(yaml("max_failure_rate: 1.5\n"), kMonitored), Contains("[0, 1]"));
  CHECK_THROWS_WITH(optuna_settings(yaml("search_space:\n  x:\n    type: float\n"), kMonitored),
                    Contains("deprecated"));
  CHECK_THROWS_WITH(optuna_settings(yaml("custom_search_space: my.fn\n"), kMonitored), Contains("Python function"));
  CHECK_THROWS_WITH(
      optuna_settings(yaml("sampler:\n  _target_: optuna.samplers.TPESampler\n  n_ei_candidates: 0\n"), kMonitored),
      Contains("n_ei_candidates"));
}

TEST_CASE("the search space is made the way Hydra's Optuna sweeper makes it", "[optuna]") {
  const OptunaSpace space = space_of({{"model.optimizer.lr", "interval(0.0001, 0.1)"},
                                      {"data.batch_size", "choice(32, 64, 128, 256)"},
                                      {"model.net.lin1_size", "range(64, 256, 64)"},
                                      {"wd", "tag(log, interval(1e-6, 1e-2))"},
                                      {"depth", "int(interval(2, 8))"},
                                      {"width", "tag(log, int(interval(8, 512)))"},
                                      {"dropout", "range(0.0, 0.5, 0.1)"}},
                                     {"seed=3"});
  REQUIRE(space.params.size() == 7);
  CHECK(space.keys[0] == "model.optimizer.lr");
  CHECK(space.params[0].kind == SearchParam::Kind::kFloat);
  CHECK(space.params[1].kind == SearchParam::Kind::kCategorical);
  CHECK(space.choice_texts[1] == std::vector<std::string>{"32", "64", "128", "256"});
  CHECK(space.params[2].kind == SearchParam::Kind::kInt);
  CHECK(space.params[2].high == 256);  // Optuna's IntDistribution includes the stop
  CHECK(space.params[2].step == 64);
  CHECK(space.params[3].log);
  CHECK(space.params[4].kind == SearchParam::Kind::kInt);
  CHECK(space.params[5].log);
  CHECK(space.params[6].kind == SearchParam::Kind::kFloat);
  CHECK(space.params[6].step == Approx(0.1));
  CHECK(space.fixed == std::vector<std::string>{"seed=3"});
  CHECK(space.describe() ==
        std::vector<std::string>{
            "model.optimizer.lr: float in [0.0001, 0.1]", "data.batch_size: choice of 32 64 128 256",
            "model.net.lin1_size: int in [64, 256], step 64", "wd: float in [1e-06, 0.01], log", "depth: int in [2, 8]",
            "width: int in [8, 512], log", "dropout: float in [0.0, 0.5], step 0.1"});
  CHECK(space.overrides({0.001, 2, 128, 1e-4, 5, 64, 0.2}) ==
        std::vector<std::string>{"model.optimizer.lr=0.001", "data.batch_size=128", "model.net.lin1_size=128",
                                 "wd=0.0001", "depth=5", "width=64", "dropout=0.2", "seed=3"});
}

TEST_CASE("the command line replaces a params entry in place; a fixed value leaves the space", "[optuna]") {
  const OptunaSpace space = space_of({{"a", "choice(1, 2)"}, {"b", "interval(0, 1)"}, {"c", "choice(x, y)"}},
                                     {"a=interval(5, 6)", "c=z", "+d=1,2"});
  REQUIRE(space.keys == std::vector<std::string>{"a", "b", "+d"});
  CHECK(space.params[0].kind == SearchParam::Kind::kFloat);
  CHECK(space.params[0].low == 5);
  CHECK(space.fixed == std::vector<std::string>{"c=z"});
  // A fixed value beats a search space whichever comes first (Hydra's sweeper drops the space).
  CHECK(space_of({{"lr", "0.1"}, {"b", "choice(1,2)"}}, {"lr=interval(0.01, 1)"}).keys ==
        std::vector<std::string>{"b"});
  // Hydra's own overrides are not searched.
  CHECK(space_of({{"b", "choice(1,2)"}}, {"hydra.sweeper.n_trials=5"}).fixed.empty());
}

TEST_CASE("a space that cannot be searched is an error naming the entry", "[optuna]") {
  CHECK_THROWS_WITH(space_of({{"lr", "tag(log, interval(0, 1))"}}, {}),
                    Contains("hydra.sweeper.params.lr") && Contains("above 0"));
  CHECK_THROWS_WITH(space_of({}, {"n=range(10, 1)"}), Contains("override 'n=range(10, 1)'") && Contains("empty"));
  CHECK_THROWS_WITH(space_of({{"a", "1"}}, {"b=2"}), Contains("nothing to search"));
  CHECK_THROWS_WITH(space_of({{"a", "choice("}}, {}), Contains("hydra.sweeper.params.a"));
}

TEST_CASE("hydra.sweeper.pruner: none, median, successive_halving, or Optuna's pruner classes", "[optuna]") {
  CHECK(optuna_settings(yaml("pruner: null\n"), kMonitored).pruner.kind == PrunerSettings::Kind::kNone);
  CHECK(optuna_settings(yaml("pruner: none\n"), kMonitored).pruner.kind == PrunerSettings::Kind::kNone);
  const PrunerSettings median = optuna_settings(yaml("pruner: median\n"), kMonitored).pruner;
  CHECK(median.kind == PrunerSettings::Kind::kMedian);
  CHECK(median.n_startup_trials == 5);  // Optuna's MedianPruner defaults
  CHECK(pruner_text(median) ==
        "median pruner (n_startup_trials=5, n_warmup_steps=0, interval_steps=1, n_min_trials=1)");
  const PrunerSettings custom = optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.MedianPruner\n"
                                                     "  n_startup_trials: 2\n  n_warmup_steps: 3\n"),
                                                kMonitored)
                                    .pruner;
  CHECK(custom.n_startup_trials == 2);
  CHECK(custom.n_warmup_steps == 3);
  const PrunerSettings halving =
      optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.SuccessiveHalvingPruner\n  min_resource: auto\n"
                           "  reduction_factor: 3\n"),
                      kMonitored)
          .pruner;
  CHECK(halving.kind == PrunerSettings::Kind::kSuccessiveHalving);
  CHECK(halving.min_resource == 1);
  CHECK(halving.reduction_factor == 3);
  CHECK(pruner_text(optuna_settings(yaml("pruner: successive_halving\n"), kMonitored).pruner) ==
        "successive halving (min_resource=1, reduction_factor=4.0, min_early_stopping_rate=0)");
  CHECK(optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.NopPruner\n"), kMonitored).pruner.kind ==
        PrunerSettings::Kind::kNone);
  CHECK_THROWS_WITH(optuna_settings(yaml("pruner: hyperband\n"), kMonitored),
                    Contains("hydra.sweeper.pruner") && Contains("'hyperband'") && Contains("median"));
  CHECK_THROWS_WITH(optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.HyperbandPruner\n"), kMonitored),
                    Contains("hydra.sweeper.pruner._target_"));
  CHECK_THROWS_WITH(
      optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.MedianPruner\n  n_startup: 2\n"), kMonitored),
      Contains("hydra.sweeper.pruner.n_startup") && Contains("not a setting"));
  CHECK_THROWS_WITH(
      optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.SuccessiveHalvingPruner\n  reduction_factor: 1\n"),
                      kMonitored),
      Contains("hydra.sweeper.pruner.reduction_factor"));
  CHECK_THROWS_WITH(
      optuna_settings(yaml("pruner:\n  _target_: optuna.pruners.SuccessiveHalvingPruner\n  bootstrap_count: 2\n"),
                      kMonitored),
      Contains("bootstrap"));
}
