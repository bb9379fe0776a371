#include "trainer/launch/job_warnings.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <vector>

#include "trainer/util/log.h"

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

std::mutex& said_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::set<std::string>& said() {
  static std::set<std::string> texts;
  return texts;
}

// The run's own log files: <job name>.log, not the captured stdout.log and stderr.log.
std::vector<fs::path> log_files(const std::string& run_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".log" || name == "stdout.log" || name == "stderr.log") continue;
    files.push_back(entry.path());
  }
  return files;
}

}  // namespace

void note_sweep_warning(const std::string& text) {
  const std::lock_guard<std::mutex> lock(said_mutex());
  said().insert(text);
}

void say_job_warnings(int number, const std::string& run_dir) {
  constexpr int kMost = 10;
  int told = 0, left = 0;
  for (const fs::path& file : log_files(run_dir)) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      const std::string text = log::warning_text(line);
      if (text.empty()) continue;
      {
        const std::lock_guard<std::mutex> lock(said_mutex());
        if (!said().insert(text).second) continue;
      }
      if (told++ < kMost) {
        std::cerr << "[sweep] #" << number << " warned: " << text << std::endl;
      } else {
        ++left;
      }
    }
  }
  if (left > 0) {
    std::cerr << "[sweep] #" << number << " warned " << left << " more time(s): see " << run_dir << "/trainer.log"
              << std::endl;
  }
}

}  // namespace trainer::launch
