#include "trainer/formats/tensorboard_hparams.h"

#include "trainer/util/atomic_file.h"

#include "tensorboard_encoding.h"

namespace trainer::formats {

const char* const kExperimentTag = "_hparams_/experiment";
const char* const kSessionStartTag = "_hparams_/session_start_info";
const char* const kSessionEndTag = "_hparams_/session_end_info";

namespace {

// google.protobuf.Value{number_value = 2, string_value = 3, bool_value = 4}.
std::string value_message(const HParamValue& value) {
  std::string out;
  if (const auto* number = std::get_if<double>(&value)) {
    wire::put_double(out, 2, *number);
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    wire::put_bytes(out, 3, *text);
  } else {
    wire::put_uint(out, 4, std::get<bool>(value) ? 1 : 0);
  }
  return out;
}

// api.proto's DataType: STRING 1, BOOL 2, FLOAT64 3; a domain of mixed types is a string one.
int data_type(const HParamDomain& domain) {
  if (domain.interval) return 3;
  int type = 0;
  for (const HParamValue& value : domain.discrete) {
    const int this_type = std::holds_alternative<double>(value) ? 3 : std::holds_alternative<bool>(value) ? 2 : 1;
    if (type != 0 && type != this_type) return 1;
    type = this_type;
  }
  return type == 0 ? 1 : type;
}

// HParamsPluginData{version = 1 (0: left out), experiment = 2 | session_start_info = 3 |
// session_end_info = 4}.
std::string plugin_data(int field, const std::string& message) {
  std::string out;
  wire::put_bytes(out, field, message);
  return out;
}

}  // namespace

std::string session_start_content(const HParams& hparams, const std::string& group_name, double start_time) {
  // SessionStartInfo{hparams = 1 (map: entries {key = 1, value = 2}), group_name = 4,
  // start_time_secs = 5}.
  std::string info;
  for (const auto& [name, value] : hparams) {
    std::string entry;
    wire::put_bytes(entry, 1, name);
    wire::put_bytes(entry, 2, value_message(value));
    wire::put_bytes(info, 1, entry);
  }
  if (!group_name.empty()) wire::put_bytes(info, 4, group_name);
  wire::put_double(info, 5, start_time);
  return plugin_data(3, info);
}

std::string session_end_content(SessionStatus status, double end_time) {
  std::string info;  // SessionEndInfo{status = 1, end_time_secs = 2}
  if (status != SessionStatus::kUnknown) wire::put_uint(info, 1, static_cast<uint64_t>(status));
  wire::put_double(info, 2, end_time);
  return plugin_data(4, info);
}

std::string experiment_content(const std::string& name, const std::vector<HParamDomain>& hparams,
                               const std::vector<std::string>& metric_tags, double time_created) {
  // Experiment{description = 1, user = 2, time_created_secs = 3, hparam_infos = 4,
  // metric_infos = 5, name = 6}.
  std::string experiment;
  wire::put_double(experiment, 3, time_created);
  for (const HParamDomain& domain : hparams) {
    // HParamInfo{name = 1, type = 4, domain_discrete = 5 (ListValue{values = 1}),
    // domain_interval = 6 (Interval{min_value = 1, max_value = 2}), differs = 7}.
    std::string info;
    wire::put_bytes(info, 1, domain.name);
    wire::put_uint(info, 4, static_cast<uint64_t>(data_type(domain)));
    if (domain.interval) {
      std::string interval;
      wire::put_double(interval, 1, domain.interval->first);
      wire::put_double(interval, 2, domain.interval->second);
      wire::put_bytes(info, 6, interval);
    } else if (!domain.discrete.empty()) {
      std::string list;
      for (const HParamValue& value : domain.discrete) wire::put_bytes(list, 1, value_message(value));
      wire::put_bytes(info, 5, list);
    }
    if (domain.differs) wire::put_uint(info, 7, 1);
    wire::put_bytes(experiment, 4, info);
  }
  for (const std::string& tag : metric_tags) {
    // MetricInfo{name = 1 (MetricName{group = 1, tag = 2}), dataset_type = 5 (TRAINING 1,
    // VALIDATION 2)}. The group is the run below the session's: "" (the same run).
    std::string metric_name;
    wire::put_bytes(metric_name, 2, tag);
    std::string info;
    wire::put_bytes(info, 1, metric_name);
    if (tag.rfind("train/", 0) == 0) wire::put_uint(info, 5, 1);
    if (tag.rfind("val/", 0) == 0) wire::put_uint(info, 5, 2);
    wire::put_bytes(experiment, 5, info);
  }
  if (!name.empty()) wire::put_bytes(experiment, 6, name);
  return plugin_data(2, experiment);
}

void write_hparams_event_file(const std::string& path, const std::vector<std::pair<std::string, std::string>>& records,
                              double wall_time) {
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) wire::make_directories(path.substr(0, slash));
  std::string bytes = wire::tfrecord(wire::file_version_event(wall_time));
  for (const auto& [tag, content] : records) {
    bytes += wire::tfrecord(wire::plugin_summary_event(tag, "hparams", content, 0, wall_time));
  }
  AtomicWriteOptions options;
  options.noun = "TensorBoard hparams file";
  options.fix = "Check that the TensorBoard log directory is writable and that the disk is not full.";
  write_file_atomically(path, bytes, options);
}

}  // namespace trainer::formats
