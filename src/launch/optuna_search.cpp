// Hydra's Optuna sweeper's settings and search space (see optuna_search.h).
#include "trainer/launch/optuna_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/python_str.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/util/error.h"

namespace trainer::launch {

namespace {

using config::Node;
using config::NodeType;
using config::Override;
using config::SweepKind;

const Node* child(const Node& node, const char* key) { return node.is_map() ? node.find(key) : nullptr; }

std::string where(const char* key) { return std::string("hydra.sweeper.") + key; }

int64_t int_setting(const Node& node, const char* key, const std::string& path, int64_t fallback, int64_t minimum,
                    const char* example) {
  const Node* value = child(node, key);
  if (value == nullptr || value->is_null()) return fallback;
  if (value->type() != NodeType::kInt || value->is_big_int() || value->as_int() < minimum) {
    throw Error(
        path, "it is " + config::python_str(*value) + "; it must be an integer of at least " + std::to_string(minimum),
        std::string("e.g. ") + path + "=" + example);
  }
  return value->as_int();
}

double float_setting(const Node& node, const char* key, const std::string& path, double fallback, const char* example) {
  const Node* value = child(node, key);
  if (value == nullptr || value->is_null()) return fallback;
  if (value->type() == NodeType::kInt && !value->is_big_int()) return static_cast<double>(value->as_int());
  if (value->type() == NodeType::kFloat) return value->as_float();
  throw Error(path, "it is " + config::python_str(*value) + "; it must be a number",
              std::string("e.g. ") + path + "=" + example);
}

bool bool_setting(const Node& node, const char* key, const std::string& path, bool fallback) {
  const Node* value = child(node, key);
  if (value == nullptr || value->is_null()) return fallback;
  if (value->type() != NodeType::kBool) {
    throw Error(path, "it is " + config::python_str(*value) + "; it must be true or false", path + "=true");
  }
  return value->as_bool();
}

std::optional<std::string> string_setting(const Node& node, const char* key, const std::string& path) {
  const Node* value = child(node, key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_string()) {
    throw Error(path, "it is " + config::python_str(*value) + "; it must be a string", "quote it");
  }
  return value->as_string();
}

void read_sampler(const Node& sweeper, OptunaSettings& settings, const std::string& sampler_choice) {
  const Node* sampler = child(sweeper, "sampler");
  if (sampler == nullptr || sampler->is_null()) return;  // Optuna's default: TPE
  if (sampler_choice == "random" && sampler->is_map()) {
    // hydra/sweeper/sampler=random's schema has _target_ and seed only: Hydra refuses any other key
    // (a config that sets TPE's n_startup_trials, as lightning-hydra-template's does), whatever
    // _target_ became.
    for (const auto& entry : sampler->entries()) {
      if (entry.key == "_target_" || entry.key == "seed") continue;
      throw Error(where("sampler.") + entry.key,
                  "'" + entry.key +
                      "' is not a setting of hydra/sweeper/sampler=random (its settings are _target_ and seed; "
                      "Hydra's structured config refuses it too)",
                  "remove it from the config that sets it (an hparams_search config written for TPE), or keep "
                  "hydra/sweeper/sampler=tpe");
    }
  }
  if (!sampler->is_map()) {
    throw Error(where("sampler"), "it is " + config::python_str(*sampler) + ", not a sampler's settings",
                "choose one with hydra/sweeper/sampler=tpe or hydra/sweeper/sampler=random");
  }
  const std::string target = string_setting(*sampler, "_target_", where("sampler._target_")).value_or("");
  const std::map<std::string, std::string> refused = {
      {"optuna.samplers.GridSampler", "a grid is hydra/sweeper=basic"},
      {"optuna.samplers.CmaEsSampler", "CMA-ES"},
      {"optuna.samplers.NSGAIISampler", "NSGA-II (several objectives)"},
      {"optuna.samplers.NSGAIIISampler", "NSGA-III (several objectives)"},
      {"optuna.samplers.MOTPESampler", "MOTPE (several objectives)"},
      {"optuna.samplers.QMCSampler", "quasi-Monte Carlo"},
      {"optuna.samplers.GPSampler", "Gaussian processes"},
      {"optuna.samplers.BruteForceSampler", "brute force"},
      {"optuna.samplers.PartialFixedSampler", "partially fixed"}};
  std::vector<std::string> allowed;
  if (target == "optuna.samplers.TPESampler") {
    settings.sampler = OptunaSettings::Sampler::kTpe;
    allowed = {"_target_",
               "seed",
               "n_startup_trials",
               "n_ei_candidates",
               "multivariate",
               "constant_liar",
               "prior_weight",
               "consider_magic_clip",
               "consider_endpoints",
               "consider_prior",
               "warn_independent_sampling"};
  } else if (target == "optuna.samplers.RandomSampler") {
    settings.sampler = OptunaSettings::Sampler::kRandom;
    allowed = {"_target_", "seed"};
  } else if (auto it = refused.find(target); it != refused.end()) {
    throw Error(where("sampler._target_"),
                "trainer's Optuna sweeper has TPE and random sampling, not " + it->second + " (" + target + ")",
                "use hydra/sweeper/sampler=tpe (optuna.samplers.TPESampler) or hydra/sweeper/sampler=random");
  } else {
    throw Error(where("sampler._target_"), "'" + target + "' is not a sampler trainer has",
                "use optuna.samplers.TPESampler (hydra/sweeper/sampler=tpe) or optuna.samplers.RandomSampler "
                "(hydra/sweeper/sampler=random)");
  }
  for (const auto& entry : sampler->entries()) {
    if (std::find(allowed.begin(), allowed.end(), entry.key) == allowed.end()) {
      std::string keys;
      for (size_t i = 1; i < allowed.size(); ++i) keys += (i > 1 ? ", " : "") + allowed[i];
      throw Error(where("sampler.") + entry.key, "'" + entry.key + "' is not a setting of " + target,
                  "remove it; the settings are " + keys);
    }
  }
  const std::string prefix = where("sampler.");
  if (const Node* seed = child(*sampler, "seed"); seed && !seed->is_null()) {
    if (seed->type() != NodeType::kInt || seed->is_big_int() || seed->as_int() < 0) {
      throw Error(prefix + "seed", "it is " + config::python_str(*seed) + "; it must be an integer of 0 or more",
                  prefix + "seed=1234");
    }
    settings.tpe.seed = static_cast<uint64_t>(seed->as_int());
    settings.seeded = true;
  }
  if (settings.sampler != OptunaSettings::Sampler::kTpe) return;
  TpeOptions& tpe = settings.tpe;
  tpe.n_startup_trials =
      int_setting(*sampler, "n_startup_trials", prefix + "n_startup_trials", tpe.n_startup_trials, 0, "10");
  tpe.n_ei_candidates =
      int_setting(*sampler, "n_ei_candidates", prefix + "n_ei_candidates", tpe.n_ei_candidates, 1, "24");
  // Absent (a sampler node that is not hydra/sweeper/sampler/tpe's): false, what Hydra's sweeper
  // gets from the Optuna it runs with (< 3).
  tpe.multivariate = bool_setting(*sampler, "multivariate", prefix + "multivariate", false);
  tpe.constant_liar = bool_setting(*sampler, "constant_liar", prefix + "constant_liar", tpe.constant_liar);
  tpe.prior_weight = float_setting(*sampler, "prior_weight", prefix + "prior_weight", tpe.prior_weight, "1.0");
  tpe.consider_magic_clip =
      bool_setting(*sampler, "consider_magic_clip", prefix + "consider_magic_clip", tpe.consider_magic_clip);
  tpe.consider_endpoints =
      bool_setting(*sampler, "consider_endpoints", prefix + "consider_endpoints", tpe.consider_endpoints);
  bool_setting(*sampler, "consider_prior", prefix + "consider_prior", true);  // Optuna 5 always uses the prior
  bool_setting(*sampler, "warn_independent_sampling", prefix + "warn_independent_sampling", true);
}

void read_pruner(const Node& sweeper, PrunerSettings& pruner) {
  const Node* node = child(sweeper, "pruner");
  if (node == nullptr || node->is_null()) return;
  const std::string fix =
      "use hydra.sweeper.pruner=median, successive_halving or none, or a map with _target_ "
      "optuna.pruners.MedianPruner or optuna.pruners.SuccessiveHalvingPruner and their keys";
  std::string target;
  if (node->is_string()) {
    const std::string& name = node->as_string();
    if (name == "none") return;
    if (name == "median") {
      pruner.kind = PrunerSettings::Kind::kMedian;
    } else if (name == "successive_halving") {
      pruner.kind = PrunerSettings::Kind::kSuccessiveHalving;
    } else {
      throw Error(where("pruner"), "'" + name + "' is not a pruner trainer has", fix);
    }
    return;
  }
  if (!node->is_map()) throw Error(where("pruner"), "it is " + config::python_str(*node) + ", not a pruner", fix);
  target = string_setting(*node, "_target_", where("pruner._target_")).value_or("");
  std::vector<std::string> allowed = {"_target_"};
  const std::string prefix = where("pruner.");
  if (target == "optuna.pruners.NopPruner") {
    pruner.kind = PrunerSettings::Kind::kNone;
  } else if (target == "optuna.pruners.MedianPruner") {
    pruner.kind = PrunerSettings::Kind::kMedian;
    allowed.insert(allowed.end(), {"n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials"});
    pruner.n_startup_trials = int_setting(*node, "n_startup_trials", prefix + "n_startup_trials", 5, 0, "5");
    pruner.n_warmup_steps = int_setting(*node, "n_warmup_steps", prefix + "n_warmup_steps", 0, 0, "0");
    pruner.interval_steps = int_setting(*node, "interval_steps", prefix + "interval_steps", 1, 1, "1");
    pruner.n_min_trials = int_setting(*node, "n_min_trials", prefix + "n_min_trials", 1, 1, "1");
  } else if (target == "optuna.pruners.SuccessiveHalvingPruner") {
    pruner.kind = PrunerSettings::Kind::kSuccessiveHalving;
    allowed.insert(allowed.end(), {"min_resource", "reduction_factor", "min_early_stopping_rate", "bootstrap_count"});
    const Node* min_resource = child(*node, "min_resource");
    if (!(min_resource && min_resource->is_string() && min_resource->as_string() == "auto")) {
      pruner.min_resource = int_setting(*node, "min_resource", prefix + "min_resource", 1, 1, "1");
    }
    pruner.reduction_factor =
        static_cast<double>(int_setting(*node, "reduction_factor", prefix + "reduction_factor", 4, 2, "4"));
    pruner.min_early_stopping_rate =
        int_setting(*node, "min_early_stopping_rate", prefix + "min_early_stopping_rate", 0, 0, "0");
    if (int_setting(*node, "bootstrap_count", prefix + "bootstrap_count", 0, 0, "0") != 0) {
      throw Error(prefix + "bootstrap_count", "trainer's successive halving has no bootstrap count", "leave it at 0");
    }
  } else {
    throw Error(where("pruner._target_"), "'" + target + "' is not a pruner trainer has", fix);
  }
  for (const auto& entry : node->entries()) {
    if (std::find(allowed.begin(), allowed.end(), entry.key) == allowed.end()) {
      throw Error(prefix + entry.key, "'" + entry.key + "' is not a setting of " + target, fix);
    }
  }
}

}  // namespace

std::string pruner_text(const PrunerSettings& p) {
  switch (p.kind) {
    case PrunerSettings::Kind::kNone:
      return "no pruner";
    case PrunerSettings::Kind::kMedian:
      return "median pruner (n_startup_trials=" + std::to_string(p.n_startup_trials) +
             ", n_warmup_steps=" + std::to_string(p.n_warmup_steps) +
             ", interval_steps=" + std::to_string(p.interval_steps) +
             ", n_min_trials=" + std::to_string(p.n_min_trials) + ")";
    case PrunerSettings::Kind::kSuccessiveHalving:
      return "successive halving (min_resource=" + std::to_string(p.min_resource) +
             ", reduction_factor=" + config::python_float_repr(p.reduction_factor) +
             ", min_early_stopping_rate=" + std::to_string(p.min_early_stopping_rate) + ")";
  }
  return "";
}

OptunaSettings optuna_settings(const Node& sweeper, const Node& job_config, const std::string& sampler_choice) {
  OptunaSettings settings;
  const std::vector<std::string> keys = {
      "_target_",         "sampler",      "direction",           "storage", "study_name", "n_trials", "n_jobs",
      "max_failure_rate", "search_space", "custom_search_space", "params",  "metric",     "pruner"};
  if (sweeper.is_map()) {
    for (const auto& entry : sweeper.entries()) {
      if (std::find(keys.begin(), keys.end(), entry.key) != keys.end()) continue;
      std::string listed;
      for (size_t i = 1; i < keys.size(); ++i) listed += (i > 1 ? ", " : "") + keys[i];
      const std::string hint = config::did_you_mean(entry.key, keys);
      throw Error(where(entry.key.c_str()),
                  "'" + entry.key + "' is not a setting of the Optuna sweeper" + (hint.empty() ? "" : "; " + hint),
                  "remove it; the settings are " + listed);
    }
  }
  read_sampler(sweeper, settings, sampler_choice);
  settings.n_trials = int_setting(sweeper, "n_trials", where("n_trials"), settings.n_trials, 1, "20");
  read_pruner(sweeper, settings.pruner);
  const Node* jobs = child(sweeper, "n_jobs");
  if (jobs && !jobs->is_null()) {
    if (jobs->type() != NodeType::kInt || jobs->is_big_int() || (jobs->as_int() < 1 && jobs->as_int() != -1)) {
      throw Error(where("n_jobs"),
                  "it is " + config::python_str(*jobs) + "; it must be 1 or more, or -1 (one per core)",
                  "e.g. hydra.sweeper.n_jobs=2");
    }
    settings.n_jobs = jobs->as_int();
  }
  settings.study_name = string_setting(sweeper, "study_name", where("study_name")).value_or("");
  settings.storage = string_setting(sweeper, "storage", where("storage")).value_or("");
  for (const char* scheme : {"sqlite:", "mysql", "postgresql", "redis:", "oracle", "mssql"}) {
    if (settings.storage.rfind(scheme, 0) == 0) {
      throw Error(where("storage"), "'" + settings.storage + "' is a database URL; trainer keeps a study in a file",
                  "give a file path (hydra.sweeper.storage=studies/mnist.yaml), or null to keep it in the sweep "
                  "directory (.sweep/study.yaml)");
    }
  }
  settings.max_failure_rate = float_setting(sweeper, "max_failure_rate", where("max_failure_rate"), 0.0, "0.2");
  if (!(settings.max_failure_rate >= 0 && settings.max_failure_rate <= 1)) {
    throw Error(where("max_failure_rate"),
                "it is " + config::python_float_repr(settings.max_failure_rate) + "; it must lie in [0, 1]",
                "e.g. hydra.sweeper.max_failure_rate=0.2");
  }
  if (child(sweeper, "search_space") && !child(sweeper, "search_space")->is_null()) {
    throw Error(where("search_space"), "search_space is the deprecated form of params (Hydra 1.1)",
                "write each parameter under hydra.sweeper.params with the override grammar, e.g. "
                "lr: tag(log, interval(1e-4, 1e-1))");
  }
  if (child(sweeper, "custom_search_space") && !child(sweeper, "custom_search_space")->is_null()) {
    throw Error(where("custom_search_space"), "it names a Python function, which trainer cannot call",
                "express the space under hydra.sweeper.params");
  }

  // The objective and its direction.
  const Node* checkpoint = child(job_config, "callbacks");
  checkpoint = checkpoint ? child(*checkpoint, "model_checkpoint") : nullptr;
  const Node* monitor = checkpoint ? child(*checkpoint, "monitor") : nullptr;
  const Node* monitor_mode = checkpoint ? child(*checkpoint, "mode") : nullptr;
  if (const Node* optimized = child(job_config, "optimized_metric"); optimized && optimized->is_string()) {
    settings.metric = optimized->as_string();
    settings.metric_from = "optimized_metric";
  } else if (auto metric = string_setting(sweeper, "metric", where("metric"))) {
    settings.metric = *metric;
    settings.metric_from = "hydra.sweeper.metric";
  } else if (monitor && monitor->is_string()) {
    settings.metric = monitor->as_string();
    settings.metric_from = "callbacks.model_checkpoint.monitor";
  } else {
    throw Error(where("metric"),
                "the search needs an objective, and neither optimized_metric, hydra.sweeper.metric nor "
                "callbacks.model_checkpoint.monitor names one",
                "name a metric the jobs log, e.g. optimized_metric=val/acc hydra.sweeper.direction=maximize");
  }
  const Node* direction = child(sweeper, "direction");
  std::string text;
  if (direction && direction->is_list()) {
    if (direction->items().size() != 1) {
      throw Error(where("direction"),
                  "it lists " + std::to_string(direction->items().size()) +
                      " directions; trainer's Optuna sweeper optimizes one objective",
                  "give one: hydra.sweeper.direction=maximize");
    }
    direction = &direction->items()[0];
  }
  // The monitor itself, or the template's <monitor>_best: its mode says which way is better.
  const bool objective_is_monitor =
      monitor && monitor->is_string() &&
      (settings.metric == monitor->as_string() || settings.metric == monitor->as_string() + "_best");
  if (direction && direction->is_string()) {
    text = direction->as_string();
  } else if (direction && !direction->is_null()) {
    throw Error(where("direction"), "it is " + config::python_str(*direction) + "; it must be minimize or maximize",
                "hydra.sweeper.direction=maximize");
  } else if (objective_is_monitor && monitor_mode && monitor_mode->is_string()) {
    text = monitor_mode->as_string() == "max" ? "maximize" : "minimize";
  } else {
    text = "minimize";
  }
  if (objective_is_monitor && monitor_mode && monitor_mode->is_string() && direction && !direction->is_null()) {
    const std::string mode = monitor_mode->as_string();
    const bool contradicts = (mode == "max" && text == "minimize") || (mode == "min" && text == "maximize");
    if (contradicts) {
      settings.warning =
          "hydra.sweeper.direction is " + text + " but the objective " + settings.metric +
          " is the checkpoint's monitor, whose mode is " + mode +
          "; the study follows direction (set hydra.sweeper.direction=" + (mode == "max" ? "maximize" : "minimize") +
          " or null to follow the mode)";
    }
  }
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower != "minimize" && lower != "maximize") {
    throw Error(where("direction"), "it is '" + text + "'; it must be minimize or maximize",
                "hydra.sweeper.direction=maximize");
  }
  settings.tpe.maximize = lower == "maximize";
  return settings;
}

std::vector<std::string> OptunaSpace::overrides(const std::vector<double>& point) const {
  std::vector<std::string> out;
  out.reserve(params.size() + fixed.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const SearchParam& p = params[i];
    std::string value;
    if (p.kind == SearchParam::Kind::kCategorical) {
      value = choice_texts[i][static_cast<size_t>(point[i])];
    } else if (p.kind == SearchParam::Kind::kInt) {
      value = std::to_string(static_cast<int64_t>(std::llround(point[i])));
    } else {
      value = config::python_float_repr(point[i]);
    }
    out.push_back(keys[i] + "=" + value);
  }
  out.insert(out.end(), fixed.begin(), fixed.end());
  return out;
}

std::vector<std::string> OptunaSpace::describe() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < params.size(); ++i) {
    const SearchParam& p = params[i];
    std::string line = keys[i] + ": ";
    if (p.kind == SearchParam::Kind::kCategorical) {
      line += "choice of";
      for (const auto& text : choice_texts[i]) line += " " + text;
    } else {
      const bool integer = p.kind == SearchParam::Kind::kInt;
      auto number = [&](double v) {
        return integer ? std::to_string(static_cast<int64_t>(v)) : config::python_float_repr(v);
      };
      line += std::string(integer ? "int" : "float") + " in [" + number(p.low) + ", " + number(p.high) + "]";
      if (p.log) line += ", log";
      if (p.step > 0 && !(integer && p.step == 1)) line += ", step " + number(p.step);
    }
    out.push_back(line);
  }
  return out;
}

OptunaSpace optuna_space(const std::vector<std::pair<std::string, std::string>>& sweeper_params,
                         const std::vector<Override>& overrides, const config::GroupOptionsLookup& group_options) {
  // As Hydra's sweeper: params, then the command line, later entries of a key replacing earlier
  // ones in place; a key with a plain value anywhere is fixed and leaves the space.
  struct Entry {
    Override override;
    std::string where;
  };
  std::vector<Entry> sweeps;
  std::map<std::string, size_t> sweep_index;
  std::vector<std::string> fixed_keys;
  std::map<std::string, std::string> fixed_text;
  auto add = [&](Override o, std::string where_text) {
    if (config::is_hydra_override(o.text)) return;
    const std::string key = o.prefix() + o.key_with_package();
    if (!o.is_sweep()) {
      if (!fixed_text.count(key)) fixed_keys.push_back(key);
      fixed_text[key] = key + "=" + o.value_text;
      return;
    }
    if (auto it = sweep_index.find(key); it != sweep_index.end()) {
      sweeps[it->second] = Entry{std::move(o), std::move(where_text)};
    } else {
      sweep_index[key] = sweeps.size();
      sweeps.push_back(Entry{std::move(o), std::move(where_text)});
    }
  };
  for (const auto& [key, value] : sweeper_params) {
    add(config::parse_sweeper_param(key, value, "write a search space, e.g. choice(32, 64) or interval(0.001, 0.1)"),
        "hydra.sweeper.params." + key);
  }
  for (const Override& o : overrides) add(o, "override '" + o.text + "'");

  OptunaSpace space;
  std::mt19937_64 shuffle_rng(0);
  for (const Entry& entry : sweeps) {
    const Override& o = entry.override;
    const std::string key = o.prefix() + o.key_with_package();
    if (fixed_text.count(key)) continue;  // a fixed value beats a search space, as in Hydra's sweeper
    const config::Sweep& sweep = o.sweep;
    bool log = false;
    for (const std::string& tag : sweep.tags) log = log || tag == "log";
    try {
      if (sweep.kind == SweepKind::kInterval) {
        if (sweep.interval_int) {
          space.params.push_back(int_param(key, static_cast<int64_t>(sweep.interval_start),
                                           static_cast<int64_t>(sweep.interval_end), 1, log));
        } else {
          space.params.push_back(float_param(key, sweep.interval_start, sweep.interval_end, 0, log));
        }
        space.choice_texts.emplace_back();
      } else if (sweep.kind == SweepKind::kRange && !sweep.shuffle) {
        const bool floats = sweep.range_start.type() == NodeType::kFloat ||
                            sweep.range_stop.type() == NodeType::kFloat || sweep.range_step.type() == NodeType::kFloat;
        auto number = [](const Node& n) {
          return n.type() == NodeType::kFloat ? n.as_float() : static_cast<double>(n.as_int());
        };
        const double step = sweep.range_step.is_null() ? 1.0 : number(sweep.range_step);
        if (floats) {
          space.params.push_back(float_param(key, number(sweep.range_start), number(sweep.range_stop), step, log));
        } else {
          space.params.push_back(
              int_param(key, sweep.range_start.as_int(), sweep.range_stop.as_int(), static_cast<int64_t>(step), log));
        }
        space.choice_texts.emplace_back();
      } else {
        std::optional<std::vector<std::string>> options;
        if (sweep.kind == SweepKind::kGlob && group_options) options = group_options(o.key);
        std::vector<std::string> texts = config::sweep_value_texts(o, options ? &*options : nullptr, shuffle_rng);
        space.params.push_back(categorical_param(key, static_cast<int64_t>(texts.size())));
        space.choice_texts.push_back(std::move(texts));
      }
    } catch (const Error& e) {
      throw Error(entry.where, e.problem(), e.fix());
    }
    space.keys.push_back(key);
  }
  for (const std::string& key : fixed_keys) space.fixed.push_back(fixed_text[key]);
  if (space.params.empty()) {
    throw Error("hydra.sweeper.params", "the Optuna sweeper has nothing to search: no parameter has a search space",
                "give one under hydra.sweeper.params or on the command line, e.g. "
                "'optimizer.lr=tag(log, interval(1e-4, 1e-1))'");
  }
  return space;
}

}  // namespace trainer::launch
