#include "trainer/util/log.h"

#include <algorithm>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace trainer::log {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::kDebug: return spdlog::level::debug;
    case Level::kInfo: return spdlog::level::info;
    case Level::kWarning: return spdlog::level::warn;
    case Level::kError: return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger>& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto made = std::make_shared<spdlog::logger>("trainer", sink);
    made->set_pattern("[%Y-%m-%d %H:%M:%S,%e][%n][%l] - %v");
    return made;
  }();
  return instance;
}

}  // namespace

void set_level(Level level) { logger()->set_level(to_spdlog(level)); }

void set_file(const std::string& path) {
  static std::shared_ptr<spdlog::sinks::sink> current;
  auto& sinks = logger()->sinks();
  if (current) sinks.erase(std::remove(sinks.begin(), sinks.end(), current), sinks.end());
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
  sink->set_pattern("[%Y-%m-%d %H:%M:%S,%e][%n][%l] - %v");
  sinks.push_back(sink);
  current = sink;
}

void write(Level level, const std::string& message) {
  logger()->log(to_spdlog(level), message);
  if (level >= Level::kWarning) logger()->flush();
}

void flush() { logger()->flush(); }

}  // namespace trainer::log
