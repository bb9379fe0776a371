#include "trainer/engine/checkpoint/checkpoint_writer.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

#include "trainer/engine/posix_files.h"
#include "trainer/util/atomic_file.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace trainer::engine {
namespace {

constexpr const char* kFix =
    "Check free space and permissions of the checkpoint directory; the previous checkpoint file, if any, is "
    "unchanged.";

}  // namespace

void write_file_durably(const std::string& path, const std::string& bytes, const std::string& noun) {
  const bool checkpoint = noun == "checkpoint";
  const std::string fix =
      checkpoint ? kFix
                 : "Check free space and permissions of the run directory; the earlier file, if any, is unchanged.";
  if (!posix::make_directories(posix::parent(path))) {
    throw Error(path,
                std::string(checkpoint ? "cannot create the checkpoint directory: " : "cannot create its directory: ") +
                    std::strerror(errno),
                fix);
  }
  AtomicWriteOptions options;
  options.noun = noun;
  options.fix = fix;
  write_file_atomically(path, bytes, options);
}

CheckpointWriter::~CheckpointWriter() {
  try {
    wait();
  } catch (const std::exception& error) {
    log::error(std::string("checkpoint write failed: ") + error.what());
  }
}

void CheckpointWriter::write(std::shared_ptr<const std::string> bytes, std::vector<std::string> paths,
                             std::vector<std::string> remove) {
  wait();
  pending_ =
      std::async(std::launch::async, [bytes = std::move(bytes), paths = std::move(paths), remove = std::move(remove)] {
        for (const std::string& path : paths) write_file_durably(path, *bytes);
        for (const std::string& old : remove) posix::remove_file(old);
      });
}

void CheckpointWriter::rethrow_if_failed() {
  if (pending_.valid() && pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) wait();
}

void CheckpointWriter::wait() {
  if (!pending_.valid()) return;
  std::future<void> done = std::move(pending_);
  done.get();
}

}  // namespace trainer::engine
