#include "mlflow_rest_store.h"

#include <cmath>
#include <mutex>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

namespace trainer::tracking {
namespace {

using nlohmann::json;

size_t collect(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// A double as protobuf's JSON mapping writes it: NaN and the infinities as strings.
json number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

json key_values(const MlflowTags& pairs) {
  json list = json::array();
  for (const auto& [key, value] : pairs) list.push_back({{"key", key}, {"value", value}});
  return list;
}

std::string escape_query(const std::string& text) {
  std::string out;
  static const char* const hex = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

MlflowRestStore::MlflowRestStore(std::string base_url, double timeout_seconds)
    : base_url_(std::move(base_url)), timeout_seconds_(timeout_seconds) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  init_curl_once();
}

json MlflowRestStore::call(const std::string& endpoint, const json* body, long* http_status) {
  const std::string url = base_url_ + "/api/2.0/mlflow/" + endpoint;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) throw MlflowError(url, "libcurl could not start a request", "", /*retryable=*/true);
  std::string answer;
  // Invalid UTF-8 (a tag's bytes) is replaced, not a reason to lose the call.
  const std::string payload =
      body != nullptr ? body->dump(-1, ' ', false, json::error_handler_t::replace) : std::string();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  // MLflow's server takes a bearer token or basic auth from the environment, as its client does.
  std::string token_header;
  if (const char* token = ::getenv("MLFLOW_TRACKING_TOKEN"); token != nullptr && *token != '\0') {
    token_header = std::string("Authorization: Bearer ") + token;
    headers = curl_slist_append(headers, token_header.c_str());
  }
  const char* user = ::getenv("MLFLOW_TRACKING_USERNAME");
  const char* password = ::getenv("MLFLOW_TRACKING_PASSWORD");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // called from a logging thread: no SIGALRM
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_seconds_ * 1000));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(timeout_seconds_, 5.0) * 1000));
  if (user != nullptr && password != nullptr) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, user);
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password);
  }
  if (body != nullptr) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  }
  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (http_status != nullptr) *http_status = status;
  if (code != CURLE_OK) {
    throw MlflowError(base_url_,
                      std::string("the MLflow server did not answer ") + endpoint + ": " + curl_easy_strerror(code),
                      "Check that `mlflow server` runs there and that logger.mlflow.tracking_uri is right.",
                      /*retryable=*/true);
  }
  json parsed = json::parse(answer, nullptr, /*allow_exceptions=*/false);
  if (status >= 200 && status < 300) return parsed.is_discarded() ? json::object() : parsed;
  std::string problem = "the MLflow server answered " + std::to_string(status) + " to " + endpoint;
  if (!parsed.is_discarded() && parsed.is_object()) {
    problem += ": " + parsed.value("error_code", std::string()) + " " + parsed.value("message", std::string());
  }
  throw MlflowError(base_url_, problem, "", /*retryable=*/status >= 500 || status == 429 || status == 408);
}

std::string MlflowRestStore::experiment_id(const std::string& name, const std::string& artifact_location) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    long status = 0;
    try {
      const json found = call("experiments/get-by-name?experiment_name=" + escape_query(name), nullptr, &status);
      return found.at("experiment").at("experiment_id").get<std::string>();
    } catch (const MlflowError& error) {
      if (status != 404) throw;  // RESOURCE_DOES_NOT_EXIST: make it
    }
    json body = {{"name", name}};
    if (!artifact_location.empty()) body["artifact_location"] = artifact_location;
    try {
      return call("experiments/create", &body, &status).at("experiment_id").get<std::string>();
    } catch (const MlflowError& error) {
      // RESOURCE_ALREADY_EXISTS: another job made it between the two calls; look again.
      if (error.retryable() || attempt == 1) throw;
    }
  }
  throw MlflowError(base_url_, "the experiment '" + name + "' could not be found or made", "", true);
}

std::string MlflowRestStore::create_run(const std::string& experiment_id, const std::string& run_name, int64_t start_ms,
                                        const MlflowTags& tags) {
  MlflowTags all = tags;
  all.emplace_back("mlflow.runName", run_name);
  json body = {
      {"experiment_id", experiment_id}, {"run_name", run_name}, {"start_time", start_ms}, {"tags", key_values(all)}};
  if (const char* user = ::getenv("USER"); user != nullptr) body["user_id"] = user;
  return call("runs/create", &body).at("run").at("info").at("run_id").get<std::string>();
}

void MlflowRestStore::log_batch(const std::string& run_id, const std::vector<MlflowMetric>& metrics,
                                const MlflowTags& params, const MlflowTags& tags) {
  json list = json::array();
  for (const MlflowMetric& metric : metrics) {
    list.push_back({{"key", metric.key},
                    {"value", number(metric.value)},
                    {"timestamp", metric.timestamp_ms},
                    {"step", metric.step}});
  }
  const json body = {{"run_id", run_id}, {"metrics", list}, {"params", key_values(params)}, {"tags", key_values(tags)}};
  call("runs/log-batch", &body);
}

void MlflowRestStore::update_run(const std::string& run_id, MlflowRunStatus status, std::optional<int64_t> end_ms) {
  json body = {{"run_id", run_id}, {"status", status_name(status)}};
  if (end_ms) body["end_time"] = *end_ms;
  call("runs/update", &body);
}

}  // namespace trainer::tracking
