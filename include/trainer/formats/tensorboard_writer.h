#pragma once
// Writes scalars as a TensorBoard event file (TFRecord-framed Event protos), so `tensorboard
// --logdir` shows a run's curves without TensorFlow or torch. No protobuf type appears here: the
// PyPI torch wheel's libtorch exports its own protobuf, which our callers must never see.

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace trainer::formats {

class TensorBoardWriter {
 public:
  // Creates `directory` (with parents) and a new `events.out.tfevents.<seconds>.<host>.<pid>.<n>`
  // in it, starting with the file-version record TensorBoard expects. Throws trainer::Error.
  explicit TensorBoardWriter(const std::string& directory);
  // Flushes and closes; an error here is logged, not thrown (call close() to see it).
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // Seconds since the Unix epoch, the wall_time TensorBoard plots "relative" and "wall" against.
  static double now();

  // Values are stored as float, as TensorBoard's simple_value; NaN and infinities are kept.
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time = now());
  // One event holding several scalars of the same step.
  void add_scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values, double wall_time = now());

  // Hands buffered records to the OS (TensorBoard polls the file); `durable` also fsyncs.
  void flush(bool durable = false);
  // Flushes and closes; later calls do nothing. Throws trainer::Error if the data did not land.
  void close();

  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& payload);

  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace trainer::formats
