#include "trainer/formats/tensorboard_writer.h"

#include <errno.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include "trainer/util/error.h"
#include "trainer/util/log.h"

#include "tensorboard_encoding.h"

namespace trainer::formats {
namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

TensorBoardWriter::TensorBoardWriter(const std::string& directory) {
  wire::make_directories(directory);
  // TensorBoard's own writers use this name; the counter keeps two writers of one process apart.
  static std::atomic<unsigned> counter{0};
  const auto seconds = static_cast<long long>(now());
  path_ = directory + (directory.empty() || directory.back() == '/' ? "" : "/") + "events.out.tfevents." +
          std::to_string(seconds) + "." + host_name() + "." + std::to_string(::getpid()) + "." +
          std::to_string(counter++);
  // "x": never append to or truncate another writer's file.
  file_ = std::fopen(path_.c_str(), "wbx");
  if (file_ == nullptr) {
    throw Error(path_, system_error("cannot create the TensorBoard event file"),
                "Check that the log directory is writable.");
  }
  write_record(wire::file_version_event(now()));
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    log::warning(e.what());
  }
}

double TensorBoardWriter::now() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(since_epoch).count();
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  add_scalars(step, {{tag, value}}, wall_time);
}

void TensorBoardWriter::add_scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values,
                                    double wall_time) {
  if (values.empty()) return;
  std::string summary;
  for (const auto& [tag, value] : values) {
    std::string entry;
    wire::put_bytes(entry, 1, tag);  // Summary.Value{tag = 1, simple_value = 2}
    wire::put_float(entry, 2, static_cast<float>(value));
    wire::put_bytes(summary, 1, entry);
  }
  std::string event = wire::event_header(wall_time, step);
  wire::put_bytes(event, 5, summary);
  write_record(event);
}

void TensorBoardWriter::flush(bool durable) {
  if (file_ == nullptr) return;
  if (std::fflush(file_) != 0 || (durable && ::fsync(::fileno(file_)) != 0)) {
    throw Error(path_, system_error("cannot write the TensorBoard event file"), "Check free disk space.");
  }
}

void TensorBoardWriter::close() {
  if (file_ == nullptr) return;
  const bool flushed = std::fflush(file_) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    if (!flushed) errno = flush_errno;
    throw Error(path_, system_error("cannot write the TensorBoard event file"), "Check free disk space.");
  }
}

void TensorBoardWriter::write_record(const std::string& payload) {
  if (file_ == nullptr) {
    throw Error(path_, "the TensorBoard event file is already closed", "Write scalars before close().");
  }
  const std::string record = wire::tfrecord(payload);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw Error(path_, system_error("cannot write the TensorBoard event file"), "Check free disk space.");
  }
}

}  // namespace trainer::formats
