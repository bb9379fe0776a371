#include "trainer/formats/tensorboard_writer.h"

#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/formats/crc32c.h"
#include "trainer/util/error.h"

#include "skip_test.h"
#include "src/formats/tensorboard_event.pb.h"

using trainer::formats::masked_crc32c;
using trainer::formats::TensorBoardWriter;
namespace proto = trainer::formats::proto;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = "/tmp/trainer_tensorboard_test_XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    ::nftw(
        path.c_str(), [](const char* name, const struct stat*, int, struct FTW*) { return ::remove(name); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
};

std::vector<std::string> files_in(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(directory.c_str())) {
    while (dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
  }
  return names;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint64_t get_le(const std::string& bytes, size_t at, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

// Splits TFRecord framing, checking both checksums of every record and that nothing trails.
std::vector<proto::Event> read_events(const std::string& path) {
  const std::string bytes = read_bytes(path);
  std::vector<proto::Event> events;
  size_t at = 0;
  while (at < bytes.size()) {
    REQUIRE(bytes.size() - at >= 12);
    const uint64_t length = get_le(bytes, at, 8);
    CHECK(get_le(bytes, at + 8, 4) == masked_crc32c(bytes.data() + at, 8));
    REQUIRE(bytes.size() - at - 12 >= length + 4);
    const std::string payload = bytes.substr(at + 12, length);
    CHECK(get_le(bytes, at + 12 + length, 4) == masked_crc32c(payload.data(), payload.size()));
    proto::Event event;
    REQUIRE(event.ParseFromString(payload));
    events.push_back(event);
    at += 12 + length + 4;
  }
  CHECK(at == bytes.size());
  return events;
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The Python with tensorboard; the environment variable (even empty) overrides the configured one.
std::string test_python() {
  if (const char* python = std::getenv("TRAINER_TEST_PYTHON")) return python;
  return TRAINER_TEST_PYTHON;
}

}  // namespace

TEST_CASE("the event file is named for TensorBoard and opens with the file version", "[formats]") {
  TempDir temp;
  const std::string directory = temp.path + "/runs/a/tb";  // parents are created
  const double before = TensorBoardWriter::now();
  std::string path;
  {
    TensorBoardWriter writer(directory);
    path = writer.path();
  }
  const std::vector<std::string> names = files_in(directory);
  REQUIRE(names.size() == 1);
  CHECK(path == directory + "/" + names[0]);
  CHECK(names[0].rfind("events.out.tfevents.", 0) == 0);
  CHECK(names[0].find("." + std::to_string(::getpid()) + ".") != std::string::npos);

  const std::vector<proto::Event> events = read_events(path);
  REQUIRE(events.size() == 1);
  CHECK(events[0].what_case() == proto::Event::kFileVersion);
  CHECK(events[0].file_version() == "brain.Event:2");
  CHECK(events[0].wall_time() >= before - 1.0);
  CHECK(events[0].wall_time() <= TensorBoardWriter::now() + 1.0);
}

TEST_CASE("scalars are framed records holding one Summary each", "[formats]") {
  TempDir temp;
  std::string path;
  {
    TensorBoardWriter writer(temp.path);
    path = writer.path();
    writer.add_scalar("train/loss", 0.25, 7, 1700000000.5);
    writer.add_scalars(8,
                       {{"val/loss", 1.0 / 3.0},
                        {"val/acc", std::numeric_limits<double>::quiet_NaN()},
                        {"val/inf", -std::numeric_limits<double>::infinity()}},
                       1700000001.25);
    writer.add_scalars(9, {}, 1.0);  // nothing to write: no record
    writer.add_scalar("train/big_step", -2.5, int64_t{1} << 40);
  }
  const std::vector<proto::Event> events = read_events(path);
  REQUIRE(events.size() == 4);

  CHECK(events[1].step() == 7);
  CHECK(events[1].wall_time() == 1700000000.5);
  REQUIRE(events[1].what_case() == proto::Event::kSummary);
  REQUIRE(events[1].summary().value_size() == 1);
  CHECK(events[1].summary().value(0).tag() == "train/loss");
  CHECK(events[1].summary().value(0).simple_value() == 0.25f);

  CHECK(events[2].step() == 8);
  CHECK(events[2].wall_time() == 1700000001.25);
  REQUIRE(events[2].summary().value_size() == 3);
  CHECK(events[2].summary().value(0).tag() == "val/loss");
  CHECK(events[2].summary().value(0).simple_value() == static_cast<float>(1.0 / 3.0));
  CHECK(events[2].summary().value(1).tag() == "val/acc");
  CHECK(std::isnan(events[2].summary().value(1).simple_value()));
  CHECK(events[2].summary().value(2).simple_value() == -std::numeric_limits<float>::infinity());

  CHECK(events[3].step() == int64_t{1} << 40);
  CHECK(events[3].summary().value(0).simple_value() == -2.5f);
  CHECK(events[3].wall_time() > 1.6e9);  // defaults to now
}

TEST_CASE("flush hands buffered records to the file before close", "[formats]") {
  TempDir temp;
  TensorBoardWriter writer(temp.path);
  writer.add_scalar("train/loss", 1.5, 0);
  writer.flush();
  CHECK(read_events(writer.path()).size() == 2);
  writer.add_scalar("train/loss", 1.25, 1);
  writer.flush(/*durable=*/true);
  CHECK(read_events(writer.path()).size() == 3);
  writer.close();
  writer.close();  // a second close does nothing
  CHECK_THROWS_AS(writer.add_scalar("train/loss", 1.0, 2), trainer::Error);
  CHECK(read_events(writer.path()).size() == 3);
}

TEST_CASE("two writers in one directory write two files", "[formats]") {
  TempDir temp;
  TensorBoardWriter first(temp.path);
  TensorBoardWriter second(temp.path + "/");
  CHECK(first.path() != second.path());
  CHECK(files_in(temp.path).size() == 2);
}

TEST_CASE("a log directory that cannot be created is a trainer::Error", "[formats]") {
  TempDir temp;
  const std::string file = temp.path + "/not_a_directory";
  std::ofstream(file) << "x";
  try {
    TensorBoardWriter writer(file + "/tb");
    FAIL("no error for a log directory below a file");
  } catch (const trainer::Error& error) {
    CHECK(error.problem().find("not_a_directory exists but is not a directory") != std::string::npos);
    CHECK(error.where() == file + "/tb");
  }
}

TEST_CASE("TensorBoard's EventAccumulator reads the scalars back", "[formats][python]") {
  TempDir temp;
  std::map<std::string, std::map<int64_t, double>> written;
  {
    TensorBoardWriter writer(temp.path);
    for (int64_t step = 0; step < 20; ++step) {
      const double loss = 2.0 / static_cast<double>(step + 1) + 0.001 * static_cast<double>(step);
      writer.add_scalar("train/loss", loss, step);
      written["train/loss"][step] = loss;
      if (step % 5 == 4) {
        const double accuracy = 0.1 * static_cast<double>(step) / 2.0;
        writer.add_scalars(step, {{"val/acc", accuracy}, {"val/loss", loss * 1.1}});
        written["val/acc"][step] = accuracy;
        written["val/loss"][step] = loss * 1.1;
      }
    }
    writer.add_scalar("train/loss", std::numeric_limits<double>::quiet_NaN(), 20);
  }
  // The file itself must be sound before TensorBoard is asked about it.
  REQUIRE(files_in(temp.path).size() == 1);

  const std::string python = test_python();
  if (python.empty()) {
    return trainer::testing::skip_test(
        "the TensorBoard read-back: TRAINER_TEST_PYTHON is not set (configure with "
        "-DTRAINER_TEST_PYTHON=<python with tensorboard>)",
        trainer::testing::Skip::unexpected_in_ci);
  }
  const std::string script = std::string(TRAINER_SOURCE_DIR) + "/tests/formats/read_tensorboard.py";
  const std::string command = shell_quote(python) + " " + shell_quote(script) + " " + shell_quote(temp.path);
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  INFO("command: " << command << "\noutput:\n" << output);
  REQUIRE(status == 0);

  // One line per scalar: tag, step, value (Python's repr, so "nan" for NaN).
  std::map<std::string, std::map<int64_t, double>> read;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string tag, value;
    int64_t step = -1;
    REQUIRE((fields >> tag >> step >> value));
    read[tag][step] = std::strtod(value.c_str(), nullptr);
  }
  REQUIRE(read.size() == 3);
  REQUIRE(read["train/loss"].size() == 21);
  CHECK(std::isnan(read["train/loss"][20]));
  read["train/loss"].erase(20);
  for (const auto& [tag, by_step] : written) {
    REQUIRE(read[tag].size() == by_step.size());
    for (const auto& [step, value] : by_step) {
      INFO(tag << " at step " << step);
      REQUIRE(read[tag].count(step) == 1);
      CHECK(static_cast<float>(read[tag][step]) == static_cast<float>(value));
    }
  }
}
