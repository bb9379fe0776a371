#include "trainer/formats/checkpoint_file.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace trainer::formats;

namespace {

// A checkpoint around a stand-in archive (the container does not look inside it).
std::string make_file(const std::string& archive, const CheckpointSummary& summary, const std::string& config) {
  std::string file = begin_checkpoint_file();
  file += archive;
  finish_checkpoint_file(file, summary, config);
  return file;
}

void write(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "(no error)";
}

CheckpointSummary summary_with_best(const std::string& best_path) {
  CheckpointSummary summary;
  summary.epoch = 3;
  summary.batch_in_epoch = 7;
  summary.global_step = 120;
  summary.precision = "bf16-mixed";
  summary.best = {{0.875, best_path}, {0.5, "/elsewhere/epoch_000.ckpt"}};
  summary.class_names = {"cat", "two\nlines"};
  summary.sample_shape = {3, 224, 160};
  return summary;
}

}  // namespace

TEST_CASE("a checkpoint file reads back its archive, summary and config", "[formats]") {
  trainer::testing::TempDir dir("checkpoint_file_test");
  const std::string archive = std::string("PK\x03\x04", 4) + std::string(5000, 'w');
  const std::string config = "model:\n  name: cnn\nprecision: bf16-mixed\n";
  const std::string bytes = make_file(archive, summary_with_best("/runs/a/checkpoints/epoch_002.ckpt"), config);
  CHECK(bytes.substr(0, 15) == "TRAINER-CKPT 2 ");
  CHECK(bytes[kCheckpointHeaderBytes - 1] == '\n');
  const fs::path path = fs::path(dir.path) / "last.ckpt";
  write(path, bytes);

  const CheckpointFile file = read_checkpoint_file(path.string());
  CHECK_FALSE(file.legacy);
  CHECK(file.payload() == archive);
  CHECK(file.config_yaml == config);
  CHECK(file.summary.epoch == 3);
  CHECK(file.summary.batch_in_epoch == 7);
  CHECK(file.summary.global_step == 120);
  CHECK(file.summary.precision == "bf16-mixed");
  REQUIRE(file.summary.best.size() == 2);
  CHECK(file.summary.best[0].first == 0.875);
  CHECK(file.summary.best[0].second == "/runs/a/checkpoints/epoch_002.ckpt");
  CHECK(file.summary.class_names == std::vector<std::string>{"cat", "two\nlines"});
  CHECK(file.summary.sample_shape == std::vector<int64_t>{3, 224, 160});

  const CheckpointFile summary = read_checkpoint_summary(path.string());
  CHECK(summary.bytes.empty());  // the archive is not read
  CHECK(summary.config_yaml == config);
  CHECK(checkpoint_intact(path.string()));

  // best resolves beside last.ckpt, wherever the run was when it was recorded.
  write(fs::path(dir.path) / "epoch_002.ckpt", "a best file");
  CHECK(resolve_checkpoint_name("best", dir.path) == dir.path + "/epoch_002.ckpt");
  // Deleted: never another file in its place; the error names the best one left.
  fs::remove(fs::path(dir.path) / "epoch_002.ckpt");
  std::string gone = error_of([&] { resolve_checkpoint_name("best", dir.path); });
  CHECK(gone.find("and so are the other best files it recorded. Use ckpt_path=last") != std::string::npos);
  write(fs::path(dir.path) / "epoch_000.ckpt", "the second best");
  gone = error_of([&] { resolve_checkpoint_name("best", dir.path); });
  CHECK(gone.find("ckpt_path=best: the run's best checkpoint, " + dir.path +
                  "/epoch_002.ckpt, is gone; the best "
                  "file left of those it recorded is " +
                  dir.path + "/epoch_000.ckpt") == 0);
  fs::remove(fs::path(dir.path) / "epoch_000.ckpt");
  CHECK(resolve_checkpoint_name("last", dir.path) == dir.path + "/last.ckpt");
  CHECK(resolve_checkpoint_name("x/y.ckpt", dir.path) == "x/y.ckpt");
  // A directory with no checkpoint: best is named as what was asked (not last.ckpt, which was not).
  const std::string empty = dir.path + "/empty";
  fs::create_directories(empty);
  const std::string message = error_of([&] { resolve_checkpoint_name("best", empty); });
  CHECK(message.find("ckpt_path=best: no checkpoint in " + empty + " tells which one is best") == 0);
}

TEST_CASE("a checkpoint's position reads as the log and its file name say it", "[formats]") {
  // The loop's epoch at an epoch's end is the next one: epoch_001.ckpt holds epoch 2, batch 0.
  CHECK(checkpoint_position(2, 0, 10) == "end of epoch 1, step 10");
  CHECK(checkpoint_position(1, 2, 7) == "epoch 1, batch 2, step 7");
  CHECK(checkpoint_position(0, 0, 0) == "step 0");
  CHECK(checkpoint_position(2, -1, 10) == "epoch 2, step 10");  // an older file: not recorded
}

TEST_CASE("damage anywhere in a checkpoint file is caught and names the newest intact file", "[formats]") {
  trainer::testing::TempDir dir("checkpoint_file_test");
  const std::string bytes = make_file(std::string(3000, 'a'), summary_with_best("b"), "seed: 1\n");
  const fs::path older = fs::path(dir.path) / "epoch_000.ckpt";
  const fs::path newer = fs::path(dir.path) / "epoch_001.ckpt";
  const fs::path last = fs::path(dir.path) / "last.ckpt";
  write(older, bytes);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write(newer, bytes);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));

  for (size_t offset : {size_t{20}, kCheckpointHeaderBytes + 10, bytes.size() - 3}) {
    std::string broken = bytes;
    broken[offset] = static_cast<char>(broken[offset] ^ 1);
    write(last, broken);
    INFO("byte " << offset);
    const std::string message = error_of([&] { read_checkpoint_file(last.string()); });
    CHECK(message.find(last.string()) == 0);
    CHECK(message.find("The newest intact checkpoint beside it is " + newer.string()) != std::string::npos);
    CHECK_FALSE(checkpoint_intact(last.string()));
  }
  write(last, bytes.substr(0, bytes.size() - 100));
  CHECK(error_of([&] { read_checkpoint_summary(last.string()); }).find("the checkpoint is truncated") !=
        std::string::npos);
  write(last, "");
  CHECK(error_of([&] { read_checkpoint_file(last.string()); }).find("empty") != std::string::npos);
  write(last, "some text\n");
  CHECK(error_of([&] { read_checkpoint_file(last.string()); }).find("not a trainer checkpoint") != std::string::npos);

  // The newest intact one is skipped once it is damaged too.
  write(newer, bytes.substr(0, 500));
  CHECK(newest_intact_checkpoint(dir.path) == older.string());
  CHECK(newest_intact_checkpoint(dir.path, older.string()) == std::nullopt);
  CHECK(error_of([&] {
          read_checkpoint_file((fs::path(dir.path) / "none.ckpt").string());
        }).find("checkpoint not found") != std::string::npos);
}

TEST_CASE("a bare LibTorch archive (checkpoint format 1) still reads, without checks", "[formats]") {
  trainer::testing::TempDir dir("checkpoint_file_test");
  const fs::path path = fs::path(dir.path) / "old.ckpt";
  const std::string archive = std::string("PK\x03\x04", 4) + "rest of a zip";
  write(path, archive);
  const CheckpointFile file = read_checkpoint_file(path.string());
  CHECK(file.legacy);
  CHECK(file.payload() == archive);
  CHECK(file.config_yaml.empty());
}
