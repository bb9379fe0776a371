// write_file_durably and CheckpointWriter: the bytes land whole under the final name with no
// temporary file left, a failure names the file and leaves the previous one, and the background
// writer keeps the queued order, deletes what fell out of the top k and hands errors back.
// Engine tests use Catch's prefixed macros (docs/architecture.md).
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/checkpoint/checkpoint_writer.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using trainer::engine::CheckpointWriter;
using trainer::engine::write_file_durably;

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    char pattern[] = "/tmp/checkpoint_writer_test_XXXXXX";
    CATCH_REQUIRE(::mkdtemp(pattern) != nullptr);
    dir = pattern;
  }
  ~Scratch() {
    ::nftw(
        dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 8,
        FTW_DEPTH | FTW_PHYS);
  }
};

bool exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<const std::string> bytes(const std::string& text) { return std::make_shared<const std::string>(text); }

}  // namespace

CATCH_TEST_CASE("write_file_durably creates the directories, replaces the file whole, leaves no temporary") {
  Scratch scratch;
  const std::string path = scratch.dir + "/run/checkpoints/last.ckpt";
  const std::string first(1 << 20, 'a');  // several write() calls' worth on some systems
  write_file_durably(path, first);
  CATCH_CHECK(read(path) == first);
  write_file_durably(path, "short");  // a shorter file: nothing of the old one remains
  CATCH_CHECK(read(path) == "short");
  CATCH_CHECK_FALSE(exists(path + ".tmp"));
  write_file_durably(path, "");
  CATCH_CHECK(exists(path));
  CATCH_CHECK(read(path).empty());
}

CATCH_TEST_CASE("a write that cannot finish names the file and leaves the previous file as it was") {
  Scratch scratch;
  // A checkpoint directory that is a regular file.
  const std::string blocker = scratch.dir + "/checkpoints";
  write_file_durably(blocker, "not a directory");
  try {
    write_file_durably(blocker + "/last.ckpt", "x");
    CATCH_FAIL("no error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK_THAT(error.where(), Catch::Contains(blocker + "/last.ckpt"));
    CATCH_CHECK_THAT(error.problem(), Catch::Contains("cannot create the checkpoint"));
    CATCH_CHECK_THAT(error.fix(), Catch::Contains("previous checkpoint file, if any, is unchanged"));
  }

  // The final name taken by a non-empty directory: the rename fails after the temporary file was
  // written; the temporary is removed and the directory keeps its content.
  const std::string taken = scratch.dir + "/last.ckpt";
  CATCH_REQUIRE(::mkdir(taken.c_str(), 0755) == 0);
  write_file_durably(taken + "/keep", "kept");
  try {
    write_file_durably(taken, "new");
    CATCH_FAIL("no error");
  } catch (const trainer::Error& error) {
    CATCH_CHECK(error.where() == taken);
    CATCH_CHECK_THAT(error.problem(), Catch::Contains("cannot move the new checkpoint into place"));
  }
  CATCH_CHECK_FALSE(exists(taken + ".tmp"));
  CATCH_CHECK(read(taken + "/keep") == "kept");
}

CATCH_TEST_CASE("the writer writes every path in the order queued, then deletes the files that fell out") {
  Scratch scratch;
  const std::string last = scratch.dir + "/last.ckpt";
  const std::string epoch0 = scratch.dir + "/epoch_000.ckpt";
  const std::string epoch1 = scratch.dir + "/epoch_001.ckpt";
  {
    CheckpointWriter writer;
    writer.write(bytes("epoch 0"), {epoch0, last});
    writer.write(bytes("epoch 1"), {epoch1, last}, {epoch0});
    writer.wait();
    CATCH_CHECK(read(last) == "epoch 1");  // the later snapshot, not overtaken by the earlier
    CATCH_CHECK(read(epoch1) == "epoch 1");
    CATCH_CHECK_FALSE(exists(epoch0));
    writer.write(bytes("epoch 2"), {last});
  }  // the destructor waits for the write in flight
  CATCH_CHECK(read(last) == "epoch 2");
  CATCH_CHECK(read(epoch1) == "epoch 1");
}

CATCH_TEST_CASE("a failed background write is rethrown by wait or the next write, then the writer goes on") {
  Scratch scratch;
  const std::string blocker = scratch.dir + "/file";
  write_file_durably(blocker, "x");
  const std::string bad = blocker + "/last.ckpt";
  const std::string good = scratch.dir + "/last.ckpt";

  CheckpointWriter writer;
  writer.write(bytes("a"), {bad});
  CATCH_CHECK_THROWS_AS(writer.wait(), trainer::Error);
  writer.wait();  // reported once

  writer.write(bytes("b"), {bad});
  CATCH_CHECK_THROWS_AS(writer.write(bytes("c"), {good}), trainer::Error);
  CATCH_CHECK_FALSE(exists(good));  // the failed call queued nothing

  writer.write(bytes("d"), {good});
  writer.wait();
  CATCH_CHECK(read(good) == "d");

  // A failure still in flight when the writer goes away is logged; the destructor does not throw
  // (a throw here would end the test process).
  {
    CheckpointWriter doomed;
    doomed.write(bytes("e"), {bad});
  }
  CATCH_CHECK_FALSE(exists(bad));
}
