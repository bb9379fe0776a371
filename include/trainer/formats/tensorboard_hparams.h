// TensorBoard's HParams dashboard records (tensorboard/plugins/hparams/plugin_data.proto): each
// run's session start (its hyperparameter values and group) and end (its status), and the
// experiment record at a sweep's root that lists the swept hyperparameters with their domains and
// the metrics. The dashboard shows one table row per session group.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace trainer::formats {

using HParamValue = std::variant<std::string, double, bool>;
using HParams = std::vector<std::pair<std::string, HParamValue>>;

// The dashboard's statuses (api.proto's Status). It has none for a run stopped on purpose.
enum class SessionStatus { kUnknown = 0, kSuccess = 1, kFailure = 2, kRunning = 3 };

struct HParamDomain {
  std::string name;
  // Either the values it takes (a grid's list, a choice) or, for numbers, the interval they span.
  std::vector<HParamValue> discrete;
  std::optional<std::pair<double, double>> interval;
  bool differs = false;  // the sweep's jobs do not all take one value
};

// Tags of the summaries, as TensorBoard's hparams plugin looks them up.
extern const char* const kExperimentTag;
extern const char* const kSessionStartTag;
extern const char* const kSessionEndTag;

// HParamsPluginData contents (version 0) of each record.
std::string session_start_content(const HParams& hparams, const std::string& group_name, double start_time);
std::string session_end_content(SessionStatus status, double end_time);
// A metric whose tag starts with "train/" or "val/" is marked as of that dataset.
std::string experiment_content(const std::string& name, const std::vector<HParamDomain>& hparams,
                               const std::vector<std::string>& metric_tags, double time_created);

// Writes an event file holding `records` (tag, content) as hparams plugin summaries at step 0,
// whole and atomically at `path`, creating its directory: the file is replaced, never appended to,
// so a run that starts again has one start record and at most one end record. Throws
// trainer::Error naming the path.
void write_hparams_event_file(const std::string& path, const std::vector<std::pair<std::string, std::string>>& records,
                              double wall_time);

}  // namespace trainer::formats
