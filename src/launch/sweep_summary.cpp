#include "trainer/launch/sweep_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "trainer/config/python_str.h"
#include "trainer/config/yaml.h"
#include "trainer/launch/hparams_records.h"
#include "trainer/launch/job_files.h"
#include "trainer/launch/optuna_search.h"
#include "trainer/launch/optuna_sweep.h"
#include "trainer/options/task_metrics.h"
#include "trainer/util/error.h"

#if __has_include("trainer/launch/metric_plot.h")
#include "trainer/launch/metric_plot.h"
#define TRAINER_HAVE_METRIC_PLOT 1
#endif

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  cells.push_back(cell);
  return cells;
}

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  return value;
}

bool better(double a, double b, const std::string& mode) { return mode == "min" ? a < b : a > b; }

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", seconds);
  return text;
}

std::string counts_line(const SweepSummary& summary) {
  std::map<std::string, int> counts;
  for (const JobSummary& job : summary.jobs) ++counts[state_name(job.state)];
  std::string out = std::to_string(summary.jobs.size()) + (summary.jobs.size() == 1 ? " job:" : " jobs:");
  bool first = true;
  for (const char* name : {"done", "stopped_early", "failed", "interrupted", "running", "pending"}) {
    auto it = counts.find(name);
    if (it == counts.end()) continue;
    out += std::string(first ? " " : ", ") + std::to_string(it->second) + " " + name;
    first = false;
  }
  // A study makes its trials as it goes: those it has not made yet are no row of the table.
  const auto made = static_cast<int64_t>(summary.jobs.size());
  if (summary.study_trials > made) {
    out += "; " + std::to_string(summary.study_trials - made) + " of the study's " +
           std::to_string(summary.study_trials) + " trials not started";
  }
  return out;
}

}  // namespace

std::string metric_text(const std::optional<double>& value) {
  if (!value) return "";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", *value);
  return text;
}

MetricHistory read_metric_history(const std::string& metrics_csv, const std::string& metric, const std::string& mode) {
  MetricHistory history;
  std::ifstream in(metrics_csv);
  std::string line;
  if (!in || !std::getline(in, line)) return history;
  const std::vector<std::string> header = split_csv_line(line);
  int column = -1, epoch_column = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == metric) column = static_cast<int>(i);
    if (header[i] == "epoch") epoch_column = static_cast<int>(i);
  }
  if (column < 0) return history;
  std::vector<double> epochs_seen;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split_csv_line(line);
    if (static_cast<size_t>(column) >= cells.size()) continue;
    const std::optional<double> value = number(cells[static_cast<size_t>(column)]);
    if (!value || std::isnan(*value)) continue;
    std::optional<double> epoch;
    if (epoch_column >= 0 && static_cast<size_t>(epoch_column) < cells.size()) {
      epoch = number(cells[static_cast<size_t>(epoch_column)]);
    }
    const double x = epoch ? *epoch : static_cast<double>(history.points.size());
    history.points.emplace_back(x, *value);
    if (epochs_seen.empty() || epochs_seen.back() != x) epochs_seen.push_back(x);
    if (!history.best || better(*value, *history.best, mode)) history.best = *value;
    history.last = *value;
  }
  history.epochs = static_cast<int64_t>(epochs_seen.size());
  return history;
}

bool regression_sweep(const config::Node& root) {
  const config::Node* task = config::select(root, "data.task");
  return task != nullptr && task->is_string() && task->as_string() == "regression";
}

namespace {

struct SweepObjective {
  std::string metric = "val/loss", mode = "min";
  BestBy best_by = BestBy::kBestValue;
  bool stopped_early_ranks = true;
  int64_t study_trials = 0;
};

// The sweep's multirun.yaml (the first job's config); nullopt before it is written.
std::optional<config::Node> multirun_config(const std::string& sweep_dir) {
  const std::string path = (fs::path(sweep_dir) / "multirun.yaml").string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  return config::load_yaml_file(path).root;
}

SweepObjective sweep_objective(const std::optional<config::Node>& multirun) {
  SweepObjective objective;
  if (!multirun) return objective;
  const config::Node& root = *multirun;
  // An Optuna study's jobs are judged by its objective and direction: a metric's last value, or
  // the template's val/acc_best by the best val/acc over the epochs.
  if (const config::Node* sweeper = config::select(root, "hydra.sweeper"); sweeper && is_optuna_sweeper(*sweeper)) {
    try {
      config::Node job_config = root;
      job_config.erase("hydra");
      const OptunaSettings settings = optuna_settings(*sweeper, job_config);
      std::string name = settings.metric;
      const std::string suffix = "_best";
      const bool best =
          name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      if (best) name.resize(name.size() - suffix.size());
      // The study's best trial is a complete one: a pruned trial's last value is not its result.
      return {name, settings.tpe.maximize ? "max" : "min", best ? BestBy::kBestValue : BestBy::kFinalValue,
              /*stopped_early_ranks=*/false, settings.n_trials};
    } catch (const Error&) {
      // settings the study itself refused: the monitor, as for any sweep
    }
  }
  const config::Node* metric = config::select(root, "callbacks.model_checkpoint.monitor");
  const config::Node* mode = config::select(root, "callbacks.model_checkpoint.mode");
  if (metric != nullptr && metric->is_string() && !metric->is_interpolation()) {
    objective.metric = metric->as_string();
    objective.mode = mode != nullptr && mode->is_string() && mode->as_string() == "min" ? "min" : "max";
    // A regression's jobs watch their loss where the config names accuracy, which they do not log.
    if (const std::string loss = options::regression_monitor_for(objective.metric);
        !loss.empty() && regression_sweep(root)) {
      objective.metric = loss;
      objective.mode = "min";
    }
  }
  return objective;
}

std::string test_score_of(const std::optional<config::Node>& multirun) {
  return multirun && regression_sweep(*multirun) ? "test/r2" : "test/acc";
}

}  // namespace

std::pair<std::string, std::string> sweep_monitor(const std::string& sweep_dir) {
  const SweepObjective objective = sweep_objective(multirun_config(sweep_dir));
  return {objective.metric, objective.mode};
}

std::string best_job_text(const SweepSummary& summary) {
  if (summary.best < 0) return "";
  const JobSummary& best = summary.jobs[static_cast<size_t>(summary.best)];
  const bool final_value = summary.best_by == BestBy::kFinalValue;
  return "#" + std::to_string(best.job.number) + " (" + summary.metric + " " + summary.mode +
         (final_value ? ", final " : " ") + metric_text(summary.ranked_value(best)) +
         "): " + task_overrides_text(best.job.overrides);
}

std::string sweep_test_score(const std::string& sweep_dir) { return test_score_of(multirun_config(sweep_dir)); }

SweepSummary summarize_sweep(const SweepPlan& plan) {
  SweepSummary summary;
  const std::optional<config::Node> multirun = multirun_config(plan.sweep_dir);
  const SweepObjective objective = sweep_objective(multirun);
  summary.metric = objective.metric;
  summary.mode = objective.mode;
  summary.best_by = objective.best_by;
  summary.stopped_early_ranks = objective.stopped_early_ranks;
  summary.study_trials = objective.study_trials;
  summary.test_score = test_score_of(multirun);
  const double now = now_epoch_s();
  for (const PlannedJob& job : plan.jobs) {
    JobSummary row;
    row.job = job;
    const std::optional<JobStatus> status = read_job_status(plan.sweep_dir, job.number);
    row.state = effective_state(status);
    if (status) {
      row.duration_s = status->end_time.empty() ? std::max(0.0, now - status->start_epoch_s) : status->duration_s;
      row.error = status->error;
    }
    // A finished job whose directory was deleted since has no result left: a resume runs it again.
    std::error_code ec;
    if ((row.state == JobState::kDone || row.state == JobState::kStoppedEarly) && !job.run_dir.empty() &&
        !fs::exists(job.run_dir, ec) && !ec) {
      row.error = "ended " + std::string(state_name(row.state)) + ", but its directory " + job.run_dir +
                  " is gone: a resume runs it again";
      row.state = JobState::kPending;
    }
    if (row.state != JobState::kPending) {
      const std::string csv = (fs::path(job.run_dir) / "metrics.csv").string();
      row.metric = read_metric_history(csv, summary.metric, summary.mode);
      row.test_score = read_metric_history(csv, summary.test_score, "max").last;
      row.test_loss = read_metric_history(csv, "test/loss", "min").last;
    }
    const bool ranked =
        row.state == JobState::kDone || (row.state == JobState::kStoppedEarly && summary.stopped_early_ranks);
    const std::optional<double>& value = summary.ranked_value(row);
    if (ranked && value &&
        (summary.best < 0 ||
         better(*value, *summary.ranked_value(summary.jobs[static_cast<size_t>(summary.best)]), summary.mode))) {
      summary.best = static_cast<int>(summary.jobs.size());
    }
    summary.jobs.push_back(std::move(row));
  }
  return summary;
}

namespace {

// A value of sweep_summary.csv as metrics.csv holds it (every digit, for a script to compare; the
// markdown table and the log keep 6).
std::string exact_text(const std::optional<double>& value) { return value ? config::python_float_repr(*value) : ""; }

}  // namespace

std::string summary_csv(const SweepSummary& summary) {
  std::string out =
      "job,status,overrides,metric,mode,best,final," + summary.test_score + ",test/loss,epochs,duration_s\n";
  for (const JobSummary& job : summary.jobs) {
    out += std::to_string(job.job.number) + "," + state_name(job.state) + "," +
           csv_cell(task_overrides_text(job.job.overrides)) + "," + csv_cell(summary.metric) + "," + summary.mode +
           "," + exact_text(job.metric.best) + "," + exact_text(job.metric.last) + "," + exact_text(job.test_score) +
           "," + exact_text(job.test_loss) + "," + std::to_string(job.metric.epochs) + "," +
           seconds_text(job.duration_s) + "\n";
  }
  return out;
}

std::string summary_markdown(const SweepSummary& summary) {
  std::string out = "# Sweep summary\n\n";
  out += "Monitored metric: `" + summary.metric + "` (" + summary.mode + "). " + counts_line(summary) + ".\n\n";
  out += "| job | status | overrides | best " + md_cell(summary.metric) + " | final " + md_cell(summary.metric) +
         " | " + summary.test_score + " | test/loss | epochs | duration (s) |\n";
  out += "|---:|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const JobSummary& job : summary.jobs) {
    out += "| " + std::to_string(job.job.number) + " | " + state_name(job.state) + " | " +
           md_cell(task_overrides_text(job.job.overrides)) + " | " + metric_text(job.metric.best) + " | " +
           metric_text(job.metric.last) + " | " + metric_text(job.test_score) + " | " + metric_text(job.test_loss) +
           " | " + std::to_string(job.metric.epochs) + " | " + seconds_text(job.duration_s) + " |\n";
  }
  out += "\n";
  if (summary.best >= 0) {
    out += "Best job: " + best_job_text(summary) + "\n";
    if (summary.best_by == BestBy::kFinalValue) {
      out += "\nThe study judges each trial by its final " + summary.metric +
             " (its objective), so the best job is named by that value, not by the best column.\n";
    }
  } else {
    // An interrupted job goes on when the sweep resumes: its value may come yet.
    const bool all_ended = std::all_of(summary.jobs.begin(), summary.jobs.end(), [](const JobSummary& job) {
      return job.state == JobState::kDone || job.state == JobState::kStoppedEarly || job.state == JobState::kFailed;
    });
    const bool pruned = !summary.stopped_early_ranks &&
                        std::any_of(summary.jobs.begin(), summary.jobs.end(), [](const JobSummary& job) {
                          return job.state == JobState::kStoppedEarly && job.metric.last.has_value();
                        });
    if (!all_ended) {
      out += "Best job: none yet (no job has ended with a value of " + summary.metric + ").\n";
    } else if (pruned) {
      out += "Best job: none (every trial with a value of " + summary.metric +
             " was pruned; the study names a complete trial only).\n";
    } else {
      out += "Best job: none (no job logged " + summary.metric + "; see their trainer.log).\n";
    }
  }
  bool any_error = false;
  for (const JobSummary& job : summary.jobs) {
    // A job killed from outside is interrupted (it resumes), but why it stopped belongs here too.
    const bool interrupted = job.state == JobState::kInterrupted;
    const bool gone = job.state == JobState::kPending;  // its directory deleted after it ended
    if ((job.state != JobState::kFailed && !interrupted && !gone) || job.error.empty()) continue;
    if (!any_error) out += "\n## Errors\n\n";
    any_error = true;
    out += "- job " + std::to_string(job.job.number) +
           (interrupted ? " (interrupted)"
            : gone      ? " (pending)"
                        : "") +
           ": " + md_cell(job.error) + "\n";
  }
  return out;
}

SweepSummary write_sweep_summary(const SweepPlan& plan) {
  SweepSummary summary = summarize_sweep(plan);
  const fs::path root(plan.sweep_dir);
  write_file_atomically((root / "sweep_summary.csv").string(), summary_csv(summary));
  write_file_atomically((root / "sweep_summary.md").string(), summary_markdown(summary));
#ifdef TRAINER_HAVE_METRIC_PLOT
  std::vector<MetricSeries> series;
  for (const JobSummary& job : summary.jobs) {
    if (job.metric.points.empty()) continue;
    series.push_back(
        {std::to_string(job.job.number) + ": " + task_overrides_text(job.job.overrides), job.metric.points});
  }
  if (!series.empty()) {
    write_metric_plot((root / "sweep_metrics.png").string(), "Sweep " + root.filename().string(), summary.metric,
                      series);
  }
#else
  // METRIC PLOT CALL SITE: sweep_metrics.png is drawn here with H3's write_metric_plot
  // (trainer/launch/metric_plot.h) as soon as that header exists; nothing else to change.
#endif
  write_sweep_experiment(plan, summary.metric);
  return summary;
}

}  // namespace trainer::launch
