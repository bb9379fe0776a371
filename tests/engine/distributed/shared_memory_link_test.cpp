// The shared-memory link of neighbouring pipeline stages: two ends in two threads of this process
// (each maps the file, as two processes do), messages in order with their tags through rings
// smaller than what is sent (so sends queue), sizes and tags checked, the file's name gone once
// both ends hold it, and a real child process that ends seen as ended, zombie or reaped.
#define CATCH_CONFIG_PREFIX_ALL
#include "trainer/engine/distributed/shared_memory_link.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

namespace {

using trainer::engine::SharedMemoryLink;

std::string unique_name(const std::string& what) {
  return "/trainer-link-test-" + what + "-" + std::to_string(getpid());
}

bool name_exists(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

// What a pipeline stage does while it waits: write what is queued, take the message if it came,
// else sleep on the doorbell read before looking.
at::Tensor receive(SharedMemoryLink& link, const at::IntArrayRef shape, int tag) {
  at::Tensor into = at::empty(shape, at::kFloat);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const uint32_t seen = link.doorbell();
    const bool queued = !link.flush();
    if (link.try_receive(into, tag)) return into;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(30)) throw std::runtime_error("nothing came");
    link.sleep(seen, std::chrono::microseconds(queued ? 200 : 50000));
  }
}

void flush_all(SharedMemoryLink& link) {
  while (true) {
    const uint32_t seen = link.doorbell();
    if (link.flush()) return;
    link.sleep(seen, std::chrono::microseconds(50000));
  }
}

}  // namespace

CATCH_TEST_CASE("a link carries tensors both ways in order, queueing what its rings cannot hold") {
  const std::string name = unique_name("order");
  constexpr int kMessages = 40;
  const size_t bytes = 6 * 5 * sizeof(float);
  std::string why;
  std::unique_ptr<SharedMemoryLink> creator = SharedMemoryLink::create(name, bytes, 2, why);
  CATCH_REQUIRE(creator != nullptr);
  std::unique_ptr<SharedMemoryLink> opener = SharedMemoryLink::open(name, bytes, 2, why);
  CATCH_REQUIRE(opener != nullptr);
  CATCH_CHECK(creator->peer_pid() == getpid());
  creator->unlink_name();
  CATCH_CHECK_FALSE(name_exists(name));
  // The opener answers every message with its values doubled; the creator sends all of them
  // first (the ring has 2 slots: 38 wait in its queue), then reads the answers. The opener starts
  // reading only once all are sent: reading alongside, it could drain the ring as fast as the
  // sends filled it, and the queue was empty at the check (seen once in 2 cores' CI run).
  std::atomic<bool> all_sent{false};
  std::thread answering([&] {
    while (!all_sent.load()) std::this_thread::yield();
    for (int k = 0; k < kMessages; ++k) {
      at::Tensor got = receive(*opener, {6, 5}, 2 * k);
      opener->send(got * 2, 2 * k + 1);
    }
    flush_all(*opener);
  });
  for (int k = 0; k < kMessages; ++k) {
    creator->send(at::arange(30, at::kFloat).reshape({6, 5}) + static_cast<float>(k), 2 * k);
  }
  CATCH_CHECK(creator->has_queued());
  all_sent.store(true);
  for (int k = 0; k < kMessages; ++k) {
    at::Tensor answer = receive(*creator, {6, 5}, 2 * k + 1);
    CATCH_CHECK(answer.equal((at::arange(30, at::kFloat).reshape({6, 5}) + static_cast<float>(k)) * 2));
  }
  answering.join();
  CATCH_CHECK_FALSE(creator->has_queued());
  at::Tensor nothing = at::empty({6, 5}, at::kFloat);
  CATCH_CHECK_FALSE(creator->try_receive(nothing, 0));
  CATCH_CHECK_FALSE(opener->try_receive(nothing, 0));
}

CATCH_TEST_CASE("a link checks sizes and tags, and what it was made for") {
  const std::string name = unique_name("checks");
  std::string why;
  auto creator = SharedMemoryLink::create(name, 64, 3, why);
  CATCH_REQUIRE(creator != nullptr);
  CATCH_CHECK(creator->fits(64));
  CATCH_CHECK_FALSE(creator->fits(65));
  CATCH_CHECK_THROWS_AS(creator->send(at::zeros({17}, at::kFloat), 0), std::logic_error);  // 68 bytes
  // Made for other sizes, or not there: nullptr, and why.
  CATCH_CHECK(SharedMemoryLink::open(name, 128, 3, why) == nullptr);
  CATCH_CHECK(why.find("bytes, not the") != std::string::npos);
  CATCH_CHECK(SharedMemoryLink::open(unique_name("missing"), 64, 3, why) == nullptr);
  CATCH_CHECK(why.find("cannot open /dev/shm/trainer-link-test-missing") != std::string::npos);
  // A second file of the same name is refused (names are per job and rank).
  CATCH_CHECK(SharedMemoryLink::create(name, 64, 3, why) == nullptr);
  CATCH_CHECK(why.find("cannot create") != std::string::npos);
  auto opener = SharedMemoryLink::open(name, 64, 3, why);
  CATCH_REQUIRE(opener != nullptr);
  creator->send(at::ones({16}, at::kFloat), 4);
  at::Tensor into = at::empty({16}, at::kFloat);
  CATCH_CHECK_THROWS_AS(opener->try_receive(into, 6), std::logic_error);  // the schedules disagree
  at::Tensor wrong = at::empty({8}, at::kFloat);
  CATCH_CHECK_THROWS_AS(opener->try_receive(wrong, 4), std::logic_error);
  CATCH_CHECK(opener->try_receive(into, 4));
  CATCH_CHECK(into.equal(at::ones({16}, at::kFloat)));
  // The creator removes the name when it goes.
  CATCH_CHECK(name_exists(name));
  creator.reset();
  CATCH_CHECK_FALSE(name_exists(name));
}

CATCH_TEST_CASE("a link sees its other end's process end, as a zombie and once reaped") {
  const std::string name = unique_name("peer");
  std::string why;
  auto creator = SharedMemoryLink::create(name, 64, 2, why);
  CATCH_REQUIRE(creator != nullptr);
  CATCH_CHECK_FALSE(creator->peer_problem().has_value());  // nobody has opened it yet
  const pid_t child = fork();
  CATCH_REQUIRE(child >= 0);
  if (child == 0) {
    std::string child_why;
    auto opener = SharedMemoryLink::open(name, 64, 2, child_why);
    _exit(opener ? 0 : 3);
  }
  const auto start = std::chrono::steady_clock::now();
  while (creator->peer_pid() != child && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CATCH_REQUIRE(creator->peer_pid() == child);
  // Ended but not yet reaped: a zombie.
  std::optional<std::string> problem;
  while (!(problem = creator->peer_problem()) && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CATCH_REQUIRE(problem.has_value());
  CATCH_CHECK(*problem == "its process (pid " + std::to_string(child) + ") has ended");
  int status = 0;
  CATCH_REQUIRE(waitpid(child, &status, 0) == child);
  CATCH_CHECK(WIFEXITED(status));
  CATCH_CHECK(WEXITSTATUS(status) == 0);
  CATCH_CHECK(creator->peer_problem().has_value());  // reaped: gone
}
