// A failed evaluation takes back the directories it made for its run directory, but only when
// they hold nothing but its own records; whatever else is there keeps them.
#include "trainer/launch/new_directories.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace fs = std::filesystem;
using trainer::launch::NewDirectories;
using trainer::testing::TempDir;

namespace {

void write(const fs::path& path, const std::string& text = "x") {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A TFRecord of `data`, with made-up checksums (holds_no_result reads the lengths only).
std::string tf_record(const std::string& data) {
  std::string record;
  for (int i = 0; i < 8; ++i) record += static_cast<char>((data.size() >> (8 * i)) & 0xff);
  return record + "crc!" + data + "crc!";
}

const std::vector<std::string> kRecords = {".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml",
                                           "trainer.log"};

}  // namespace

TEST_CASE("a run directory made and left with only the job's records is removed with the parents made for it") {
  TempDir dir("new-dirs");
  const fs::path run = fs::path(dir.path) / "run";
  write(run / "checkpoints" / "last.ckpt");
  const fs::path own = run / "eval" / "test_1";
  NewDirectories made(own.string());
  write(own / ".hydra" / "config.yaml");
  write(own / ".hydra" / "hydra.yaml");
  write(own / "trainer.log");
  CHECK(made.remove_if_no_results(kRecords));
  CHECK(!fs::exists(run / "eval"));  // made for this evaluation, empty now
  CHECK(fs::exists(run / "checkpoints" / "last.ckpt"));
}

TEST_CASE("a result, another job's directory or a directory that was there keeps what it is in") {
  TempDir dir("new-dirs");
  const fs::path eval = fs::path(dir.path) / "run" / "eval";
  SECTION("a result beside the records") {
    NewDirectories made((eval / "export_1").string());
    write(eval / "export_1" / "trainer.log");
    write(eval / "export_1" / "last.safetensors");
    CHECK(!made.remove_if_no_results(kRecords));
    CHECK(fs::exists(eval / "export_1" / "last.safetensors"));
  }
  SECTION("loggers opened before the failure hold no result yet: a CSV header, one TensorBoard record") {
    NewDirectories made((eval / "test_1").string());
    write(eval / "test_1" / "trainer.log");
    write(eval / "test_1" / "metrics.csv", "epoch,step\n");
    write(eval / "test_1" / "tensorboard" / "events.out.tfevents.1.host.2.0", tf_record("brain.Event:2"));
    CHECK(made.remove_if_no_results(kRecords));
    CHECK(!fs::exists(eval));
  }
  SECTION("a metrics row or a second TensorBoard record is a result") {
    const bool csv = GENERATE(true, false);
    NewDirectories made((eval / "test_1").string());
    if (csv) {
      write(eval / "test_1" / "metrics.csv", "epoch,step,test/acc\n0,10,0.5\n");
    } else {
      write(eval / "test_1" / "events.out.tfevents.1.host.2.0", tf_record("brain.Event:2") + tf_record("scalar"));
    }
    CHECK(!made.remove_if_no_results(kRecords));
    CHECK(fs::exists(eval / "test_1"));
  }
  SECTION("an empty subdirectory the job made counts as nothing; the shared parent stays for another job") {
    NewDirectories made((eval / "test_1").string());
    write(eval / "test_1" / "trainer.log");
    fs::create_directories(eval / "test_1" / "tensorboard");
    write(eval / "test_2" / "metrics.csv");  // another evaluation's, meanwhile
    CHECK(made.remove_if_no_results(kRecords));
    CHECK(!fs::exists(eval / "test_1"));
    CHECK(fs::exists(eval / "test_2" / "metrics.csv"));
  }
  SECTION("a directory that existed before is never removed") {
    fs::create_directories(eval / "given");
    NewDirectories made((eval / "given").string());
    write(eval / "given" / "trainer.log");
    CHECK(!made.remove_if_no_results(kRecords));
    CHECK(fs::exists(eval / "given" / "trainer.log"));
  }
}
