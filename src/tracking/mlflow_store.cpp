#include "trainer/tracking/mlflow_store.h"

#include <cctype>
#include <chrono>

#include "mlflow_file_store.h"
#include "mlflow_rest_store.h"

namespace trainer::tracking {

const char* status_name(MlflowRunStatus status) {
  switch (status) {
    case MlflowRunStatus::kRunning:
      return "RUNNING";
    case MlflowRunStatus::kFinished:
      return "FINISHED";
    case MlflowRunStatus::kFailed:
      return "FAILED";
    case MlflowRunStatus::kKilled:
      return "KILLED";
  }
  return "RUNNING";
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string cut_param_value(const std::string& value) {
  // Re-encoded as valid UTF-8, counting code points; cut when there are more than the limit.
  std::string out;
  size_t characters = 0;
  size_t cut_at = 0;  // bytes of the first kMaxParamValue - 3 characters
  size_t i = 0;
  while (i < value.size()) {
    if (characters == kMaxParamValue - 3) cut_at = out.size();
    const auto lead = static_cast<unsigned char>(value[i]);
    const size_t length = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xE  ? 3
                          : (lead >> 3) == 0x1E ? 4
                                                : 0;
    bool valid = length != 0 && i + length <= value.size();
    for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(value[i + k]) >> 6) == 0x2;
    if (valid) {
      out.append(value, i, length);
      i += length;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
    ++characters;
  }
  if (characters > kMaxParamValue) {
    out.resize(cut_at);
    out += "...";
  }
  return out;
}

std::string run_record(const MlflowTags& fields) {
  std::string text;
  for (const auto& [key, value] : fields) text += key + ": " + value + "\n";
  return text;
}

std::string run_record_field(const std::string& text, const std::string& key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key.size() + 2, key + ": ") == 0)
      return text.substr(at + key.size() + 2, end - at - key.size() - 2);
    at = end + 1;
  }
  return "";
}

std::string file_store_path(const std::string& tracking_uri) {
  if (tracking_uri.rfind("file://", 0) == 0) return tracking_uri.substr(7);  // file:///abs -> /abs
  if (tracking_uri.rfind("file:", 0) == 0) return tracking_uri.substr(5);
  return tracking_uri;
}

std::unique_ptr<MlflowStore> open_mlflow_store(const std::string& tracking_uri, const std::string& where,
                                               double timeout_seconds) {
  std::string lower = tracking_uri;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string scheme : {"http://", "https://"}) {
    if (lower.rfind(scheme, 0) != 0) continue;
    const std::string rest = tracking_uri.substr(scheme.size());
    if (rest.empty() || rest[0] == '/' || rest[0] == ':') {
      throw Error(where, "'" + tracking_uri + "' names no host", "Write http://host:port, e.g. http://127.0.0.1:5000.");
    }
    return std::make_unique<MlflowRestStore>(scheme + rest, timeout_seconds);
  }
  const std::string path = file_store_path(tracking_uri);
  if (tracking_uri.rfind("file://", 0) == 0 && !path.empty() && path[0] != '/') {
    throw Error(where, "'" + tracking_uri + "' names a host; a file: URI here must be a local path",
                "Write file:///absolute/path/mlruns, file:relative/mlruns or just the path.");
  }
  const size_t colon = path.find(':');
  const size_t slash = path.find('/');
  // "databricks" alone is MLflow's name for a Databricks workspace, not a directory.
  if (path.empty() || tracking_uri == "databricks" ||
      (colon != std::string::npos && (slash == std::string::npos || colon < slash))) {
    throw Error(where, "trainer cannot log to '" + tracking_uri + "'",
                "Use an MLflow server (http://host:5000) or a file store (a path, or file:<path>); database and "
                "Databricks URIs are MLflow's server's business: point tracking_uri at that server.");
  }
  return std::make_unique<MlflowFileStore>(path, tracking_uri);
}

}  // namespace trainer::tracking
