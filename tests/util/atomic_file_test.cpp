#include "trainer/util/atomic_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

namespace {

// A temporary directory, POSIX only like the writer itself.
struct Scratch {
  std::string dir;
  Scratch() {
    char pattern[] = "/tmp/atomic_file_test.XXXXXX";
    dir = ::mkdtemp(pattern);
  }
  ~Scratch() {
    ::chmod(dir.c_str(), 0755);
    for (const std::string& name : names()) ::unlink((dir + "/" + name).c_str());
    ::rmdir(dir.c_str());
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") out.push_back(name);
      }
      ::closedir(d);
    }
    return out;
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE(
    "write_file_atomically writes the bytes, replaces an existing file whole, leaves no "
    "temporary") {
  Scratch scratch;
  const std::string path = scratch.dir + "/config.yaml";
  const std::string big(1 << 20, 'a');
  trainer::write_file_atomically(path, big);
  CHECK(read(path) == big);
  trainer::write_file_atomically(path, "short");
  CHECK(read(path) == "short");
  trainer::AtomicWriteOptions quick;
  quick.durable = false;
  trainer::write_file_atomically(path, "", quick);
  CHECK(read(path).empty());
  CHECK(scratch.names() == std::vector<std::string>{"config.yaml"});
}

TEST_CASE("AtomicFile appends pieces; the final name appears only at commit") {
  Scratch scratch;
  const std::string path = scratch.dir + "/model.safetensors";
  {
    trainer::AtomicFile file(path);
    file.append("head");
    file.append(std::string(3, 'x'));
    CHECK(::access(path.c_str(), F_OK) != 0);
    file.commit();
  }
  CHECK(read(path) == "headxxx");
  {
    trainer::AtomicFile abandoned(path);  // an exception between open and commit
    abandoned.append("half");
  }
  CHECK(read(path) == "headxxx");
  CHECK(scratch.names() == std::vector<std::string>{"model.safetensors"});
}

TEST_CASE("a write into a missing directory names the path and the system's reason") {
  Scratch scratch;
  const std::string path = scratch.dir + "/missing/file.txt";
  try {
    trainer::AtomicWriteOptions options;
    options.noun = "checkpoint";
    options.fix = "Check the run.";
    trainer::write_file_atomically(path, "x", options);
    FAIL("no error");
  } catch (const trainer::Error& error) {
    CHECK(error.where() == path);
    CHECK_THAT(error.problem(),
               Catch::Contains("cannot create the checkpoint") && Catch::Contains("No such file or directory"));
    CHECK(error.fix() == "Check the run.");
  }
  CHECK(scratch.names().empty());
}

TEST_CASE("a failed rename removes the temporary file and keeps what was there") {
  Scratch scratch;
  const std::string taken = scratch.dir + "/taken";
  REQUIRE(::mkdir(taken.c_str(), 0755) == 0);
  trainer::write_file_atomically(taken + "/keep", "kept");
  try {
    trainer::write_file_atomically(taken, "new");
    FAIL("no error");
  } catch (const trainer::Error& error) {
    CHECK(error.where() == taken);
    CHECK_THAT(error.problem(), Catch::Contains("cannot move the new file into place"));
  }
  CHECK(scratch.names() == std::vector<std::string>{"taken"});
  CHECK(read(taken + "/keep") == "kept");
  ::unlink((taken + "/keep").c_str());
  ::rmdir(taken.c_str());
}

TEST_CASE("a directory that cannot take the file is refused and left as it was") {
  Scratch scratch;
  const std::string blocker = scratch.dir + "/not_a_directory";
  trainer::write_file_atomically(blocker, "file");
  CHECK_THROWS_AS(trainer::write_file_atomically(blocker + "/file.txt", "x"), trainer::Error);
  CHECK(scratch.names() == std::vector<std::string>{"not_a_directory"});
  if (::geteuid() != 0) {  // root writes into read-only directories
    REQUIRE(::chmod(scratch.dir.c_str(), 0555) == 0);
    CHECK_THROWS_AS(trainer::write_file_atomically(scratch.dir + "/file.txt", "x"), trainer::Error);
    ::chmod(scratch.dir.c_str(), 0755);
    CHECK(scratch.names() == std::vector<std::string>{"not_a_directory"});
  }
}
