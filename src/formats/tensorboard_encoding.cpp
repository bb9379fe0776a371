#include "tensorboard_encoding.h"

#include <errno.h>

#include <cstring>

#include "trainer/formats/crc32c.h"
#include "trainer/util/error.h"
#include "trainer/util/make_directories.h"

namespace trainer::formats::wire {
namespace {

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

}  // namespace

void make_directories(const std::string& directory) {
  const MakeDirectoriesFailure failed = trainer::make_directories(directory);
  if (failed.error == 0) return;
  if (failed.error == ENOTDIR) {
    throw Error(directory, failed.prefix + " exists but is not a directory",
                "Choose another TensorBoard log directory or remove that file.");
  }
  throw Error(directory,
              "cannot create the TensorBoard log directory " + failed.prefix + ": " + std::strerror(failed.error),
              "Check that its parent is writable.");
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}

void put_uint(std::string& out, int field, uint64_t value) {
  put_tag(out, field, 0);
  put_varint(out, value);
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

std::string event_header(double wall_time, int64_t step) {
  std::string event;
  put_double(event, 1, wall_time);
  if (step != 0) put_uint(event, 2, static_cast<uint64_t>(step));
  return event;
}

std::string file_version_event(double wall_time) {
  std::string event = event_header(wall_time, 0);
  put_bytes(event, 3, "brain.Event:2");
  return event;
}

std::string plugin_summary_event(const std::string& tag, const std::string& plugin_name, const std::string& content,
                                 int64_t step, double wall_time) {
  // SummaryMetadata{plugin_data = 1: PluginData{plugin_name = 1, content = 2}}.
  std::string plugin_data;
  put_bytes(plugin_data, 1, plugin_name);
  put_bytes(plugin_data, 2, content);
  std::string metadata;
  put_bytes(metadata, 1, plugin_data);
  // TensorProto{dtype = 1: DT_FLOAT (1), tensor_shape = 2: TensorShapeProto{dim = 2: Dim{size 0}}}:
  // the shape-(0,) float tensor TensorBoard's own hparams summaries carry.
  std::string dim;  // size 0 is proto3's default: an empty Dim
  std::string shape;
  put_bytes(shape, 2, dim);
  std::string tensor;
  put_uint(tensor, 1, 1);
  put_bytes(tensor, 2, shape);
  // Summary.Value{tag = 1, tensor = 8, metadata = 9}.
  std::string value;
  put_bytes(value, 1, tag);
  put_bytes(value, 8, tensor);
  put_bytes(value, 9, metadata);
  std::string summary;
  put_bytes(summary, 1, value);
  std::string event = event_header(wall_time, step);
  put_bytes(event, 5, summary);
  return event;
}

std::string tfrecord(const std::string& payload) {
  std::string record;
  record.reserve(payload.size() + 16);
  put_le(record, payload.size(), 8);
  put_le(record, masked_crc32c(record.data(), 8), 4);
  record += payload;
  put_le(record, masked_crc32c(payload.data(), payload.size()), 4);
  return record;
}

}  // namespace trainer::formats::wire
