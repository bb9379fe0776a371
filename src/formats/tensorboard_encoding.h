// Protocol-buffer wire format of the few TensorBoard Event fields trainer writes, and their
// TFRecord framing. Encoded by hand: Debian's static protobuf-lite cannot go into the shared
// engine (initial-exec TLS), and the dynamic one would clash with the protobuf the 2.11 wheel's
// libtorch exports. Field numbers come from tensorflow/core/util/event.proto, summary.proto,
// tensor.proto and tensorboard/plugins/hparams/plugin_data.proto; the tests decode our bytes with
// TensorBoard's own code.
#pragma once

#include <cstdint>
#include <string>

namespace trainer::formats::wire {

// mkdir -p for a TensorBoard log directory. Throws trainer::Error naming the part that failed.
void make_directories(const std::string& directory);

void put_varint(std::string& out, uint64_t value);
void put_tag(std::string& out, int field, int wire_type);
void put_uint(std::string& out, int field, uint64_t value);  // varint field (enums, ints)
void put_double(std::string& out, int field, double value);
void put_float(std::string& out, int field, float value);
void put_bytes(std::string& out, int field, const std::string& bytes);  // also strings, messages

// Event{wall_time = 1, step = 2 (left out when 0)}; callers add file_version = 3 or summary = 5.
std::string event_header(double wall_time, int64_t step);
// The first event of every file: file_version "brain.Event:2".
std::string file_version_event(double wall_time);
// An Event holding one Summary.Value of a plugin: tag, SummaryMetadata{plugin_data{plugin_name,
// content}} and the empty float tensor plugins such as hparams carry beside their metadata.
std::string plugin_summary_event(const std::string& tag, const std::string& plugin_name, const std::string& content,
                                 int64_t step, double wall_time);

// TFRecord framing: length (u64 LE), masked CRC-32C of those 8 bytes, payload, masked CRC-32C of
// the payload. Readers verify both checksums.
std::string tfrecord(const std::string& payload);

}  // namespace trainer::formats::wire
