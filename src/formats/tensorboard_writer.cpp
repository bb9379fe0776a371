#include "trainer/formats/tensorboard_writer.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include "trainer/formats/crc32c.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::formats {
namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// POSIX, not std::filesystem: the torch wheel's libtorch exports unversioned std::filesystem
// symbols that calls from code loaded beside it would bind to.
void make_directories(const std::string& directory) {
  size_t end = 0;
  while (end != std::string::npos) {
    end = directory.find('/', end + 1);
    const std::string prefix = directory.substr(0, end);
    if (prefix.empty() || ::mkdir(prefix.c_str(), 0777) == 0) continue;
    const int mkdir_errno = errno;
    // An existing directory is fine whatever mkdir said (EEXIST, or EACCES/EROFS above it).
    struct stat info {};
    if (::stat(prefix.c_str(), &info) == 0) {
      if (S_ISDIR(info.st_mode)) continue;
      throw Error(directory, prefix + " exists but is not a directory",
                  "Choose another TensorBoard log directory or remove that file.");
    }
    errno = mkdir_errno;
    throw Error(directory, system_error("cannot create the TensorBoard log directory " + prefix),
                "Check that its parent is writable.");
  }
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

// Protocol-buffer wire format of the few Event fields we write (field numbers from
// tensorflow/core/util/event.proto and summary.proto, mirrored in tensorboard_event.proto, whose
// generated code the tests decode our bytes with). Encoded by hand: Debian's static protobuf-lite
// cannot go into the shared engine (initial-exec TLS), and the dynamic one would clash with the
// protobuf the 2.11 wheel's libtorch exports.
void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}
void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<uint64_t>(field << 3 | wire_type));
}
void put_double(std::string& out, int field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_tag(out, field, 1);
  put_le(out, bits, 8);
}
void put_float(std::string& out, int field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_tag(out, field, 5);
  put_le(out, bits, 4);
}
void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

// Event{wall_time = 1, step = 2, file_version = 3 | summary = 5}; Summary{value = 1 (repeated)};
// Summary.Value{tag = 1, simple_value = 2}.
std::string event_header(double wall_time, int64_t step) {
  std::string event;
  put_double(event, 1, wall_time);
  if (step != 0) {
    put_tag(event, 2, 0);
    put_varint(event, static_cast<uint64_t>(step));
  }
  return event;
}

}  // namespace

TensorBoardWriter::TensorBoardWriter(const std::string& directory) {
  make_directories(directory);
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
  std::string event = event_header(now(), 0);
  put_bytes(event, 3, "brain.Event:2");
  write_record(event);
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
    put_bytes(entry, 1, tag);
    put_float(entry, 2, static_cast<float>(value));
    put_bytes(summary, 1, entry);
  }
  std::string event = event_header(wall_time, step);
  put_bytes(event, 5, summary);
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

// TFRecord framing: length (u64 LE), masked CRC-32C of those 8 bytes, payload, masked CRC-32C of
// the payload. Readers verify both checksums.
void TensorBoardWriter::write_record(const std::string& payload) {
  if (file_ == nullptr) {
    throw Error(path_, "the TensorBoard event file is already closed", "Write scalars before close().");
  }
  std::string record;
  record.reserve(payload.size() + 16);
  put_le(record, payload.size(), 8);
  put_le(record, masked_crc32c(record.data(), 8), 4);
  record += payload;
  put_le(record, masked_crc32c(payload.data(), payload.size()), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw Error(path_, system_error("cannot write the TensorBoard event file"), "Check free disk space.");
  }
}

}  // namespace trainer::formats
