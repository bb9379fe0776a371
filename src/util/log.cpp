#include "trainer/util/log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/details/file_helper.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "trainer/util/error.h"

namespace trainer::log {
namespace {

constexpr const char* kPattern = "[%Y-%m-%d %H:%M:%S,%e][%n][%l] - %v";

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarning:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

// stderr, with an optional status line (progress bar) kept below the log lines on a terminal.
class ConsoleSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_status(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (line.empty() && status_.empty()) return;
    std::fputs("\r\033[K", stderr);
    status_ = line;
    std::fputs(status_.c_str(), stderr);
    std::fflush(stderr);
  }

  void write_verbatim(const std::string& lines) {
    std::lock_guard<std::mutex> lock(mutex_);
    put(lines.data(), lines.size());
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(message, formatted);
    put(formatted.data(), formatted.size());
  }
  void flush_() override { std::fflush(stderr); }

 private:
  void put(const char* text, size_t size) {
    if (!status_.empty()) std::fputs("\r\033[K", stderr);
    std::fwrite(text, 1, size, stderr);
    if (!status_.empty()) std::fputs(status_.c_str(), stderr);
    std::fflush(stderr);
  }

  std::string status_;
};

// The log file (appending): spdlog's basic file sink, plus lines written as they are. A write
// that fails (a full disk) is said once on the console, and the log goes on there alone: the
// failure must not end the run (spdlog's exception escaped a flush and aborted it) nor repeat.
class FileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FileSink(const std::string& path) : path_(path) { file_.open(path, /*truncate=*/false); }
  const std::string& path() const { return path_; }

  void write_verbatim(const std::string& lines) {
    std::lock_guard<std::mutex> lock(mutex_);
    spdlog::memory_buf_t buffer;
    buffer.append(lines.data(), lines.data() + lines.size());
    guarded([&] {
      file_.write(buffer);
      file_.flush();
    });
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(message, formatted);
    guarded([&] { file_.write(formatted); });
  }
  void flush_() override {
    guarded([&] { file_.flush(); });
  }

 private:
  template <typename Write>
  void guarded(const Write& write) {
    if (broken_) return;
    try {
      write();
    } catch (const std::exception& error) {
      broken_ = true;
      std::fprintf(stderr,
                   "[trainer][warning] the log file %s cannot be written (%s): from here the log is on the "
                   "console only\n",
                   path_.c_str(), error.what());
      std::fflush(stderr);
    }
  }

  std::string path_;
  spdlog::details::file_helper file_;
  bool broken_ = false;
};

// A warning or error said before a run's log file was set (the checks of a resume or an
// evaluation, made before its directory exists), for that file once it is.
struct EarlyLine {
  spdlog::log_clock::time_point time;
  spdlog::level::level_enum level;
  std::string text;
};

struct State {
  std::shared_ptr<ConsoleSink> console = std::make_shared<ConsoleSink>();
  std::shared_ptr<FileSink> file;
  std::vector<EarlyLine> early;
  std::shared_ptr<spdlog::logger> logger;
  bool terminal = ::isatty(STDERR_FILENO) == 1;

  State() {
    console->set_pattern(kPattern);
    logger = std::make_shared<spdlog::logger>("trainer", console);
    // Every line reaches the file at once, as Python's logging does: `tail -f` works, and a
    // killed run's log ends where the run ended.
    logger->flush_on(spdlog::level::trace);
  }
};

State& state() {
  static State instance;
  return instance;
}

}  // namespace

void set_level(Level level) { state().logger->set_level(to_spdlog(level)); }

void set_file(const std::string& path) {
  State& s = state();
  auto& sinks = s.logger->sinks();
  if (s.file) sinks.erase(std::remove(sinks.begin(), sinks.end(), s.file), sinks.end());
  try {
    s.file = std::make_shared<FileSink>(path);
  } catch (const spdlog::spdlog_ex& error) {
    s.file.reset();
    throw Error(path, std::string("cannot open the run's log file: ") + error.what(),
                "Check that the run directory is writable and the file not locked (chattr -i), or give the run "
                "another directory (hydra.run.dir).");
  }
  s.file->set_pattern(kPattern);
  sinks.push_back(s.file);
  for (const EarlyLine& line : s.early) {
    s.file->log(spdlog::details::log_msg(line.time, spdlog::source_loc{}, "trainer", line.level, line.text));
  }
  s.early.clear();
  s.file->flush();
}

void discard_early_lines() { state().early.clear(); }

void write(Level level, const std::string& message) {
  State& s = state();
  if (!s.file && level >= Level::kWarning && s.logger->should_log(to_spdlog(level)) && s.early.size() < 1000) {
    s.early.push_back({spdlog::log_clock::now(), to_spdlog(level), message});
  }
  s.logger->log(to_spdlog(level), message);
}

void write_file_only(Level level, const std::string& message) {
  State& s = state();
  if (!s.file || !s.logger->should_log(to_spdlog(level))) return;
  s.file->log(spdlog::details::log_msg("trainer", to_spdlog(level), message));
  s.file->flush();
}

void flush() { state().logger->flush(); }

void write_verbatim(const std::string& lines) {
  State& s = state();
  s.console->write_verbatim(lines);
  if (s.file) s.file->write_verbatim(lines);
}

std::string file_path() { return state().file ? state().file->path() : std::string(); }

std::string warning_text(const std::string& line) {
  // kPattern's line: [date time][name][warning] - text
  static const std::string kMarker = "][warning] - ";
  const size_t at = line.find(kMarker);
  if (at == std::string::npos || line.rfind('[', 0) != 0) return "";
  return line.substr(at + kMarker.size());
}

bool console_is_terminal() { return state().terminal; }

void set_status(const std::string& line) {
  if (state().terminal) state().console->set_status(line);
}

}  // namespace trainer::log
