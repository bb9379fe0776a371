// hydra/sweeper=optuna: the study, its file, and the job source the local launcher asks for
// trials (see optuna_sweep.h).
#include "trainer/launch/optuna_sweep.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include "trainer/config/interpolation.h"
#include "trainer/config/node.h"
#include "trainer/config/override.h"
#include "trainer/config/python_str.h"
#include "trainer/config/random_sweep.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/config/sweeper.h"
#include "trainer/config/yaml.h"
#include "trainer/launch/asha.h"
#include "trainer/launch/evaluation_run.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/job_status.h"
#include "trainer/launch/launcher.h"
#include "trainer/launch/local_launcher.h"
#include "trainer/launch/mlflow_sweep_run.h"
#include "trainer/launch/new_directories.h"
#include "trainer/launch/optuna_search.h"
#include "trainer/launch/slurm_launcher.h"
#include "trainer/launch/sweep_lock.h"
#include "trainer/launch/sweep_plan.h"
#include "trainer/launch/sweep_planner.h"
#include "trainer/launch/sweep_summary.h"
#include "trainer/launch/tpe_sampler.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

namespace {

using config::Node;

constexpr const char* kStudyFormat = "trainer optuna study 1";

std::string study_file(const std::string& sweep_dir) {
  return (fs::path(sweep_state_dir(sweep_dir)) / "study.yaml").string();
}
// Where a study kept in hydra.sweeper.storage is named from its sweep directory.
std::string storage_pointer(const std::string& sweep_dir) {
  return (fs::path(sweep_state_dir(sweep_dir)) / "study_storage").string();
}

const char* trial_state_name(TrialState state) {
  switch (state) {
    case TrialState::kRunning:
      return "running";
    case TrialState::kComplete:
      return "complete";
    case TrialState::kPruned:
      return "pruned";
    case TrialState::kFailed:
      return "failed";
  }
  return "failed";
}

TrialState parse_trial_state(const std::string& name) {
  if (name == "running") return TrialState::kRunning;
  if (name == "complete") return TrialState::kComplete;
  if (name == "pruned") return TrialState::kPruned;
  return TrialState::kFailed;
}

struct Study {
  std::string path;
  std::string name, sweep_dir, direction, metric, sampler;
  std::vector<std::string> space;
  std::vector<std::string> fixed;  // the overrides every trial gets (Hydra's own excepted)
  StudyOrigin origin;
  std::string rng;
  uint64_t seed = 0;  // the seed the study began with
  std::vector<SearchTrial> trials;
  std::vector<std::string> trial_dirs;  // the sweep directory each trial ran in
};

Node strings_node(const std::vector<std::string>& values) {
  Node list = Node::list();
  for (const auto& v : values) list.push_back(Node::string(v));
  return list;
}

Node optional_string(const std::optional<std::string>& value) { return value ? Node::string(*value) : Node(); }

Node study_node(const Study& study) {
  Node root = Node::map();
  root.set("format", Node::string(kStudyFormat));
  root.set("study_name", Node::string(study.name));
  root.set("sweep_dir", Node::string(study.sweep_dir));
  root.set("direction", Node::string(study.direction));
  root.set("metric", Node::string(study.metric));
  root.set("sampler", Node::string(study.sampler));
  root.set("space", strings_node(study.space));
  root.set("fixed", strings_node(study.fixed));
  Node origin = Node::map();
  origin.set("cwd", Node::string(study.origin.cwd));
  origin.set("command", Node::string(study.origin.command));
  origin.set("config_path", optional_string(study.origin.config_path));
  origin.set("config_dir", optional_string(study.origin.config_dir));
  origin.set("config_name", optional_string(study.origin.config_name));
  origin.set("overrides", strings_node(study.origin.overrides));
  root.set("origin", std::move(origin));
  root.set("seed", Node::string(std::to_string(study.seed)));
  root.set("rng", Node::string(study.rng));
  Node trials = Node::list();
  for (size_t i = 0; i < study.trials.size(); ++i) {
    const SearchTrial& t = study.trials[i];
    Node trial = Node::map();
    trial.set("number", Node::integer(t.number));
    trial.set("state", Node::string(trial_state_name(t.state)));
    Node params = Node::list();
    for (double p : t.params) params.push_back(Node::floating(p));
    trial.set("params", std::move(params));
    trial.set("value", t.state == TrialState::kComplete ? Node::floating(t.value) : Node());
    Node intermediate = Node::list();
    for (const auto& [step, value] : t.intermediate) {
      Node pair = Node::list();
      pair.push_back(Node::integer(step));
      pair.push_back(Node::floating(value));
      intermediate.push_back(std::move(pair));
    }
    trial.set("intermediate", std::move(intermediate));
    trial.set("sweep_dir", Node::string(study.trial_dirs[i]));
    trials.push_back(std::move(trial));
  }
  root.set("trials", std::move(trials));
  return root;
}

void save_study(const Study& study) {
  std::error_code ec;
  fs::create_directories(fs::path(study.path).parent_path(), ec);
  write_file_atomically(study.path, config::to_yaml(study_node(study)));
}

std::string text_of(const Node& root, const char* key) {
  const Node* node = root.find(key);
  return node != nullptr && node->is_string() ? node->as_string() : std::string();
}

double number_of(const Node& node) {
  if (node.type() == config::NodeType::kInt) return static_cast<double>(node.as_int());
  if (node.type() == config::NodeType::kFloat) return node.as_float();
  throw Error("", "a number was expected");
}

std::optional<Study> load_study(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  Study study;
  study.path = path;
  try {
    const Node root = config::load_yaml_file(path).root;
    if (text_of(root, "format") != kStudyFormat) throw Error("", "it is not a study file of this trainer");
    study.name = text_of(root, "study_name");
    study.sweep_dir = text_of(root, "sweep_dir");
    study.direction = text_of(root, "direction");
    study.metric = text_of(root, "metric");
    study.sampler = text_of(root, "sampler");
    study.rng = text_of(root, "rng");
    if (!study.rng.empty()) config::SweepRandom(0).set_state(study.rng);  // throws for a damaged state
    if (const std::string seed = text_of(root, "seed"); !seed.empty()) study.seed = std::stoull(seed);
    if (root.find("trials") == nullptr || !root.find("trials")->is_list()) throw Error("", "it has no list of trials");
    if (const Node* space = root.find("space"); space && space->is_list()) {
      for (const Node& line : space->items()) study.space.push_back(line.is_string() ? line.as_string() : "");
    }
    if (const Node* fixed = root.find("fixed"); fixed && fixed->is_list()) {
      for (const Node& o : fixed->items()) study.fixed.push_back(o.is_string() ? o.as_string() : "");
    }
    if (const Node* origin = root.find("origin"); origin && origin->is_map()) {
      study.origin.cwd = text_of(*origin, "cwd");
      study.origin.command = text_of(*origin, "command");
      for (auto [key, field] :
           {std::pair{"config_path", &study.origin.config_path}, std::pair{"config_dir", &study.origin.config_dir},
            std::pair{"config_name", &study.origin.config_name}}) {
        const Node* value = origin->find(key);
        if (value != nullptr && value->is_string()) *field = value->as_string();
      }
      if (const Node* list = origin->find("overrides"); list && list->is_list()) {
        for (const Node& o : list->items()) study.origin.overrides.push_back(o.is_string() ? o.as_string() : "");
      }
    }
    if (const Node* trials = root.find("trials"); trials && trials->is_list()) {
      for (const Node& node : trials->items()) {
        SearchTrial t;
        t.number = node.find("number")->as_int();
        t.state = parse_trial_state(text_of(node, "state"));
        for (const Node& p : node.find("params")->items()) t.params.push_back(number_of(p));
        if (const Node* value = node.find("value"); value && !value->is_null()) t.value = number_of(*value);
        if (const Node* steps = node.find("intermediate"); steps && steps->is_list()) {
          for (const Node& pair : steps->items()) {
            t.intermediate[pair.items().at(0).as_int()] = number_of(pair.items().at(1));
          }
        }
        study.trials.push_back(std::move(t));
        study.trial_dirs.push_back(text_of(node, "sweep_dir"));
      }
    }
  } catch (const Error& error) {
    throw Error(path, "the Optuna study cannot be read: " + error.problem() + "; nothing was run",
                "Restore the file, or delete the sweep directory (and this file) to start the study again.");
  } catch (const std::exception& error) {
    throw Error(path, std::string("the Optuna study cannot be read: ") + error.what() + "; nothing was run",
                "Restore the file, or delete the sweep directory (and this file) to start the study again.");
  }
  return study;
}

// The points composed before anything runs: every parameter at its low and its high end, and
// every choice of every categorical parameter (the others at their low end).
std::vector<std::vector<double>> corner_points(const OptunaSpace& space) {
  std::vector<double> low, high;
  for (const SearchParam& p : space.params) {
    const bool categorical = p.kind == SearchParam::Kind::kCategorical;
    low.push_back(categorical ? 0.0 : p.low);
    high.push_back(categorical ? static_cast<double>(p.choices - 1) : p.high);
  }
  std::vector<std::vector<double>> points = {low};
  if (high != low) points.push_back(high);
  for (size_t i = 0; i < space.params.size(); ++i) {
    const SearchParam& p = space.params[i];
    if (p.kind != SearchParam::Kind::kCategorical) continue;
    for (int64_t c = 1; c + 1 < p.choices; ++c) {
      std::vector<double> point = low;
      point[i] = static_cast<double>(c);
      points.push_back(std::move(point));
    }
  }
  return points;
}

// "a: x -> y" lines where a stored study and this command differ.
std::vector<std::string> study_differences(const Study& stored, const Study& now) {
  std::vector<std::string> out;
  auto compare = [&](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(what + ": " + a + " in the study, " + b + " now");
  };
  compare("direction", stored.direction, now.direction);
  compare("objective", stored.metric, now.metric);
  compare("sampler", stored.sampler, now.sampler);
  const size_t n = std::max(stored.space.size(), now.space.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string a = i < stored.space.size() ? stored.space[i] : "(none)";
    const std::string b = i < now.space.size() ? now.space[i] : "(none)";
    compare("parameter " + std::to_string(i + 1), a, b);
  }
  auto joined = [](const std::vector<std::string>& words) {
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    return text.empty() ? std::string("(none)") : text;
  };
  compare("fixed overrides", joined(stored.fixed), joined(now.fixed));
  return out;
}

std::string sampler_text(const OptunaSettings& s) {
  if (s.sampler == OptunaSettings::Sampler::kRandom) return "random";
  return "TPE (n_startup_trials=" + std::to_string(s.tpe.n_startup_trials) +
         ", n_ei_candidates=" + std::to_string(s.tpe.n_ei_candidates) +
         ", multivariate=" + (s.tpe.multivariate ? "true" : "false") +
         ", constant_liar=" + (s.tpe.constant_liar ? "true" : "false") + ")";
}

bool is_better(double a, double b, bool maximize) { return maximize ? a > b : a < b; }

// Asks the sampler for trials as the launcher frees slots, and tells the study how they ended.
class StudySource : public JobSource {
 public:
  StudySource(const config::Composer& composer, SweepPlan& plan, Study& study, const OptunaSettings& settings,
              const OptunaSpace& space, std::vector<std::string> hydra_overrides, const Node& first_config,
              int parallel)
      : composer_(composer),
        plan_(plan),
        study_(study),
        settings_(settings),
        space_(space),
        hydra_overrides_(std::move(hydra_overrides)),
        first_config_(first_config),
        parallel_(parallel),
        sampler_(space.params, settings.tpe) {
    if (!study_.rng.empty()) sampler_.set_rng_state(study_.rng);
    // A resumed study already past max_failure_rate starts no new trial (each resume started one).
    int failed = 0, ended = 0;
    for (const SearchTrial& t : study_.trials) {
      failed += t.state == TrialState::kFailed;
      ended += t.state != TrialState::kRunning;
    }
    if (ended > 0 && static_cast<double>(failed) / static_cast<double>(ended) > settings_.max_failure_rate) {
      stopped_ = true;
      std::cerr << "[optuna] " << failed << " of " << ended << " ended trials failed, more than max_failure_rate="
                << config::python_float_repr(settings_.max_failure_rate)
                << ": no new trial starts (raise it to let the study go on)" << std::endl;
    }
  }

  std::optional<int> next_job() override {
    if (remaining() <= 0) return std::nullopt;
    const int number = static_cast<int>(study_.trials.size());
    SearchTrial trial;
    trial.number = number;
    trial.state = TrialState::kRunning;
    trial.params =
        settings_.sampler == OptunaSettings::Sampler::kRandom ? sampler_.random_point() : sampler_.ask(study_.trials);
    std::vector<std::string> overrides = hydra_overrides_;
    for (std::string& o : space_.overrides(trial.params)) overrides.push_back(std::move(o));

    Node composed;
    compose_jobs(composer_, {config::SweepJob{number, overrides}}, plan_.command,
                 [&](const config::SweepJob&, config::ComposeResult&& result) { composed = std::move(result.config); });
    PlannedJob job;
    job.number = number;
    job.overrides = overrides;
    job.run_dir = job_run_dir(composed, plan_.sweep_dir);
    if (plan_.command == "fit") {
      const Node* ckpt = composed.find("ckpt_path");
      if (ckpt == nullptr || ckpt->is_null()) {
        config::ResolveContext ctx;
        ctx.hydra = composed.find("hydra");
        const CheckpointDirectory directory = job_checkpoint_directory(composed, job.run_dir, ctx);
        refuse_overwriting_checkpoints(directory.path, directory.key);
      }
    }
    write_job_record(plan_.sweep_dir, JobRecord{plan_.command, job, composed});
    plan_.jobs.push_back(std::move(job));
    write_plan_index(plan_, first_config_);
    study_.trials.push_back(std::move(trial));
    study_.trial_dirs.push_back(plan_.sweep_dir);
    study_.rng = sampler_.rng_state();
    save_study(study_);
    return number;
  }

  void job_ended(int number) override {
    if (number < 0 || static_cast<size_t>(number) >= study_.trials.size()) return;
    SearchTrial& trial = study_.trials[static_cast<size_t>(number)];
    const std::optional<JobStatus> status = read_job_status(plan_.sweep_dir, number);
    const JobState state = effective_state(status);
    const MetricHistory history = objective_history(number);
    trial.intermediate = per_epoch(history);
    std::string line = "[optuna] trial #" + std::to_string(number) + ": ";
    if (state == JobState::kDone && history.last) {
      trial.state = TrialState::kComplete;
      trial.value = *history.last;
      line += settings_.metric + " " + metric_text(trial.value);
    } else if (state == JobState::kDone) {
      trial.state = TrialState::kFailed;
      JobStatus failed = status.value_or(JobStatus{});
      failed.state = JobState::kFailed;
      bool has_csv = false;
      for (const PlannedJob& job : plan_.jobs) {
        if (job.number == number) has_csv = fs::exists(fs::path(job.run_dir) / "metrics.csv");
      }
      if (!has_csv) {
        // The objective is read from metrics.csv: a logger list without csv leaves nothing to read.
        failed.error = "the job wrote no metrics.csv, where the study reads " + settings_.metric +
                       " from; keep logger.csv on (logger=mlflow does; a logger config of your own must list csv)";
        line += "failed: " + failed.error;
      } else {
        failed.error = "the job logged no " + settings_.metric + ", the study's objective";
        line += "failed: the job logged no " + settings_.metric + " (the objective, from " + settings_.metric_from +
                "); name a metric it logs";
      }
      write_job_status(plan_.sweep_dir, number, failed);
    } else if (state == JobState::kStoppedEarly) {
      trial.state = TrialState::kPruned;
      line += "pruned";
    } else if (state == JobState::kFailed) {
      trial.state = TrialState::kFailed;
      line += "failed";
    } else {
      trial.state = TrialState::kRunning;  // interrupted: it runs again when the study resumes
      line += "interrupted; it runs again when the study resumes";
    }
    int failed = 0, ended = 0;  // over the whole study, a resumed one included
    for (const SearchTrial& t : study_.trials) {
      failed += t.state == TrialState::kFailed;
      ended += t.state != TrialState::kRunning;
    }
    const SearchTrial* best = best_trial(study_, settings_.tpe.maximize);
    if (best != nullptr) line += " | best #" + std::to_string(best->number) + " " + metric_text(best->value);
    std::cerr << line << std::endl;
    if (!stopped_ && ended > 0 &&
        static_cast<double>(failed) / static_cast<double>(ended) > settings_.max_failure_rate) {
      stopped_ = true;
      std::cerr << "[optuna] " << failed << " of " << ended << " ended trials failed, more than max_failure_rate="
                << config::python_float_repr(settings_.max_failure_rate) << ": no more trials start" << std::endl;
    }
    save_study(study_);
  }

  bool watches() const override { return settings_.pruner.kind != PrunerSettings::Kind::kNone; }

  // The trial's epochs since the last call, each judged by the pruner; true stops the trial.
  bool prune(int number) override {
    if (number < 0 || static_cast<size_t>(number) >= study_.trials.size()) return false;
    SearchTrial& trial = study_.trials[static_cast<size_t>(number)];
    const std::map<int64_t, double> epochs = per_epoch(objective_history(number));
    int64_t& judged = judged_[number];
    for (const auto& [t, value] : epochs) {
      trial.intermediate[t] = value;
      if (t <= judged) continue;
      judged = t;
      std::string why;
      if (!judge(number, t, value, why)) continue;
      std::cerr << "[optuna] trial #" << number << " pruned after " << t << " epoch(s): " << settings_.metric << " "
                << metric_text(value) << " (" << why << ")" << std::endl;
      return true;
    }
    return false;
  }

  int remaining() const override {
    if (stopped_) return 0;
    return std::max<int>(0, static_cast<int>(settings_.n_trials) - static_cast<int>(study_.trials.size()));
  }
  int parallel() const override { return parallel_; }
  bool stopped() const { return stopped_; }

  // The objective's values in the trial's metrics.csv (for a name ending in _best that the job does
  // not log, the running best of the metric before it).
  MetricHistory objective_history(int number) const {
    std::string run_dir;
    for (const PlannedJob& job : plan_.jobs) {
      if (job.number == number) run_dir = job.run_dir;
    }
    const std::string metrics_csv = (fs::path(run_dir) / "metrics.csv").string();
    const char* mode = settings_.tpe.maximize ? "max" : "min";
    MetricHistory history = read_metric_history(metrics_csv, settings_.metric, mode);
    // lightning-hydra-template's `val/acc_best`: the best value of val/acc so far, which its module
    // logs itself; from a job that logs only val/acc, the best of its values by the direction.
    const std::string suffix = "_best";
    const std::string& name = settings_.metric;
    if (history.points.empty() && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      history = read_metric_history(metrics_csv, name.substr(0, name.size() - suffix.size()), mode);
      std::optional<double> best;
      for (auto& point : history.points) {
        if (!best || is_better(point.second, *best, settings_.tpe.maximize)) best = point.second;
        point.second = *best;
      }
      history.last = best;
    }
    return history;
  }

  // One value per epoch, 1-based (t = epochs done): the epoch's last value.
  static std::map<int64_t, double> per_epoch(const MetricHistory& history) {
    std::map<int64_t, double> out;
    for (const auto& [epoch, value] : history.points) out[static_cast<int64_t>(epoch) + 1] = value;
    return out;
  }

  // Whether trial `number` stops after epoch t with `value` there.
  bool judge(int number, int64_t t, double value, std::string& why) {
    const PrunerSettings& p = settings_.pruner;
    const bool maximize = settings_.tpe.maximize;
    if (std::isnan(value)) {
      why = "not a number";
      return true;
    }
    if (p.kind == PrunerSettings::Kind::kSuccessiveHalving) {
      if (!halving_) start_halving();
      const bool stop = halving_->on_result(number, t, value) == AshaScheduler::Decision::kStop;
      if (stop) why = "below the top 1/" + config::python_float_repr(p.reduction_factor) + " at its rung";
      return stop;
    }
    // The median pruner, as Optuna's: the trial's best so far against the completed trials' median
    // at this epoch.
    if (t <= p.n_warmup_steps || (t - p.n_warmup_steps) % p.interval_steps != 0) return false;
    std::vector<double> others;
    int64_t complete = 0;
    for (const SearchTrial& other : study_.trials) {
      if (other.state != TrialState::kComplete) continue;
      ++complete;
      if (auto it = other.intermediate.find(t); it != other.intermediate.end() && !std::isnan(it->second)) {
        others.push_back(it->second);
      }
    }
    if (complete < p.n_startup_trials || static_cast<int64_t>(others.size()) < p.n_min_trials || others.empty()) {
      return false;
    }
    std::sort(others.begin(), others.end());
    const double position = 0.5 * static_cast<double>(others.size() - 1);
    const auto below = static_cast<size_t>(std::floor(position));
    const size_t above = std::min(below + 1, others.size() - 1);
    const double median = others[below] + (others[above] - others[below]) * (position - static_cast<double>(below));
    double best = value;
    for (const auto& [step, v] : study_.trials[static_cast<size_t>(number)].intermediate) {
      if (step <= t && is_better(v, best, maximize)) best = v;
    }
    const bool stop = maximize ? best < median : best > median;
    if (stop) {
      why = "its best " + metric_text(best) + " is " + (maximize ? "below" : "above") + " the median " +
            metric_text(median) + " of " + std::to_string(others.size()) + " completed trial(s) at that epoch";
    }
    return stop;
  }

  // ASHA's rungs for successive halving, holding every result the study has (a resumed one too).
  void start_halving() {
    AshaOptions options;
    options.metric = settings_.metric;
    options.mode = settings_.tpe.maximize ? "max" : "min";
    options.grace_period = settings_.pruner.min_resource;
    for (int64_t i = 0; i < settings_.pruner.min_early_stopping_rate; ++i) {
      options.grace_period =
          static_cast<int64_t>(static_cast<double>(options.grace_period) * settings_.pruner.reduction_factor);
    }
    options.reduction_factor = settings_.pruner.reduction_factor;
    options.max_t = int64_t{1} << 40;
    halving_ = std::make_unique<AshaScheduler>(options);
    for (const SearchTrial& t : study_.trials) {
      for (const auto& [step, value] : t.intermediate) {
        halving_->on_result(static_cast<int>(t.number), step, value);
        judged_[static_cast<int>(t.number)] = step;
      }
    }
  }

  static const SearchTrial* best_trial(const Study& study, bool maximize) {
    const SearchTrial* best = nullptr;
    for (const SearchTrial& t : study.trials) {
      if (t.state == TrialState::kComplete && (best == nullptr || is_better(t.value, best->value, maximize))) best = &t;
    }
    return best;
  }

 private:
  const config::Composer& composer_;
  SweepPlan& plan_;
  Study& study_;
  const OptunaSettings& settings_;
  const OptunaSpace& space_;
  std::vector<std::string> hydra_overrides_;
  const Node& first_config_;
  int parallel_;
  TpeSampler sampler_;
  bool stopped_ = false;
  std::map<int, int64_t> judged_;           // trial -> the last epoch the pruner judged
  std::unique_ptr<AshaScheduler> halving_;  // successive halving's rungs
};

struct Prepared {
  config::ComposeResult base;
  OptunaSettings settings;
  OptunaSpace space;
  std::vector<std::string> hydra_overrides;
};

Prepared prepare(const config::Composer& composer, const std::vector<config::Override>& overrides) {
  Prepared p;
  std::vector<config::Override> fixed;
  for (const auto& o : overrides) {
    if (!o.is_sweep()) fixed.push_back(o);
    if (config::is_hydra_override(o.text)) {
      if (o.is_sweep()) {
        throw Error("override '" + o.text + "'", "Hydra's own settings cannot be searched",
                    "give " + o.key + " one value");
      }
      p.hydra_overrides.push_back(o.text);
    }
  }
  p.base = composer.compose(fixed, config::RunMode::kMultirun);
  const Node* sweeper = config::select(p.base.config, "hydra.sweeper");
  std::vector<std::pair<std::string, std::string>> params;
  if (const Node* node = config::select(p.base.config, "hydra.sweeper.params"); node && node->is_map()) {
    for (const auto& entry : node->entries()) {
      params.emplace_back(entry.key,
                          entry.value.is_string() ? entry.value.as_string() : config::python_str(entry.value));
    }
  }
  Node job_config = p.base.config;
  job_config.erase("hydra");
  const Node* sampler_choice = config::select(p.base.config, "hydra.runtime.choices");
  sampler_choice =
      sampler_choice != nullptr && sampler_choice->is_map() ? sampler_choice->find("hydra/sweeper/sampler") : nullptr;
  p.settings =
      optuna_settings(sweeper ? *sweeper : Node(), job_config,
                      sampler_choice != nullptr && sampler_choice->is_string() ? sampler_choice->as_string() : "");
  auto lookup = [&composer](const std::string& group) { return composer.group_options(group); };
  p.space = optuna_space(params, overrides, lookup);
  return p;
}

// How many trials run at once: the launcher's slots (basic: 1) capped by hydra.sweeper.n_jobs.
int trials_at_once(const SweepPlan& plan, const OptunaSettings& settings) {
  const Node* target = plan.launcher.is_map() ? plan.launcher.find("_target_") : nullptr;
  const std::string name = target != nullptr && target->is_string() ? target->as_string() : "";
  if (name.find("Slurm") != std::string::npos) {
    // Each trial is a SLURM job of its own: as many at once as the sweeper and array_parallelism allow.
    if (const Node* wait = plan.launcher.find("wait");
        wait != nullptr && wait->type() == config::NodeType::kBool && !wait->as_bool()) {
      throw Error("hydra.launcher.wait",
                  "the Optuna sweeper asks for each trial when one ends, so it waits for its trials under SLURM; "
                  "nothing was run",
                  "leave hydra.launcher.wait=true; to leave the sweep running, start it in tmux, screen or a batch "
                  "job of its own");
    }
    const int array_parallelism = slurm_array_parallelism(plan.launcher);
    const int cap = array_parallelism > 0 ? array_parallelism : std::numeric_limits<int>::max();
    return std::max(1, std::min(settings.n_jobs < 0 ? cap : static_cast<int>(settings.n_jobs), cap));
  }
  if (name.find("BasicLauncher") != std::string::npos || name.empty()) return 1;
  const LocalLauncherOptions options = local_launcher_options(plan.launcher, "local");
  const int cores = static_cast<int>(usable_cpus().size());
  const int launcher_slots = options.n_jobs < 0 ? cores : options.n_jobs;
  const int sweeper_slots = settings.n_jobs < 0 ? cores : static_cast<int>(settings.n_jobs);
  return std::max(1, std::min(launcher_slots, sweeper_slots));
}

}  // namespace

namespace {

// The jobs of the space's corners: each parameter at its low and high end, each choice.
std::vector<config::SweepJob> corner_jobs(const Prepared& p) {
  std::vector<config::SweepJob> corners;
  for (const auto& point : corner_points(p.space)) {
    std::vector<std::string> job_overrides = p.hydra_overrides;
    for (std::string& o : p.space.overrides(point)) job_overrides.push_back(std::move(o));
    corners.push_back(config::SweepJob{static_cast<int>(corners.size()), std::move(job_overrides)});
  }
  return corners;
}

// `error` (from composing or checking the corners) with the corners listed.
Error corner_error(const Error& error, const Prepared& p, const std::vector<config::SweepJob>& corners) {
  std::string listed;
  for (const config::SweepJob& corner : corners) {
    listed += "\n  job " + std::to_string(corner.number) + ":";
    for (size_t i = p.hydra_overrides.size(); i < corner.overrides.size(); ++i) listed += " " + corner.overrides[i];
  }
  return Error(error.where(),
               "the search space reaches trials that are not valid (checked before the study starts: each parameter "
               "at its low and high end, each choice, as the jobs below): " +
                   error.problem() + "\nThe jobs checked:" + listed,
               error.fix());
}

}  // namespace

bool is_optuna_sweeper(const Node& hydra_sweeper) {
  const Node* target = hydra_sweeper.is_map() ? hydra_sweeper.find("_target_") : nullptr;
  return target != nullptr && target->is_string() && target->as_string() == config::kOptunaSweeperTarget;
}

std::string optuna_sweep_outline(const config::Composer& composer, const std::vector<config::Override>& overrides) {
  const Prepared p = prepare(composer, overrides);
  // The corners composed (not checked against trainer's schema, as Hydra's --cfg checks nothing):
  // a key that is not in the config or a group option that does not exist is said here too.
  const std::vector<config::SweepJob> corners = corner_jobs(p);
  try {
    compose_jobs(composer, corners, /*check_for=*/"", [](const config::SweepJob&, config::ComposeResult&&) {});
  } catch (const Error& error) {
    throw corner_error(error, p, corners);
  }
  std::string out = "# Optuna sweeper: " + sampler_text(p.settings) + ", " +
                    (p.settings.tpe.maximize ? "maximize " : "minimize ") + p.settings.metric + " (from " +
                    p.settings.metric_from + "), " + std::to_string(p.settings.n_trials) + " trials over:\n";
  for (const std::string& line : p.space.describe()) out += "#   " + line + "\n";
  return out;
}

std::optional<StudyOrigin> optuna_study_origin(const std::string& sweep_dir) {
  std::string path = study_file(sweep_dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::ifstream pointer(storage_pointer(sweep_dir));
    if (!pointer || !std::getline(pointer, path)) {
      // A sweep of the Optuna sweeper whose study is gone would resume as a fixed list of jobs.
      const fs::path multirun = fs::path(sweep_dir) / "multirun.yaml";
      if (fs::exists(multirun, ec)) {
        const Node root = config::load_yaml_file(multirun.string()).root;
        const Node* sweeper = config::select(root, "hydra.sweeper");
        if (sweeper != nullptr && is_optuna_sweeper(*sweeper)) {
          throw Error(
              sweep_dir,
              "this is an Optuna study's sweep directory, but its study (" + path + ") is missing; nothing was run",
              "Restore the study file to continue the study.");
        }
      }
      return std::nullopt;
    }
  }
  std::optional<Study> study = load_study(path);
  if (!study) {
    throw Error(sweep_dir, "the study this directory names (" + path + ") is missing; nothing was run",
                "Restore the study file to continue the study.");
  }
  const fs::path here = fs::weakly_canonical(fs::absolute(sweep_dir), ec);
  const fs::path recorded = fs::weakly_canonical(study->sweep_dir, ec);
  if (here != recorded) {
    throw Error(sweep_dir,
                "this study's trials ran in " + study->sweep_dir +
                    " (their run directories and checkpoints are recorded there), not here; nothing was run",
                "Resume it from " + study->sweep_dir + " (move the directory back if it was moved).");
  }
  return study->origin;
}

int run_optuna_sweep(const config::Composer& composer, const StudyOrigin& origin,
                     const std::vector<config::Override>& overrides) {
  Prepared p = prepare(composer, overrides);
  OptunaSettings& settings = p.settings;
  if (!settings.seeded) {  // as Optuna: a fresh seed (said below, and kept in the study's generator state)
    std::random_device device;
    settings.tpe.seed = (static_cast<uint64_t>(device()) << 32) ^ device();
  }

  // Every corner of the space composed and checked before anything runs.
  const std::vector<config::SweepJob> corners = corner_jobs(p);
  ComposedSweep checked;
  try {
    checked = plan_jobs(composer, origin.command, corners);
  } catch (const Error& error) {
    throw corner_error(error, p, corners);
  }
  SweepPlan plan = checked.plan;
  plan.jobs.clear();
  const int at_once = trials_at_once(plan, settings);
  const Node first_config = checked.configs.front();
  // One study at a time in a sweep directory (sweep_lock.h), from before the study is read; a new
  // directory that the checks below refuse is taken back.
  struct TakenBackUnlessKept {
    NewDirectories made;
    bool kept = false;
    ~TakenBackUnlessKept() {
      if (!kept) made.remove_if_no_results({SweepLock::kRelativePath});
    }
  } new_directory{NewDirectories(plan.sweep_dir)};
  const SweepLock lock(plan.sweep_dir);

  Study now;
  now.sweep_dir = plan.sweep_dir;
  now.direction = settings.tpe.maximize ? "maximize" : "minimize";
  now.metric = settings.metric;
  now.sampler = settings.sampler == OptunaSettings::Sampler::kRandom ? "random" : "tpe";
  now.space = p.space.describe();
  now.fixed = p.space.fixed;
  now.origin = origin;
  now.seed = settings.tpe.seed;
  now.name = settings.study_name.empty() ? fs::path(plan.sweep_dir).filename().string() : settings.study_name;
  now.path = settings.storage.empty() ? study_file(plan.sweep_dir)
                                      : fs::absolute(settings.storage).lexically_normal().string();

  Study study = now;
  std::optional<Study> stored = load_study(now.path);
  if (!stored && has_sweep_plan(plan.sweep_dir) && !read_sweep_plan(plan.sweep_dir).jobs.empty()) {
    if (const SweepPlan other = read_sweep_plan(plan.sweep_dir); !is_optuna_sweeper(other.sweeper)) {
      throw Error(plan.sweep_dir,
                  "this directory holds a sweep of another sweeper (its jobs were planned, not asked of an Optuna "
                  "study); nothing was run",
                  "Give this search a hydra.sweep.dir of its own; trainer sweep resume " + plan.sweep_dir +
                      " continues the sweep that is there.");
    }
    throw Error(
        plan.sweep_dir,
        "this sweep directory holds trials but not their Optuna study (" + now.path + " is missing); nothing was run",
        "Restore the study file to continue the study, or give this search a new hydra.sweep.dir.");
  }
  if (stored) {
    const std::vector<std::string> differences = study_differences(*stored, now);
    if (!differences.empty() || (!settings.study_name.empty() && stored->name != now.name)) {
      std::string listed;
      for (const auto& d : differences) listed += "\n  " + d;
      if (!settings.study_name.empty() && stored->name != now.name) {
        listed += "\n  study_name: " + stored->name + " in the study, " + now.name + " now";
      }
      throw Error(now.path, "this Optuna study was started with another search; nothing was run:" + listed,
                  "\nContinue it with the command that started it (or trainer sweep resume " + stored->sweep_dir +
                      "), or give this search its own hydra.sweep.dir (and hydra.sweeper.storage).");
    }
    if (settings.seeded && stored->seed != settings.tpe.seed && !stored->trials.empty()) {
      std::cerr << "[optuna] note: the sampler continues from the study's saved state; hydra.sweeper.sampler.seed="
                << settings.tpe.seed << " is not used (the study began with seed " << stored->seed << ")" << std::endl;
    }
    study = std::move(*stored);
    study.origin = origin;
    study.sweep_dir = plan.sweep_dir;
    study.path = now.path;
  }

  // The jobs this sweep directory already holds (a resumed study) stay as they are.
  if (has_sweep_plan(plan.sweep_dir)) {
    SweepPlan on_disk = read_sweep_plan(plan.sweep_dir);
    plan.jobs = on_disk.jobs;
  }
  // A config file edited since the study's trials were composed: its new trials would be composed
  // from the edited files and its old ones resumed as they were, one study judging two budgets.
  if (!plan.jobs.empty()) {
    std::vector<config::SweepJob> trials;
    for (const PlannedJob& job : plan.jobs) trials.push_back(config::SweepJob{job.number, job.overrides});
    ComposedSweep recomposed;
    recomposed.plan = plan;
    compose_jobs(composer, trials, /*check_for=*/"", [&](const config::SweepJob&, config::ComposeResult&& result) {
      recomposed.configs.push_back(std::move(result.config));
    });
    if (const std::vector<std::string> changes = config_changes(recomposed); !changes.empty()) {
      std::string listed;
      for (const std::string& line : changes) listed += "\n  " + line;
      throw Error("hydra.sweep.dir=" + plan.sweep_dir,
                  "this Optuna study's trials were composed from other config files: its new trials would differ "
                  "from its old ones in more than the searched parameters; nothing was run:" +
                      listed,
                  "\nRestore the config files as they were when the study started to continue it, or start a new "
                  "study with another hydra.sweep.dir (and hydra.sweeper.storage).");
    }
  }
  for (const PlannedJob& job : plan.jobs) {
    if (job.number < 0 || static_cast<size_t>(job.number) >= study.trials.size()) {
      throw Error(study.path,
                  "the study lists " + std::to_string(study.trials.size()) + " trial(s) but " + plan.sweep_dir +
                      " holds job " + std::to_string(job.number) + "; nothing was run",
                  "Restore the study file that belongs to this sweep directory, or give this search a new "
                  "hydra.sweep.dir.");
    }
  }
  std::vector<int> todo, ended_untold;
  for (size_t i = 0; i < study.trials.size(); ++i) {
    SearchTrial& trial = study.trials[i];
    if (trial.state != TrialState::kRunning) continue;
    const bool here = study.trial_dirs[i] == plan.sweep_dir &&
                      std::any_of(plan.jobs.begin(), plan.jobs.end(),
                                  [&](const PlannedJob& job) { return job.number == trial.number; });
    if (!here) {
      trial.state = TrialState::kFailed;  // interrupted in another sweep directory: cannot go on here
      continue;
    }
    const JobState state = effective_state(read_job_status(plan.sweep_dir, static_cast<int>(trial.number)));
    if (state == JobState::kRunning) {
      throw Error(plan.sweep_dir, "trial #" + std::to_string(trial.number) + " of this study is still running",
                  "Wait for it to end (or stop it) before resuming the study.");
    }
    if (state == JobState::kDone || state == JobState::kFailed || state == JobState::kStoppedEarly) {
      // It ended after the sweep stopped watching (killed, or an error while trials ran): its end is
      // told to the study below, not run again.
      ended_untold.push_back(static_cast<int>(trial.number));
      continue;
    }
    todo.push_back(static_cast<int>(trial.number));
  }

  std::error_code ec;
  fs::create_directories(plan.sweep_dir, ec);
  if (ec) {
    throw Error(plan.sweep_dir, "cannot create the sweep directory: " + ec.message(),
                "Set hydra.sweep.dir to a writable place.");
  }
  if (!settings.storage.empty()) {
    fs::create_directories(sweep_state_dir(plan.sweep_dir), ec);
    write_file_atomically(storage_pointer(plan.sweep_dir), study.path + "\n");
  }
  save_study(study);
  new_directory.kept = true;
  if (plan.jobs.empty()) {
    write_plan_index(plan, first_config);
  }

  int ended = 0;
  for (const SearchTrial& t : study.trials) ended += t.state != TrialState::kRunning;
  std::cerr << "[optuna] study " << study.name << ": " << sampler_text(settings) << ", "
            << (settings.tpe.maximize ? "maximize " : "minimize ") << settings.metric << " (from "
            << settings.metric_from << "), " << settings.n_trials << " trials, " << at_once << " at a time, "
            << pruner_text(settings.pruner)
            << (study.trials.empty()
                    ? ", seed " + std::to_string(settings.tpe.seed) +
                          (settings.seeded ? "" : " (drawn: hydra.sweeper.sampler.seed repeats a study)")
                    : std::string(", the sampler's state restored"))
            << std::endl;
  for (const std::string& line : p.space.describe()) std::cerr << "[optuna]   " << line << std::endl;
  if (!settings.warning.empty()) std::cerr << "[optuna] warning: " << settings.warning << std::endl;
  if (!study.trials.empty()) {
    std::cerr << "[optuna] resuming: " << ended << " trial(s) ended, " << todo.size() << " interrupted to run again"
              << std::endl;
  }
  std::cerr << "[optuna] study file: " << study.path << std::endl;

  LocalLauncherOptions launcher_options;
  {
    const Node* target = plan.launcher.is_map() ? plan.launcher.find("_target_") : nullptr;
    const std::string name = target != nullptr && target->is_string() ? target->as_string() : "";
    launcher_options.name = name.find("Slurm") != std::string::npos    ? "slurm"
                            : name.find("Joblib") != std::string::npos ? "joblib"
                            : name.find("Local") != std::string::npos  ? "local"
                                                                       : "basic";
  }
  launcher_options.n_jobs = at_once;
  if (plan.launcher.is_map()) {
    const Node* fail_fast = plan.launcher.find("fail_fast");
    launcher_options.fail_fast =
        fail_fast != nullptr && fail_fast->type() == config::NodeType::kBool && fail_fast->as_bool();
    const Node* gpus = plan.launcher.find("gpus_per_job");
    if (gpus != nullptr && gpus->type() == config::NodeType::kInt)
      launcher_options.gpus_per_job = static_cast<int>(gpus->as_int());
  }
  StudySource source(composer, plan, study, settings, p.space, p.hydra_overrides, first_config, at_once);
  for (int number : ended_untold) source.job_ended(number);
  bool interrupted = false;
  if (launcher_options.name == "slurm") {
    interrupted = launch_slurm_trials(plan, todo, source, at_once);
  } else {
    LocalLauncher launcher(launcher_options);
    launcher.launch(plan, todo, &source);
    interrupted = launcher.interrupted();
  }
  save_study(study);

  write_sweep_summary(plan);
  std::cerr << "[sweep] summary: " << plan.sweep_dir << "/sweep_summary.md" << std::endl;
  const SearchTrial* best = StudySource::best_trial(study, settings.tpe.maximize);
  int complete = 0, failed = 0, pruned = 0, running = 0;
  for (const SearchTrial& t : study.trials) {
    complete += t.state == TrialState::kComplete;
    failed += t.state == TrialState::kFailed;
    pruned += t.state == TrialState::kPruned;
    running += t.state == TrialState::kRunning;
  }
  end_mlflow_sweep_run(plan.sweep_dir, interrupted  ? tracking::MlflowRunStatus::kKilled
                                       : failed > 0 ? tracking::MlflowRunStatus::kFailed
                                                    : tracking::MlflowRunStatus::kFinished);
  if (best != nullptr) {
    Node results = Node::map();
    results.set("name", Node::string("optuna"));
    Node best_params = Node::map();
    const std::vector<std::string> texts = p.space.overrides(best->params);
    for (size_t i = 0; i < p.space.params.size(); ++i) {
      const std::string& text = texts[i];
      const size_t eq = text.find('=');
      best_params.set(text.substr(0, eq), config::parse_override(text).value);
    }
    results.set("best_params", std::move(best_params));
    results.set("best_value", Node::floating(best->value));
    write_file_atomically((fs::path(plan.sweep_dir) / "optimization_results.yaml").string(), config::to_yaml(results));
    std::cerr << "[optuna] best trial: #" << best->number << " (" << settings.metric << " " << metric_text(best->value)
              << "): ";
    for (size_t i = 0; i < p.space.params.size(); ++i) std::cerr << (i ? " " : "") << texts[i];
    std::cerr << "\n[optuna] " << complete << " complete, " << pruned << " pruned, " << failed << " failed"
              << (running ? ", " + std::to_string(running) + " interrupted" : std::string())
              << "; results: " << plan.sweep_dir << "/optimization_results.yaml" << std::endl;
  }
  if (interrupted) {
    std::cerr << "[optuna] interrupted: continue the study with the same command, or trainer sweep resume "
              << plan.sweep_dir << std::endl;
    return 130;
  }
  // A trial killed from outside (its process, not the sweep) did not end: the study is not done,
  // and a script testing the exit status must know.
  if (running > 0 && !source.stopped() && best != nullptr) {
    std::string numbers;
    for (const SearchTrial& t : study.trials) {
      if (t.state == TrialState::kRunning) numbers += (numbers.empty() ? "#" : ", #") + std::to_string(t.number);
    }
    throw Error("sweep " + plan.sweep_dir,
                std::to_string(running) + " trial(s) of the study did not finish (" + numbers +
                    ": interrupted, their process killed from outside)",
                "Continue the study with the same command, or trainer sweep resume " + plan.sweep_dir +
                    ": they go on from their last checkpoint.");
  }
  if (source.stopped() || best == nullptr) {
    std::string numbers;
    for (const SearchTrial& t : study.trials) {
      if (t.state == TrialState::kFailed) numbers += (numbers.empty() ? "#" : ", #") + std::to_string(t.number);
    }
    throw Error(
        "sweep " + plan.sweep_dir,
        best == nullptr
            ? "no trial of the study completed" + (numbers.empty() ? std::string() : " (failed: " + numbers + ")")
            : std::to_string(failed) + " trial(s) failed (" + numbers +
                  "), more than max_failure_rate=" + config::python_float_repr(settings.max_failure_rate) + " allows",
        "See each trial's error above and its stderr.log in its run dir; raise hydra.sweeper.max_failure_rate to "
        "let a study go on past failed trials.");
  }
  return 0;
}

}  // namespace trainer::launch
